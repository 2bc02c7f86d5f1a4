import ArgumentParser
import DockSim
import Foundation

/// The tracking benchmark: scenario files through the scene simulator, dockd's tracking against a
/// grid-tuned naive controller and an oracle, in virtual time.
struct ScenarioBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "Auto-tracking scenarios (scene simulator + stand) in virtual time: ours vs naive vs oracle.")

    @Flag(help: "Run every Benchmarks/Scenarios/*.json (under --scenarios).") var suite = false
    @Option(help: "Folder of the suite's scenario files.") var scenarios = "Benchmarks/Scenarios"
    @Argument(help: "Scenario files.") var files: [String] = []
    @Option(help: "Seed, added to each scenario's own.") var seed: UInt64 = 1
    @Option(help: "Write one SVG plot per scenario into this folder.") var plots: String?
    @Option(help: "Write the Markdown report to this file too.") var markdown: String?
    @Flag(help: "One naive combination instead of the grid (for quick tuning runs).") var quick = false

    func run() throws {
        var paths = files
        if suite {
            let names = try FileManager.default.contentsOfDirectory(atPath: scenarios).filter { $0.hasSuffix(".json") }.sorted()
            paths += names.map { "\(scenarios)/\($0)" }
        }
        guard !paths.isEmpty else { throw ValidationError("give scenario files or --suite") }
        let decoder = JSONDecoder()
        var loaded: [SceneScenario] = []
        for path in paths {
            do {
                loaded.append(try decoder.decode(SceneScenario.self, from: Data(contentsOf: URL(fileURLWithPath: path))))
            } catch {
                throw ValidationError("\(path): \(error)")
            }
        }
        let wallStart = Date(), cpuStart = cpuSeconds()
        var virtualSeconds = 0.0

        // The naive baseline's grid: the combination with the lowest pooled RMS over these scenarios wins.
        let grid: [(Double, Double)] = quick ? [(6, 0)] : [1.5, 3, 6].flatMap { k in [0.0, 0.03, 0.08].map { (k, $0) } }
        var naiveRuns: [[SceneRunResult]] = []
        var gridLines: [String] = []
        for (k, dz) in grid {
            let runs = try loaded.map { try runScene($0, seed: seed, kind: .naive(gain: k, deadZone: dz), record: true) }
            virtualSeconds += loaded.reduce(0) { $0 + $1.duration }
            naiveRuns.append(runs)
            gridLines.append(String(format: "k=%.1f/s dz=%.0f%%: %.2f %%", k, dz * 100, pooledRMS(runs.map(\.metrics)) * 100))
        }
        let bestIndex = naiveRuns.indices.min { pooledRMS(naiveRuns[$0].map(\.metrics)) < pooledRMS(naiveRuns[$1].map(\.metrics)) }!
        let naive = naiveRuns[bestIndex]
        let ours = try loaded.map { try runScene($0, seed: seed, kind: .ours, record: true) }
        let oracle = try loaded.map { try runScene($0, seed: seed, kind: .oracle, record: true) }
        virtualSeconds += 2 * loaded.reduce(0) { $0 + $1.duration }
        let wall = Date().timeIntervalSince(wallStart), cpu = cpuSeconds() - cpuStart

        var out: [String] = []
        func line(_ s: String) { out.append(s); print(s) }
        line("Scenario suite, seed \(seed): \(loaded.count) scenarios, \(String(format: "%.0f", virtualSeconds)) virtual s in "
             + String(format: "%.1f s wall / %.1f s CPU (%.0f× real time)", wall, cpu, virtualSeconds / wall) + ".")
        line("Naive baseline: best of a \(grid.count)-point grid, \(grid[bestIndex].0 == 0 ? "" : String(format: "k = %.1f /s, dead zone %.0f %% of the FOV", grid[bestIndex].0, grid[bestIndex].1 * 100)) (grid pooled RMS: \(gridLines.joined(separator: "; "))).")
        line("")
        line("Each cell: ours / naive / oracle. Errors in % of the field of view from the desired framing point.")
        line("")
        line("| scenario | in frame % | in ROI % | RMS err % | P95 err % | settle s | overshoot % | RMS jerk rad/s³ | path ratio | idle jitter mrad/s | reacquire s | switches |")
        line("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for (i, s) in loaded.enumerated() {
            let (o, n, r) = (ours[i].metrics, naive[i].metrics, oracle[i].metrics)
            func cell(_ f: (SceneMetrics) -> Double, _ format: String) -> String {
                [o, n, r].map { String(format: format, f($0)) }.joined(separator: " / ")
            }
            func reacquire(_ m: SceneMetrics) -> String { m.reacquireTime.map { String(format: "%.2f", $0) } ?? "–" }
            line("| \(s.name)\(s.withinLimits ? "" : " †") | \(cell({ $0.inFrame * 100 }, "%.1f")) | \(cell({ $0.inRegion * 100 }, "%.1f")) | "
                 + "\(cell({ $0.rmsError * 100 }, "%.2f")) | \(cell({ $0.p95Error * 100 }, "%.2f")) | \(cell({ $0.settleTime }, "%.2f")) | "
                 + "\(cell({ $0.overshoot * 100 }, "%.1f")) | \(cell({ $0.rmsJerk }, "%.0f")) | \(cell({ $0.pathRatio }, "%.2f")) | "
                 + "\(cell({ $0.idleJitter * 1000 }, "%.1f")) | \(reacquire(o)) / \(reacquire(n)) / \(reacquire(r)) | "
                 + "\(o.primarySwitches) / \(n.primarySwitches) / \(r.primarySwitches) |")
        }
        line("")
        line("† subject faster than the stand's limits: excluded from the 100 % in-frame target.")
        line("")
        let rmsOurs = pooledRMS(ours.map(\.metrics)), rmsNaive = pooledRMS(naive.map(\.metrics)), rmsOracle = pooledRMS(oracle.map(\.metrics))
        let within = loaded.indices.filter { loaded[$0].withinLimits }
        let inFrameWithin = within.map { ours[$0].metrics.inFrame }.min() ?? 1
        let switches = ours.reduce(0) { $0 + $1.metrics.primarySwitches }
        let occlusionReacquire = loaded.indices.filter { loaded[$0].name.contains("occlusion") }.compactMap { ours[$0].metrics.reacquireTime }.max()
        let crowd = loaded.indices.max { ours[$0].maxSubjects < ours[$1].maxSubjects }!
        let costs = ours[crowd].stepCosts.sorted()
        let allCosts = ours.flatMap(\.stepCosts).sorted()
        func verdict(_ ok: Bool) -> String { ok ? "met" : "**missed**" }
        line("| target | measured | |")
        line("|---|---|---|")
        line(String(format: "| suite RMS framing error ≤ 1.15× oracle | ours %.2f %%, oracle %.2f %%: %.2f× | %@ |", rmsOurs * 100, rmsOracle * 100, rmsOurs / rmsOracle, verdict(rmsOurs <= 1.15 * rmsOracle)))
        line(String(format: "| suite RMS framing error ≤ 0.4× naive | naive %.2f %%: %.2f× | %@ |", rmsNaive * 100, rmsOurs / rmsNaive, verdict(rmsOurs <= 0.4 * rmsNaive)))
        line(String(format: "| 100 %% in frame within the motor limits | worst %.2f %% | %@ |", inFrameWithin * 100, verdict(inFrameWithin >= 0.99995)))
        line("| 0 primary switches while a selection is held | \(switches) | \(verdict(switches == 0)) |")
        line(String(format: "| reacquire ≤ 0.5 s after a 2 s occlusion | %@ | %@ |", occlusionReacquire.map { String(format: "%.2f s", $0) } ?? "not hidden", verdict((occlusionReacquire ?? 0) <= 0.5)))
        line(String(format: "| tracker+selection+framing+control ≤ 20 µs/step with 10 subjects | %@ (%d subjects): p50 %.1f µs, p99 %.1f µs | %@ |",
                    loaded[crowd].name, ours[crowd].maxSubjects, percentile(costs, 0.5), percentile(costs, 0.99), verdict(percentile(costs, 0.5) <= 20)))
        line(String(format: "| (all scenarios) step cost | p50 %.1f µs, p99 %.1f µs | |", percentile(allCosts, 0.5), percentile(allCosts, 0.99)))

        if let plots {
            try FileManager.default.createDirectory(atPath: plots, withIntermediateDirectories: true)
            var names: [String] = []
            for (i, s) in loaded.enumerated() {
                let path = "\(plots)/\(s.name).svg"
                let svg = scenePlot(scenario: s, series: [.init("ours", ours[i].trace, .blue), .init("naive", naive[i].trace, .red),
                                                           .init("oracle", oracle[i].trace, .green, dashed: true)])
                try svg.write(toFile: path, atomically: true, encoding: .utf8)
                names.append("[\(s.name)](\(path))")
            }
            line("")
            line("Plots (world aim: ideal ± 5 % band, ours, naive, oracle): " + names.joined(separator: ", ") + ".")
        }
        if let markdown { try (out.joined(separator: "\n") + "\n").write(toFile: markdown, atomically: true, encoding: .utf8) }
    }
}

func pooledRMS(_ metrics: [SceneMetrics]) -> Double {
    let sum = metrics.reduce(0) { $0 + $1.squaredErrorSum }, count = metrics.reduce(0) { $0 + $1.errorCount }
    return count > 0 ? (sum / Double(count)).squareRoot() : 0
}
