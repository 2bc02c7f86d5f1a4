import ArgumentParser
import DockSim
import VirtualTime

/// The scenario suite through the ONVIF driver dockd ships (issue 24): dockd's tracking ("ours")
/// steering an emulated ONVIF camera (`EmulatedONVIFCamera`) that offers one motion model, for each
/// model asked, beside the simulated stand at the camera's speeds (`StandConfiguration.turning(like:)`)
/// through the native driver, the reference. Target: in frame ≥ 99 % and framing error ≤ 1.5× the
/// native stand's, per scenario within the motor limits: the suite's own (†, for the native stand)
/// and the camera's, which a scene passes when the stand at the camera's speeds and range too
/// (`StandConfiguration.reaching(like:)`) keeps its subject in frame ≥ 99 % (§ otherwise).
struct ONVIFSuite {
    var motions: [ONVIFMotionModel]
    /// The driver's options, as the config file gives them.
    var options: [String: String]
    /// µs the camera takes to act on and answer each request.
    var latency: UInt64
    /// Whether the camera lists a PanTiltSpeedSpace (without, its absolute and relative moves go at its top speed).
    var speedSpace: Bool

    /// The camera offering `model`, level and ahead: the emulator's head, which the driver's defaults describe.
    func camera(_ model: ONVIFMotionModel) -> EmulatedONVIFCamera { .level(motion: [model], speedSpace: speedSpace, latencies: [latency]) }

    /// Runs the suite and returns the report's lines (each printed as it is made).
    func run(_ scenarios: [SceneScenario], seed: UInt64) throws -> [String] {
        let wallStart = monotonicSeconds()
        let zoomed = scenarios.filter { $0.zoom != nil }.map(\.name)
        guard zoomed.isEmpty else { throw ValidationError("the emulated ONVIF camera has no zoom: \(zoomed.joined(separator: ", "))") }
        // Every model's camera has the same head.
        let head = camera(.continuous).head
        let native = try scenarios.map { try runScene($0, seed: seed, kind: .ours, record: false, stand: .turning(like: camera(.continuous))) }
        // The camera's reach judged on the scenes the suite holds within limits only (the others are out already).
        let reachInFrame = try scenarios.map { s in
            try s.withinLimits && !s.handheld
                ? runScene(s, seed: seed, kind: .ours, record: false, stand: .reaching(like: camera(.continuous))).metrics.inFrame : nil
        }
        let inReach = reachInFrame.map { ($0 ?? 1) >= 0.99 }
        var byModel: [[SceneRunResult]] = []
        for model in motions {
            byModel.append(try scenarios.map { s in
                let host: VirtualHost<EmulatedONVIFCamera>
                do { host = try VirtualHost(camera: camera(model), options: options) } catch { throw ValidationError("\(error)") }
                return try runScene(s, seed: seed, kind: .ours, record: false, on: host)
            })
        }
        let wall = monotonicSeconds() - wallStart

        var out: [String] = []
        func line(_ s: String) { out.append(s); print(s) }
        let optionText = options.isEmpty ? "its defaults" : options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        line("Scenario suite through the ONVIF driver, seed \(seed): \(scenarios.count) scenarios, ours (dockd's tracking) only, "
             + String(cFormat: "%.1f s wall.", wall))
        line("Each model: the ONVIF driver (options: \(optionText)) steering an emulated camera that offers only that model's moves "
             + String(cFormat: "(%.0f°/s pan, %.0f°/s tilt, %@, %.1f ms a request). ", head.pan.speed, head.tilt.speed,
                           speedSpace ? "a speed space" : "no speed space", Double(latency) / 1000)
             + "Native: the simulated stand at the same speeds (accelerations 4× them, as the ONVIF driver declares).")
        line("Each model's cell: in frame % · RMS error % of the FOV · ÷ native · met when in frame ≥ 99 % and ≤ 1.5× native.")
        line("")
        line("| scenario | native: in frame % · RMS % | " + motions.map(\.rawValue).joined(separator: " | ") + " |")
        line("|---|---|" + motions.map { _ in "---|" }.joined())
        var met = Array(repeating: 0, count: motions.count)
        var ratios = Array(repeating: [Double](), count: motions.count)
        // A hand-held scene is not the same for both: the native stand's base sways, the camera's
        // (on a wall) does not.
        let judged = scenarios.indices.map { scenarios[$0].withinLimits && !scenarios[$0].handheld && inReach[$0] }
        let within = scenarios.indices.filter { judged[$0] }
        for (i, s) in scenarios.enumerated() {
            let n = native[i].metrics
            var cells: [String] = []
            for m in motions.indices {
                let o = byModel[m][i].metrics
                let ratio = o.rmsError / n.rmsError
                let ok = o.inFrame >= 0.99 && ratio <= 1.5
                if judged[i] {
                    if ok { met[m] += 1 }
                    ratios[m].append(ratio)
                }
                cells.append(String(cFormat: "%.1f · %.2f · %.2f× · %@", o.inFrame * 100, o.rmsError * 100, ratio,
                                    judged[i] ? (ok ? "met" : "**missed**") : "–"))
            }
            line("| \(s.name)\(s.withinLimits ? "" : " †")\(s.handheld ? " ‡" : "")\(inReach[i] ? "" : String(cFormat: " § (%.1f %%)", (reachInFrame[i] ?? 0) * 100)) | "
                 + String(cFormat: "%.1f · %.2f", n.inFrame * 100, n.rmsError * 100) + " | " + cells.joined(separator: " | ") + " |")
        }
        line("| **met (of \(within.count) within limits and the camera's reach, not hand-held); geometric mean ÷ native** | | "
             + motions.indices.map { String(cFormat: "**%d**; %.2f×", met[$0], geometricMean(ratios[$0])) }.joined(separator: " | ") + " |")
        line("")
        line("† the subject leaves what any controller can keep in frame: excluded from the targets. ‡ hand-held: the native stand's base sways, "
             + "the camera (on a wall) does not: not the same scene, excluded too. § beyond the camera's reach: the simulated stand at the camera's "
             + String(cFormat: "speeds and range (pan %.0f…%.0f°, not continuous; tilt %.0f…%.0f°) keeps the subject in frame < 99 %% (that stand's figure in brackets): excluded too.",
                      min(head.pan.atMinusOne, head.pan.atOne), max(head.pan.atMinusOne, head.pan.atOne),
                      min(head.tilt.atMinusOne, head.tilt.atOne), max(head.tilt.atMinusOne, head.tilt.atOne)))
        return out
    }
}
