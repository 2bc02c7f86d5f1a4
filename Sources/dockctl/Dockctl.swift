import ArgumentParser
import DockClient
import DockVersion
import Foundation

@main
struct Dockctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dockctl",
        abstract: "Control dockd: stands, motion, animations, tracking and events.",
        version: DockVersion.string,
        subcommands: [Status.self, List.self, Watch.self, Track.self, Move.self, Orient.self, Limits.self,
                      Animate.self, Stop.self, Battery.self, Events.self, Attach.self, Detach.self,
                      Framing.self, ROI.self, Select.self, Subjects.self])
}

/// Options every subcommand shares.
struct Connection: ParsableArguments {
    @Option(name: .long, help: "dockd's API socket.")
    var socket: String = ProcessInfo.processInfo.environment["DOCKD_SOCKET"] ?? "/run/dockd/dockd.sock"

    @Option(name: .long, help: "The stand's id (serial number); default: the connected stand.")
    var stand: String?

    @Flag(name: .long, help: "Print raw JSON.")
    var json = false

    func client() throws -> APIClient {
        do { return try APIClient(socketPath: socket) } catch let failure as APIClient.Failure { throw Fail(failure) }
    }

    func params(_ extra: [String: Any] = [:]) -> [String: Any] {
        var p = extra
        if let stand { p["stand"] = stand }
        return p
    }

    func call(_ method: String, _ params: [String: Any] = [:]) throws -> Any {
        do { return try client().call(method, self.params(params)) } catch let failure as APIClient.Failure { throw Fail(failure) }
    }
}

/// An APIClient failure as a message on stderr and the exit code it carries.
struct Fail: Error, CustomStringConvertible {
    let failure: APIClient.Failure
    init(_ failure: APIClient.Failure) { self.failure = failure }
    var description: String { failure.description }
}

func printJSON(_ value: Any) {
    if let data = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed]) {
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}

func run(_ body: () throws -> Void) throws {
    do { try body() } catch let fail as Fail {
        FileHandle.standardError.write(Data("dockctl: \(fail.description)\n".utf8))
        throw ExitCode(fail.failure.exitCode)
    }
}
