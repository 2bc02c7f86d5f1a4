#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DockSim
import StandEngine

/// One run's camera aim in a plot.
public struct PlotSeries: Sendable {
    public enum Color: String, Sendable { case blue = "#2456c8", red = "#d33", green = "#2a2" }

    public var label: String
    public var trace: SceneTrace
    public var color: Color
    public var dashed = false

    public init(_ label: String, _ trace: SceneTrace, _ color: Color, dashed: Bool = false) {
        self.label = label; self.trace = trace; self.color = color; self.dashed = dashed
    }
}

/// Pan and tilt of the camera's world aim over time, in degrees (pan positive left, tilt positive
/// up): the ideal aim (black, from the first series' trace) within its ±5 % band (grey), and each
/// series' camera aim, with a legend; across the top of the pan panel, what dockd did about its
/// subject (the first series with phases: the lost-subject policy, a sweep). Every point is drawn inside its panel: values outside the
/// panel's range (the ideal aim of a subject behind the camera) are clamped to its edge.
public func scenePlot(scenario: SceneScenario, series: [PlotSeries]) -> String {
    guard let first = series.first else { return "" }
    let width = 900.0, panel = 260.0, left = 60.0, top = 70.0, gap = 60.0, right = 20.0
    let height = top + 2 * panel + gap + 40
    let hfov = scenario.camera.horizontalFieldOfView, vfov = scenario.camera.verticalFieldOfView  // degrees
    var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width + right))\" height=\"\(Int(height))\" font-family=\"sans-serif\" font-size=\"12\">\n"
    svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    svg += "<text x=\"\(left)\" y=\"22\" font-size=\"15\">\(escaped(scenario.name)): where the camera points</text>\n"
    // Legend, one row under the title.
    var x = left
    for (swatch, label, dash) in [("#000", "ideal aim", false), ("#ccc", "±5 % of the field of view", false)]
        + series.map({ ($0.color.rawValue, $0.label, $0.dashed) }) {
        let stroke = label.hasPrefix("±") ? "stroke-width=\"8\"" : "stroke-width=\"2\""
        svg += "<line x1=\"\(x)\" y1=\"42\" x2=\"\(x + 24)\" y2=\"42\" stroke=\"\(swatch)\" \(stroke)\(dash ? " stroke-dasharray=\"5,3\"" : "")/>\n"
        svg += "<text x=\"\(x + 30)\" y=\"46\">\(escaped(label))</text>\n"
        x += 40 + Double(label.count) * 7
    }
    for (index, axis) in ["pan (yaw), degrees, left +", "tilt (pitch), degrees, up +"].enumerated() {
        let y0 = top + Double(index) * (panel + gap)
        func value(_ a: SceneAim) -> Double { (index == 0 ? -a.x : -a.y) * 180 / .pi }
        let band = 0.05 * (index == 0 ? hfov : vfov)
        let ideal = zip(first.trace.time, first.trace.desired).compactMap { t, d in d.map { (t, value($0)) } }
        let cameras = series.flatMap { $0.trace.camera.map(value) }
        let camerasLow = cameras.min() ?? -1, camerasHigh = cameras.max() ?? 1
        // The range holds every camera aim (a continuous yaw may be turns away from 0) and the ideal
        // aim with its band, up to 90° beyond where any camera went (an ideal aim far behind the
        // camera would squash the rest).
        var lo = max(camerasLow - 90, min(camerasLow, ideal.map(\.1).min() ?? camerasLow)) - band
        var hi = min(camerasHigh + 90, max(camerasHigh, ideal.map(\.1).max() ?? camerasHigh)) + band
        if hi - lo < 10 { let mid = (hi + lo) / 2; lo = mid - 5; hi = mid + 5 }
        let tMax = max(scenario.duration, 1)
        func px(_ t: Double) -> Double { left + min(max(t / tMax, 0), 1) * (width - left) }
        func py(_ v: Double) -> Double { y0 + panel - (min(max(v, lo), hi) - lo) / (hi - lo) * panel }
        func point(_ t: Double, _ v: Double) -> String { String(cFormat: "%.1f,%.1f", px(t), py(v)) }
        svg += "<rect x=\"\(left)\" y=\"\(y0)\" width=\"\(width - left)\" height=\"\(panel)\" fill=\"none\" stroke=\"#888\"/>\n"
        svg += "<text x=\"\(left + 5)\" y=\"\(y0 - 6)\">\(axis)</text>\n"
        for k in 0...4 {
            let v = lo + (hi - lo) * Double(k) / 4
            svg += String(cFormat: "<text x=\"5\" y=\"%.1f\">%.1f</text>\n", py(v) + 4, v)
        }
        let step = tMax > 40 ? 10.0 : 5.0
        for k in 0...Int(tMax / step) {
            let t = Double(k) * step
            svg += String(cFormat: "<text x=\"%.1f\" y=\"%.1f\">%.0f s</text>\n", px(t) - 8, y0 + panel + 15, t)
        }
        // The band and the ideal aim, per run of samples that have one.
        var runs: [[(Double, Double)]] = [[]]
        for (t, d) in zip(first.trace.time, first.trace.desired) {
            if let d { runs[runs.count - 1].append((t, value(d))) } else if !runs[runs.count - 1].isEmpty { runs.append([]) }
        }
        for run in runs where run.count > 1 {
            let upper = run.map { point($0.0, $0.1 + band) }
            let lower = run.reversed().map { point($0.0, $0.1 - band) }
            svg += "<polygon points=\"\((upper + lower).joined(separator: " "))\" fill=\"#ddd\" stroke=\"none\"/>\n"
            svg += "<polyline points=\"\(run.map { point($0.0, $0.1) }.joined(separator: " "))\" fill=\"none\" stroke=\"black\" stroke-width=\"1.5\"/>\n"
        }
        if index == 0, let acting = series.first(where: { !$0.trace.phases.isEmpty }) {
            svg += phaseStrip(acting.trace.phases, y: y0 + 1, end: tMax, x: px)
        }
        for s in series.reversed() {
            let points = zip(s.trace.time, s.trace.camera).map { point($0.0, value($0.1)) }
            let dash = s.dashed ? " stroke-dasharray=\"5,3\"" : ""
            svg += "<polyline points=\"\(points.joined(separator: " "))\" fill=\"none\" stroke=\"\(s.color.rawValue)\" stroke-width=\"1.4\"\(dash)/>\n"
        }
    }
    return svg + "</svg>\n"
}

/// One labelled band per phase other than tracking, from its start to the next phase's.
private func phaseStrip(_ phases: [(time: Double, phase: TrackingPhase)], y: Double, end: Double, x: (Double) -> Double) -> String {
    var svg = ""
    for (i, entry) in phases.enumerated() where entry.phase != .tracking {
        let until = i + 1 < phases.count ? phases[i + 1].time : end
        let (x0, x1) = (x(entry.time), x(until))
        svg += String(cFormat: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"%@\" opacity=\"0.8\"/>\n", x0, y, max(1, x1 - x0), phaseColor(entry.phase))
        svg += String(cFormat: "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%@</text>\n", x0 + 2, y + 12, entry.phase.rawValue)
    }
    return svg
}

private func phaseColor(_ phase: TrackingPhase) -> String {
    switch phase {
    case .tracking: "none"
    case .lostHolding: "#f5d76e"
    case .lostSearching: "#f0a35e"
    case .returning: "#9ad0f5"
    case .atPreset: "#b5e3a1"
    case .blocked: "#e89a9a"
    case .stopped: "#bbbbbb"
    case .lostConfigured: "#dddddd"
    case .sweeping: "#d7b5f0"
    case .touring: "#f5b5d7"
    }
}

private func escaped(_ text: String) -> String {
    text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
}
