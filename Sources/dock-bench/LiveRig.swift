#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
// FoundationEssentials (files, JSONDecoder), not Foundation: no ICU in the package's one binary (issue 26).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import DockClient

/// dock-sim on a pty and the real dockd attached to it through a temporary configuration, the way
/// an installed system runs them: what `dock-bench live` drives when it is not given a socket.
final class LiveRig {
    let socketPath: String
    private let directory: String
    private var sim: ChildProcess?
    private var dockd: ChildProcess?
    /// dock-sim reads commands from stdin and keeps running at its end; held open all the same.
    private let simInput: (read: Int32, write: Int32)

    /// Starts both programs from `binaries` and waits until dockd accepts connections.
    init(binaries: String, seed: UInt64, handheld: Bool) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("dock-bench-live-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/dockd.sock"
        let link = directory + "/stand"

        guard let simInput = closeOnExecPipe(), let simOutput = closeOnExecPipe() else { throw LiveFailure(description: "cannot make a pipe") }
        self.simInput = simInput
        let simLog = try Self.logFile(directory + "/dock-sim.log")
        sim = try start(binaries + "/dock-sim", ["--pty", "--link", link, "--seed", String(seed)] + (handheld ? ["--handheld"] : []),
                        input: simInput.read, output: simOutput.write, error: simLog)
        [simInput.read, simOutput.write, simLog].forEach { _ = close($0) }
        let first = Self.firstLine(of: simOutput.read)
        close(simOutput.read)
        guard first.hasPrefix("pty ") else { stop(); throw LiveFailure(description: "dock-sim did not offer a pty (it said \(first.debugDescription))") }
        try waitFor("dock-sim's link", seconds: 5, watching: [sim]) { FileManager.default.fileExists(atPath: link) }

        let configuration = directory + "/dockd.conf"
        try """
            [daemon]
            socket = "\(socketPath)"
            socket_group = ""

            [hotplug]
            enabled = false

            [[device]]
            path = "\(link)"

            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        // dockd's stdin and stdout: dock-bench's own, as a Process left unset gives them.
        let dockdLog = try Self.logFile(directory + "/dockd.log")
        dockd = try start(binaries + "/dockd", ["--config", configuration], input: STDIN_FILENO, output: STDOUT_FILENO, error: dockdLog)
        close(dockdLog)
        try waitFor("dockd's socket", seconds: 10, watching: [sim, dockd]) { (try? APIClient(socketPath: self.socketPath)) != nil }
    }

    deinit { close(simInput.write) }

    var dockdIsRunning: Bool { dockd?.isRunning ?? false }
    var dockdProcessID: Int32 { dockd?.processIdentifier ?? 0 }

    /// SIGTERM to both (dockd first: it stops the motors), SIGKILL for whoever lingers past 5 s.
    func stop() {
        for process in [dockd, sim].compactMap({ $0 }) where process.isRunning {
            process.signal(SIGTERM)
            let deadline = monotonicSeconds() + 5
            while process.isRunning, monotonicSeconds() < deadline { usleep(20_000) }
            if process.isRunning { process.signal(SIGKILL); process.waitUntilExit() }
        }
    }

    /// Removes the temporary directory (its logs included): after a run that went well.
    func removeFiles() { try? FileManager.default.removeItem(atPath: directory) }

    /// Says where the logs are: after a run that did not go well.
    func pointToLogs() {
        var text = "dock-bench: dockd's and dock-sim's logs are in \(directory)\n"
        _ = text.withUTF8 { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    private func start(_ path: String, _ arguments: [String], input: Int32, output: Int32, error: Int32) throws -> ChildProcess {
        do { return try ChildProcess(path: path, arguments: arguments, input: input, output: output, error: error) } catch {
            stop()
            throw LiveFailure(description: "\(error) (see --binaries)")
        }
    }

    /// Polls `done` until it holds; gives up when time runs out or a watched process has exited.
    private func waitFor(_ what: String, seconds: Double, watching processes: [ChildProcess?], _ done: () -> Bool) throws {
        let deadline = monotonicSeconds() + seconds
        while !done() {
            guard monotonicSeconds() < deadline, processes.allSatisfy({ $0?.isRunning ?? false }) else {
                stop()
                throw LiveFailure(description: "gave up waiting for \(what) after \(seconds) s or an exit (logs in \(directory))")
            }
            usleep(20_000)
        }
    }

    private static func logFile(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw LiveFailure(description: "cannot create \(path)") }
        return descriptor
    }

    /// Bytes up to the first newline (or the end of the stream).
    private static func firstLine(of descriptor: Int32) -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(descriptor, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        return String(decoding: line, as: UTF8.self)
    }
}
