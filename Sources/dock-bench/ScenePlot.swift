import DockSim
import EngineSimulation
import Foundation

/// One run's camera aim in a plot.
struct PlotSeries {
    enum Color: String { case blue = "#24c", red = "#d33", green = "#2a2" }

    var label: String
    var trace: SceneTrace
    var color: Color
    var dashed = false

    init(_ label: String, _ trace: SceneTrace, _ color: Color, dashed: Bool = false) {
        self.label = label; self.trace = trace; self.color = color; self.dashed = dashed
    }
}

/// Yaw and pitch of the camera's world aim over time, in degrees (pan positive left, tilt positive
/// up), for each series, over the ideal aim (taken from the first series) and its ±5 % band. The
/// first series is drawn on top.
func scenePlot(scenario: SceneScenario, series: [PlotSeries]) -> String {
    guard let first = series.first else { return "" }
    let width = 900.0, panel = 260.0, left = 60.0, top = 40.0, gap = 50.0
    let hfov = scenario.camera.horizontalFieldOfView, vfov = scenario.camera.verticalFieldOfView
    let legend = series.map { "\($0.label) \($0.color)" }.joined(separator: ", ")
    var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width + 20))\" height=\"\(Int(top + 2 * panel + gap + 50))\" font-family=\"sans-serif\" font-size=\"12\">\n"
    svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    svg += "<text x=\"\(left)\" y=\"20\" font-size=\"14\">\(scenario.name): camera aim vs ideal (grey band ±5 % FOV)  —  ideal black, \(legend)</text>\n"
    for (index, axis) in ["pan (yaw, ° left +)", "tilt (pitch, ° up +)"].enumerated() {
        let y0 = top + Double(index) * (panel + gap)
        func value(_ a: SceneAim) -> Double { (index == 0 ? -a.x : -a.y) * 180 / .pi }
        let band = 0.05 * (index == 0 ? hfov : vfov)
        let values = series.flatMap { $0.trace.camera.map(value) } + first.trace.desired.compactMap { $0.map(value) }
        var lo = (values.min() ?? -1) - band, hi = (values.max() ?? 1) + band
        if hi - lo < 10 { let mid = (hi + lo) / 2; lo = mid - 5; hi = mid + 5 }
        let tMax = max(scenario.duration, 1)
        func px(_ t: Double) -> Double { left + t / tMax * (width - left) }
        func py(_ v: Double) -> Double { y0 + panel - (v - lo) / (hi - lo) * panel }
        svg += "<rect x=\"\(left)\" y=\"\(y0)\" width=\"\(width - left)\" height=\"\(panel)\" fill=\"none\" stroke=\"#888\"/>\n"
        svg += "<text x=\"\(left + 5)\" y=\"\(y0 + 14)\">\(axis)</text>\n"
        for k in 0...4 {
            let v = lo + (hi - lo) * Double(k) / 4
            svg += String(format: "<text x=\"5\" y=\"%.1f\">%.1f</text>\n", py(v) + 4, v)
        }
        for k in 0...Int(tMax / 5) {
            let t = Double(k) * 5
            svg += String(format: "<text x=\"%.1f\" y=\"%.1f\">%.0f s</text>\n", px(t) - 8, y0 + panel + 15, t)
        }
        // Error band: polygon over the runs of samples with an ideal aim.
        var runs: [[(Double, Double)]] = [[]]
        for (t, d) in zip(first.trace.time, first.trace.desired) {
            if let d { runs[runs.count - 1].append((t, value(d))) } else if !runs[runs.count - 1].isEmpty { runs.append([]) }
        }
        for run in runs where run.count > 1 {
            let upper = run.map { String(format: "%.1f,%.1f", px($0.0), py($0.1 + band * 180 / .pi)) }
            let lower = run.reversed().map { String(format: "%.1f,%.1f", px($0.0), py($0.1 - band * 180 / .pi)) }
            svg += "<polygon points=\"\((upper + lower).joined(separator: " "))\" fill=\"#ddd\" stroke=\"none\"/>\n"
            svg += "<polyline points=\"\(run.map { String(format: "%.1f,%.1f", px($0.0), py($0.1)) }.joined(separator: " "))\" fill=\"none\" stroke=\"black\" stroke-width=\"1.5\"/>\n"
        }
        for s in series.reversed() {
            let points = zip(s.trace.time, s.trace.camera).map { String(format: "%.1f,%.1f", px($0.0), py(value($0.1))) }
            let dash = s.dashed ? " stroke-dasharray=\"5,3\"" : ""
            svg += "<polyline points=\"\(points.joined(separator: " "))\" fill=\"none\" stroke=\"\(s.color.rawValue)\" stroke-width=\"1.2\"\(dash)/>\n"
        }
    }
    return svg + "</svg>\n"
}
