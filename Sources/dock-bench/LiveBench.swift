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
import ArgumentParser
import DockAPI
import DockClient
import DockJSON
import DockSim
import VirtualTime

/// `dock-bench live`: a scenario in real time through the real daemon. dock-sim plays the stand on
/// a pty, dockd owns it, and the scene simulator plays the camera app: it renders the detector's
/// frames from the stand's reported angles and sends them over the API socket. The same scenario
/// also runs in virtual time, so the table shows what the process boundary, the socket and the
/// wall clock cost.
struct LiveBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "One scenario in real time: dock-sim + the real dockd, the scene feeding observations over the socket.")

    @Argument(help: "The scenario file (Benchmarks/Scenarios/*.json).") var file: String
    @Option(help: "Seed, added to the scenario's own.") var seed: UInt64 = 1
    @Option(help: "Folder of dock-sim and dockd (default: dock-bench's own).") var binaries: String?
    @Option(help: ArgumentHelp("Use the dockd listening on this socket instead of starting both (its stand a dock-sim, --handheld for a hand-held scenario).",
                               valueName: "path"))
    var socket: String?
    @Option(help: ArgumentHelp("With --socket: the stand to run on (its id); needed when several stands are connected to that dockd.",
                               valueName: "id"))
    var stand: String?
    @Option(help: ArgumentHelp("Write the figures as JSON to this file.", valueName: "path")) var json: String?
    @Option(help: ArgumentHelp("Write an SVG plot of the camera's aim, live and in virtual time.", valueName: "path")) var plot: String?

    func run() throws {
        // dockd going away must be a write error here, not a signal that ends the benchmark.
        signal(SIGPIPE, SIG_IGN)
        let scenario = try ScenarioFiles.load(file)
        let virtual = try runScene(scenario, seed: seed, kind: .ours, record: true)

        let rig = try socket == nil ? LiveRig(binaries: binaries ?? Self.ownDirectory, seed: seed, handheld: scenario.handheld) : nil
        defer { rig?.stop() }
        let socketPath = socket ?? rig!.socketPath
        let live: (record: LiveRecord, metrics: SceneMetrics, trace: SceneTrace)
        var serving = false
        do {
            let client = try APIClient(socketPath: socketPath)
            let scene = LiveScene(scenario: scenario, seed: seed, client: client, stand: try Self.stand(stand, of: client))
            try scene.prepare()
            let record = try scene.run()
            let evaluated = scene.evaluate(record)
            live = (record, evaluated.metrics, evaluated.trace)
            serving = (try? client.call(.stats)) != nil && (rig?.dockdIsRunning ?? true)
        } catch {
            rig?.pointToLogs()
            throw error
        }
        rig?.stop()
        if serving { rig?.removeFiles() } else { rig?.pointToLogs() }

        let r = live.record
        let wall = scenario.duration
        print("Live run of \(scenario.name), seed \(seed): \(String(cFormat: "%.0f", wall)) s of wall time through dockd "
              + (rig.map { "(pid \($0.dockdProcessID)) and dock-sim on a pty" } ?? "at \(socketPath)") + ".")
        let refused = r.refused.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
        print("Observations: \(r.framesSent) frames sent (\(String(cFormat: "%.1f", Double(r.framesSent) / wall)) Hz), "
              + "refused: \(refused.isEmpty ? "none" : refused), skipped (loop late): \(r.framesSkipped); "
              + "motion.state: \(r.motionReports) (\(String(cFormat: "%.0f", Double(r.motionReports) / wall)) Hz); dockd "
              + (serving ? "still serving." : "**not serving**."))
        print("")
        print(SceneTable.header(first: "run"))
        print(SceneTable.row("virtual time", virtual.metrics))
        print(SceneTable.row("live", live.metrics))
        print("")
        print("Both rows run dockd's engine with its shipped settings: the virtual one in virtual time over the simulated stand,")
        print("the live one in the real dockd over a pty. Live jerk, path ratio and idle jitter come from the stand's reported")
        print("encoder angles (noise, quantization), virtual ones from the true shaft angles.")

        if let json {
            let figures: JSONValue = [
                "scenario": .string(scenario.name), "seed": JSONValue(Double(seed)), "duration": JSONValue(wall),
                "dockd_serving": .bool(serving), "frames_sent": JSONValue(Double(r.framesSent)),
                "frames_skipped": JSONValue(Double(r.framesSkipped)), "motion_reports": JSONValue(Double(r.motionReports)),
                "refused": .object(Dictionary(uniqueKeysWithValues: r.refused.map { (String($0.key), JSONValue(Double($0.value))) })),
                "live": SceneTable.json(live.metrics), "virtual": SceneTable.json(virtual.metrics),
            ]
            var text = JSONBytes()
            text.writeJSON(figures)
            try Data(text.bytes).write(to: URL(fileURLWithPath: json))
        }
        if let plot {
            try scenePlot(scenario: scenario, series: [.init("live", live.trace, .blue), .init("virtual time", virtual.trace, .green)])
                .write(toFile: plot, atomically: true, encoding: .utf8)
        }
        if !serving { throw ExitCode.failure }
    }

    /// The stand to run on: `asked` once it is connected, else the one connected (waiting up to
    /// 10 s for one). Several connected and none asked for is a usage error, as in dockctl: two
    /// stands' motion streams mixed into one path made nonsense figures.
    private static func stand(_ asked: String?, of client: APIClient) throws -> String {
        let deadline = monotonicSeconds() + 10
        while true {
            let connected = (try client.call(.standsList).array ?? []).filter { $0["state"]?.string == "connected" }.compactMap { $0["id"]?.string }
            if let asked, connected.contains(asked) { return asked }
            if asked == nil, connected.count == 1 { return connected[0] }
            if asked == nil, connected.count > 1 {
                throw ValidationError("\(connected.count) stands are connected (\(connected.joined(separator: ", "))): name one with --stand")
            }
            guard monotonicSeconds() < deadline else {
                throw LiveFailure(description: "\(asked.map { "stand \($0) not" } ?? "no stand") connected to dockd within 10 s"
                                  + (connected.isEmpty ? "" : " (connected: \(connected.joined(separator: ", ")))"))
            }
            usleep(50_000)
        }
    }

    /// The folder this executable is in: where `swift build` and `make install` put its siblings.
    private static var ownDirectory: String {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return "." }
        return URL(fileURLWithPath: executable).deletingLastPathComponent().path
    }
}

/// Why a live run could not go on.
struct LiveFailure: Error, CustomStringConvertible {
    let description: String
}
