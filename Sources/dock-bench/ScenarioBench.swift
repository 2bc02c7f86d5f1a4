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
import DockSim
import VirtualTime
import StandEngine

/// The tracking benchmark: scenario files through the scene simulator and dockd's engine (the code
/// and settings dockd runs), ours against a grid-tuned naive client and a delayed oracle, in
/// virtual time.
struct ScenarioBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "Auto-tracking scenarios through dockd's engine in virtual time: ours vs naive vs delayed oracle.")

    @Flag(help: "Run every Benchmarks/Scenarios/*.json (under --scenarios).") var suite = false
    @Option(help: "Folder of the suite's scenario files.") var scenarios = "Benchmarks/Scenarios"
    @Argument(help: "Scenario files.") var files: [String] = []
    @Option(help: "Seed, added to each scenario's own.") var seed: UInt64 = 1
    @Option(help: "Write one SVG plot per scenario into this folder.") var plots: String?
    @Option(help: "Write one CSV per scenario and controller (time, camera and ideal aim, rad) into this folder.") var traces: String?
    @Option(help: "Write the Markdown report to this file too.") var markdown: String?
    @Flag(help: "One naive combination instead of the grid (for quick runs).") var quick = false
    @Option(help: "The driver the scenarios run through: native (the simulated stand; ours, naive and oracle) or onvif (ours through the ONVIF driver and an emulated camera, for each --motion, beside the native stand at the camera's speeds: issue 24's target).")
    var driver = "native"
    @Option(name: .customLong("motion"), help: "With --driver onvif: the only moves the emulated camera offers, continuous, absolute or relative (repeatable: one run of the suite each; default all three in turn).")
    var motions: [String] = []
    @Option(name: .customLong("option"), help: "With --driver onvif: a driver option KEY=VALUE (repeatable), as in the config file (`dockd --list-drivers` lists them); default the driver's, which fit the emulated camera.")
    var options: [String] = []
    @Option(help: "With --driver onvif: ms the emulated camera takes to act on and answer each request.") var latency = 3.0
    @Flag(help: "With --driver onvif: the emulated camera lists no pan/tilt speed space (its absolute and relative moves go at its top speed).")
    var noSpeedSpace = false

    func run() throws {
        var paths = files
        if suite { paths += try ScenarioFiles.suite(in: scenarios) }
        guard !paths.isEmpty else { throw ValidationError("give scenario files or --suite") }
        let loaded = try paths.map(ScenarioFiles.load)
        switch driver {
        case "native": break
        case "onvif":
            let models = try motions.map { name in
                guard let model = ONVIFMotionModel(rawValue: name) else { throw ValidationError("--motion \(name): continuous, absolute or relative") }
                return model
            }
            var options: [String: String] = [:]
            for item in self.options {
                guard let eq = item.firstIndex(of: "=") else { throw ValidationError("--option \(item): expected KEY=VALUE") }
                options[String(item[..<eq])] = String(item[item.index(after: eq)...])
            }
            guard latency >= 0 else { throw ValidationError("--latency: at least 0 ms") }
            guard plots == nil, traces == nil else { throw ValidationError("--plots and --traces are the native comparison's, not --driver onvif's") }
            let suite = ONVIFSuite(motions: models.isEmpty ? ONVIFMotionModel.allCases : models, options: options, latency: UInt64(latency * 1000), speedSpace: !noSpeedSpace)
            let out = try suite.run(loaded, seed: seed)
            if let markdown { try (out.joined(separator: "\n") + "\n").write(toFile: markdown, atomically: true, encoding: .utf8) }
            return
        default:
            throw ValidationError("--driver \(driver): native or onvif")
        }
        let wallStart = monotonicSeconds(), cpuStart = cpuSeconds()
        var virtualSeconds = 0.0

        // The naive baseline's grid: the combination with the lowest geometric mean of RMS errors wins.
        let grid: [(Double, Double)] = quick ? [(3, 0.03)] : [1.5, 3, 6].flatMap { k in [0.0, 0.03, 0.08].map { (k, $0) } }
        var naiveRuns: [[SceneRunResult]] = []
        var gridLines: [String] = []
        for (k, dz) in grid {
            let runs = try loaded.map { try runScene($0, seed: seed, kind: .naive(gain: k, deadZone: dz), record: true) }
            virtualSeconds += loaded.reduce(0) { $0 + $1.duration }
            naiveRuns.append(runs)
            gridLines.append(String(cFormat: "k=%.1f/s dz=%.0f%%: %.2f %%", k, dz * 100, geometricMean(runs.map(\.metrics.rmsError)) * 100))
        }
        let bestIndex = naiveRuns.indices.min {
            geometricMean(naiveRuns[$0].map(\.metrics.rmsError)) < geometricMean(naiveRuns[$1].map(\.metrics.rmsError))
        }!
        let naive = naiveRuns[bestIndex]
        let ours = try loaded.map { try runScene($0, seed: seed, kind: .ours, record: true) }
        let oracle = try loaded.map { try runScene($0, seed: seed, kind: .oracle, record: true) }
        virtualSeconds += 2 * loaded.reduce(0) { $0 + $1.duration }
        let wall = monotonicSeconds() - wallStart, cpu = cpuSeconds() - cpuStart

        var out: [String] = []
        func line(_ s: String) { out.append(s); print(s) }
        line("Scenario suite, seed \(seed): \(loaded.count) scenarios, \(String(cFormat: "%.0f", virtualSeconds)) virtual s in "
             + String(cFormat: "%.1f s wall / %.1f s CPU (%.0f× real time).", wall, cpu, virtualSeconds / wall))
        line("Every run goes through dockd's engine (StandEngine, TrackingSettings.shipped, NativeDriver) and the simulated stand, over the wire protocol.")
        line("ours: system tracking fed the detector's frames (tracking.observe). naive: the app centres the biggest face with motion.velocity,")
        line(String(cFormat: "best of a %d-point grid: k = %.1f /s, dead zone %.0f %% of the FOV (grid, geometric mean RMS: %@).",
                    grid.count, grid[bestIndex].0, grid[bestIndex].1 * 100, gridLines.joined(separator: "; ")))
        line("delayed oracle: the true framing aim and its rate, as late as the detector (its latency and frame rate), followed with dockd's control law")
        line("without dead band, smoothing or trailing, through motion.velocity.")
        line("")
        line("Each cell: ours / naive / oracle. Errors in % of the field of view from the framing point (API.md: the face on the ROI's centre line, 35 % down).")
        line("")
        line("| scenario | in frame % | in ROI % | RMS err % | ours÷oracle | ours÷naive | P95 err % | settle s | overshoot % | RMS jerk rad/s³ | path ratio | idle jitter mrad/s | reacquire s | switches |")
        line("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for (i, s) in loaded.enumerated() {
            let (o, n, r) = (ours[i].metrics, naive[i].metrics, oracle[i].metrics)
            func cell(_ f: (SceneMetrics) -> Double, _ format: String) -> String {
                [o, n, r].map { String(cFormat: format, f($0)) }.joined(separator: " / ")
            }
            func reacquire(_ m: SceneMetrics) -> String { m.reacquireTime.map { String(cFormat: "%.2f", $0) } ?? "–" }
            line("| \(s.name)\(s.withinLimits ? "" : " †") | \(cell({ $0.inFrame * 100 }, "%.1f")) | \(cell({ $0.inRegion * 100 }, "%.1f")) | "
                 + "\(cell({ $0.rmsError * 100 }, "%.2f")) | " + String(cFormat: "%.2f | %.2f", o.rmsError / r.rmsError, o.rmsError / n.rmsError)
                 + " | \(cell({ $0.p95Error * 100 }, "%.2f")) | \(cell({ $0.settleTime }, "%.2f")) | "
                 + "\(cell({ $0.overshoot * 100 }, "%.1f")) | \(cell({ $0.rmsJerk }, "%.0f")) | \(cell({ $0.pathRatio }, "%.2f")) | "
                 + "\(cell({ $0.idleJitter * 1000 }, "%.1f")) | \(reacquire(o)) / \(reacquire(n)) / \(reacquire(r)) | "
                 + "\(o.primarySwitches) / \(n.primarySwitches) / \(r.primarySwitches) |")
        }
        line("")
        line("† the subject leaves what any controller can keep in frame (faster than the motors, out of the camera's view): excluded from the targets.")
        line("")
        line("Still time: where the ideal aim has not moved for over a second (a still subject, the pauses between moves). Targets (issue 22): no motion")
        line("command after settling or moving < 2 % of the still time, aim jitter (RMS of the aim about its mean over each still stretch) < 0.2 % of the")
        line("horizontal FOV, framing error no worse than the naive client's. Each cell: ours / naive / oracle.")
        line("")
        line("| scenario | still s | commands while still | moving % of still time | aim jitter % HFOV | RMS err % while still |")
        line("|---|---|---|---|---|---|")
        for (i, s) in loaded.enumerated() where ours[i].metrics.stillTime > 0 {
            let runs = [ours[i], naive[i], oracle[i]]
            func cell(_ f: (SceneRunResult) -> String) -> String { runs.map(f).joined(separator: " / ") }
            line(String(cFormat: "| %@ | %.1f | ", s.name, ours[i].metrics.stillTime) + cell { "\($0.commandsWhileStill)" } + " | "
                 + cell { String(cFormat: "%.1f", $0.metrics.stillMotion * 100) } + " | " + cell { String(cFormat: "%.2f", $0.metrics.stillJitter * 100) }
                 + " | " + cell { $0.stillError.map { String(cFormat: "%.2f", $0 * 100) } ?? "–" } + " |")
        }
        line("")
        let acting = loaded.indices.filter { loaded[$0].lostPolicy != nil || !loaded[$0].sweeps.isEmpty }
        if !acting.isEmpty {
            line("The lost-subject policy and sweeps (ours only: the app sets tracking.lost_policy before the run, or starts sweep.start):")
            line("what dockd's engine did, from each time on (s), and the re-acquisition time of the subject's return.")
            line("")
            line("| scenario | policy | phases | at the preset, s after the subject was lost | reacquire s |")
            line("|---|---|---|---|---|")
            for i in acting {
                let phases = ours[i].trace.phases
                let lost = phases.first { $0.phase != .tracking && $0.phase != .sweeping }?.time
                let atPreset = phases.first { $0.phase == .atPreset }?.time
                // The engine says lost `unseen` after the last sight.
                var toPreset = "–"
                if let lost, let atPreset { toPreset = String(cFormat: "%.1f", atPreset - (lost - LostSubjectPolicy.unseen)) }
                let policy = loaded[i].lostPolicy.map { p in
                    p.policy + (p.policy == "hold" ? "" : String(cFormat: ", after %.0f s", p.after)) + (p.policy == "search" ? String(cFormat: ", %.0f s", p.searchSeconds) : "")
                } ?? "–"
                line("| \(loaded[i].name) | \(policy) | " + phases.map { String(cFormat: "%.1f ", $0.time) + $0.phase.rawValue }.joined(separator: " → ")
                     + " | \(toPreset) | \(ours[i].metrics.reacquireTime.map { String(cFormat: "%.2f", $0) } ?? "–") |")
            }
            line("")
        }
        let zoomed = loaded.indices.filter { loaded[$0].zoom != nil }
        if !zoomed.isEmpty {
            line("With an optical zoom (issue 25; ours only: the others leave the zoom wide). Target: the subject's height in the frame (the shot's")
            line("measure: the face for head and upper_body, the body for full_body) within ±10 % of the shot's target 90 % of the time; no loss caused by zooming.")
            line("")
            line("| scenario | shot | height within ±10 % of the shot's | the same where the lens reaches the shot | zoom reversals | in frame % | reacquire s |")
            line("|---|---|---|---|---|---|---|")
            for i in zoomed {
                let shot = ours[i].shotFigures, m = ours[i].metrics
                line("| \(loaded[i].name) | \(loaded[i].zoom!.shot) | " + (shot.fraction.map { String(cFormat: "%.1f %% of %d samples", $0 * 100, shot.samples) } ?? "–")
                     + " | " + (shot.reachableFraction.map { String(cFormat: "%.1f %% of %d", $0 * 100, shot.reachable) } ?? "–")
                     + " | \(shot.reversals)" + String(cFormat: " | %.1f | ", m.inFrame * 100) + (m.reacquireTime.map { String(cFormat: "%.2f", $0) } ?? "–") + " |")
            }
            line("")
        }
        let within = loaded.indices.filter { loaded[$0].withinLimits }
        let oracleRatio = geometricMean(within.map { ours[$0].metrics.rmsError / oracle[$0].metrics.rmsError })
        let naiveRatio = geometricMean(within.map { ours[$0].metrics.rmsError / naive[$0].metrics.rmsError })
        let allOracleRatio = geometricMean(loaded.indices.map { ours[$0].metrics.rmsError / oracle[$0].metrics.rmsError })
        let inFrameWithin = within.map { ours[$0].metrics.inFrame }.min() ?? 1
        let worstInFrame = within.min { ours[$0].metrics.inFrame < ours[$1].metrics.inFrame }.map { loaded[$0].name } ?? "–"
        let held = loaded.indices.filter { !loaded[$0].taps.isEmpty }
        let heldSwitches = held.reduce(0) { $0 + ours[$1].metrics.primarySwitches }
        let occlusionReacquire = loaded.indices.filter { loaded[$0].name.contains("occlusion") }.compactMap { ours[$0].metrics.reacquireTime }.max()
        let still = loaded.indices.filter { loaded[$0].name.hasPrefix("still") }
        let stillCommands = still.reduce(0) { $0 + ours[$1].commandsWhileStill }
        let stillError = still.compactMap { ours[$0].stillError }.max()
        let refusedFrames = ours.reduce(0) { $0 + $1.refused.filter { $0.key.contains("frame rate") }.values.reduce(0, +) }
        let crowd = loaded.indices.max { ours[$0].maxSubjects < ours[$1].maxSubjects }!
        let costs = ours[crowd].stepCosts.sorted()
        let allCosts = ours.flatMap(\.stepCosts).sorted()
        func verdict(_ ok: Bool) -> String { ok ? "met" : "**missed**" }
        line("| target (issue #10) | measured | |")
        line("|---|---|---|")
        line(String(cFormat: "| framing error ≤ 1.5× the delayed oracle (geometric mean over the %d scenarios within limits) | %.2f× (all %d scenarios: %.2f×) | %@ |",
                    within.count, oracleRatio, loaded.count, allOracleRatio, verdict(oracleRatio <= 1.5)))
        let oracleNaiveRatio = geometricMean(within.map { oracle[$0].metrics.rmsError / naive[$0].metrics.rmsError })
        line(String(cFormat: "| framing error ≤ 0.4× the naive client (geometric mean, same scenarios) | %.2f× (the delayed oracle itself: %.2f×) | %@ |",
                    naiveRatio, oracleNaiveRatio, verdict(naiveRatio <= 0.4)))
        line(String(cFormat: "| 100 %% in frame within the motor limits | worst %.2f %% (%@) | %@ |", inFrameWithin * 100, worstInFrame, verdict(inFrameWithin >= 0.99995)))
        line(String(cFormat: "| a still subject: no motion command after settling, error ≤ 2 %% | %d commands, error %@ | %@ |", stillCommands,
                    stillError.map { String(cFormat: "%.2f %%", $0 * 100) } ?? "–", verdict(stillCommands == 0 && (stillError ?? 0) <= 0.02)))
        line("| 0 primary switches while a selection is held | \(heldSwitches) (\(held.map { loaded[$0].name }.joined(separator: ", "))) | \(verdict(heldSwitches == 0)) |")
        line(String(cFormat: "| reacquire ≤ 0.5 s after a 2 s occlusion | %@ | %@ |", occlusionReacquire.map { String(cFormat: "%.2f s", $0) } ?? "not hidden",
                    verdict((occlusionReacquire ?? 0) <= 0.5)))
        line("| a camera's ordinary jitter never refused (frame rate) | \(refusedFrames) frames refused | \(verdict(refusedFrames == 0)) |")
        line(String(cFormat: "| dockd's work per frame ≤ 20 µs with 10 subjects | %@ (%d subjects): p50 %.1f µs, p99 %.1f µs | %@ |",
                    loaded[crowd].name, ours[crowd].maxSubjects, percentile(costs, 0.5), percentile(costs, 0.99), verdict(percentile(costs, 0.5) <= 20)))
        line(String(cFormat: "| (all scenarios) work per frame | p50 %.1f µs, p99 %.1f µs | |", percentile(allCosts, 0.5), percentile(allCosts, 0.99)))

        if let plots {
            try FileManager.default.createDirectory(atPath: plots, withIntermediateDirectories: true)
            var names: [String] = []
            for (i, s) in loaded.enumerated() {
                let path = "\(plots)/\(s.name).svg"
                let svg = scenePlot(scenario: s, series: [.init("ours", ours[i].trace, .blue), .init("naive", naive[i].trace, .red),
                                                           .init("delayed oracle", oracle[i].trace, .green, dashed: true)])
                try svg.write(toFile: path, atomically: true, encoding: .utf8)
                names.append("[\(s.name)](\(path))")
            }
            line("")
            line("Plots (world aim: ideal ± 5 % band, ours, naive, delayed oracle): " + names.joined(separator: ", ") + ".")
        }
        if let traces {
            try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
            for (i, s) in loaded.enumerated() {
                for (label, run) in [("ours", ours[i]), ("naive", naive[i]), ("oracle", oracle[i])] {
                    var csv = "t,camera_x,camera_y,ideal_x,ideal_y\n"
                    for (t, (c, d)) in zip(run.trace.time, zip(run.trace.camera, run.trace.desired)) {
                        csv += "\(t),\(c.x),\(c.y),\(d.map { "\($0.x)" } ?? ""),\(d.map { "\($0.y)" } ?? "")\n"
                    }
                    try csv.write(toFile: "\(traces)/\(s.name)-\(label).csv", atomically: true, encoding: .utf8)
                }
            }
        }
        if let markdown { try (out.joined(separator: "\n") + "\n").write(toFile: markdown, atomically: true, encoding: .utf8) }
    }
}

/// The geometric mean of positive numbers (zeros count as the smallest positive float's order).
func geometricMean(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    return exp(values.map { log(max($0, 1e-9)) }.reduce(0, +) / Double(values.count))
}
