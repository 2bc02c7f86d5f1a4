import DockClient
import Foundation

/// dock-sim on a pty and the real dockd attached to it through a temporary configuration, the way
/// an installed system runs them: what `dock-bench live` drives when it is not given a socket.
final class LiveRig {
    let socketPath: String
    private let directory: String
    private let sim = Process()
    private let dockd = Process()
    /// dock-sim reads commands from stdin and keeps running at its end; held open all the same.
    private let simInput = Pipe()

    /// Starts both programs from `binaries` and waits until dockd accepts connections.
    init(binaries: String, seed: UInt64, handheld: Bool) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("dock-bench-live-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/dockd.sock"
        let link = directory + "/stand"

        sim.executableURL = URL(fileURLWithPath: binaries + "/dock-sim")
        sim.arguments = ["--pty", "--link", link, "--seed", String(seed)] + (handheld ? ["--handheld"] : [])
        let simOutput = Pipe()
        sim.standardInput = simInput
        sim.standardOutput = simOutput
        sim.standardError = try Self.logFile(directory + "/dock-sim.log")
        try run(sim, "dock-sim")
        let first = Self.firstLine(of: simOutput.fileHandleForReading)
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
        dockd.executableURL = URL(fileURLWithPath: binaries + "/dockd")
        dockd.arguments = ["--config", configuration]
        dockd.standardError = try Self.logFile(directory + "/dockd.log")
        try run(dockd, "dockd")
        try waitFor("dockd's socket", seconds: 10, watching: [sim, dockd]) { (try? APIClient(socketPath: self.socketPath)) != nil }
    }

    var dockdIsRunning: Bool { dockd.isRunning }
    var dockdProcessID: Int32 { dockd.processIdentifier }

    /// SIGTERM to both (dockd first: it stops the motors), SIGKILL for whoever lingers past 5 s.
    func stop() {
        for process in [dockd, sim] where process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        }
    }

    /// Removes the temporary directory (its logs included): after a run that went well.
    func removeFiles() { try? FileManager.default.removeItem(atPath: directory) }

    /// Says where the logs are: after a run that did not go well.
    func pointToLogs() {
        FileHandle.standardError.write(Data("dock-bench: dockd's and dock-sim's logs are in \(directory)\n".utf8))
    }

    private func run(_ process: Process, _ name: String) throws {
        do { try process.run() } catch {
            stop()
            throw LiveFailure(description: "cannot start \(name) at \(process.executableURL?.path ?? "?"): \(error.localizedDescription) (see --binaries)")
        }
    }

    /// Polls `done` until it holds; gives up when time runs out or a watched process has exited.
    private func waitFor(_ what: String, seconds: Double, watching processes: [Process], _ done: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !done() {
            guard Date() < deadline, processes.allSatisfy(\.isRunning) else {
                stop()
                throw LiveFailure(description: "gave up waiting for \(what) after \(seconds) s or an exit (logs in \(directory))")
            }
            usleep(20_000)
        }
    }

    private static func logFile(_ path: String) throws -> FileHandle {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw LiveFailure(description: "cannot create \(path)")
        }
        return handle
    }

    /// Bytes up to the first newline (or the end of the stream).
    private static func firstLine(of handle: FileHandle) -> String {
        var line = Data()
        while let byte = try? handle.read(upToCount: 1), let b = byte.first, b != UInt8(ascii: "\n") { line.append(b) }
        return String(decoding: line, as: UTF8.self)
    }
}
