#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import DockClient
import DockVersion

struct Dockctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dockctl",
        abstract: "Control dockd: stands, motion, animations, tracking and events.",
        discussion: """
            What a command changes for a stand (tracking off, framing, region of interest, selection, \
            limits) is held by its connection to dockd and reverts the moment dockctl exits, as it \
            does for any client (the lease ends). --hold keeps the connection, and the change, until \
            Ctrl-C or SIGTERM.

            With several stands connected, a command that changes one needs --stand; one that reads \
            picks the first connected and says which on stderr. --json prints one compact JSON object \
            per line, for every command.

            Exit status: 0 done; 1 other error; 2 refused by dockd (a value out of range or the limits, \
            an unknown name, something the stand cannot do, too soon after the last call); 3 busy \
            (another client holds the stand); 4 motion failed (or, with --wait, did not complete); \
            10 no such stand, or none connected; 64 usage (bad options, or several stands and no \
            --stand); 69 dockd is not running, or closed the connection; 76 dockd sent something \
            that is not JSON-RPC; 77 permission denied (not in group dock, or an administrator's \
            command).

            Environment: DOCKD_SOCKET, the API socket (default /run/dockd/dockd.sock).
            """,
        version: DockVersion.string,
        subcommands: [Status.self, List.self, Diag.self, Watch.self, Track.self, Move.self, Orient.self, Limits.self,
                      Animate.self, Stop.self, Resume.self, Battery.self, Events.self, Attach.self, Detach.self, Discover.self,
                      Framing.self, ROI.self, Select.self, Subjects.self, Defaults.self, PresetCommand.self, LostPolicy.self, SweepCommand.self,
                      TourCommand.self, Call.self])
}

/// Options every subcommand shares: where dockd is, how to print.
struct DaemonConnection: ParsableArguments {
    @Option(name: .long, help: "dockd's API socket.")
    var socket: String = getenv("DOCKD_SOCKET").map { String(cString: $0) } ?? APIClient.defaultSocketPath

    @Flag(name: .long, help: "Print JSON: one compact object per line.")
    var json = false

    func client() throws -> APIClient {
        do { return try APIClient(socketPath: socket) } catch let failure as APIClient.Failure { throw Fail(failure) }
    }
}

/// The options of a command about a stand: dockd's, and which stand.
struct Connection: ParsableArguments {
    @OptionGroup var daemon: DaemonConnection

    @Option(name: .long, help: "The stand's id (serial number); default: the connected stand.")
    var stand: String?

    @Flag(name: .long, help: "Take the stand from another client that controls it (a command that changes the stand).")
    var force = false

    var socket: String { daemon.socket }
    var json: Bool { daemon.json }
    func client() throws -> APIClient {
        let client = try daemon.client()
        client.takesOver = force
        return client
    }
}

/// `--hold`, for the commands whose change the lease holds.
struct HoldOption: ParsableArguments {
    @Flag(name: .long, help: "Keep the connection, and with it this change, until Ctrl-C or SIGTERM (without it the change reverts as dockctl exits).")
    var hold = false
}

/// A failure as a message on stderr and the exit status of its class (ExitStatus).
struct Fail: Error, CustomStringConvertible {
    let description: String
    let exitCode: Int32
    init(_ failure: APIClient.Failure) { description = failure.description; exitCode = failure.exitCode }
    init(_ description: String, exitCode: Int32) { self.description = description; self.exitCode = exitCode }
}

/// Runs a command's body: a failure is printed on stderr and exits with its status.
func run(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as APIClient.Failure {
        throw report(Fail(failure))
    } catch let fail as Fail {
        throw report(fail)
    }
}

private func report(_ fail: Fail) -> ExitCode {
    // dockd's "busy" says how an API client takes over; dockctl's way is an option.
    note(fail.exitCode == ExitStatus.busy ? fail.description.replacing("pass \"force\": true", with: "--force") : fail.description)
    return ExitCode(fail.exitCode)
}
