import DockSim
import VirtualTime
import Foundation
import Testing

@Suite("Scene plots")
struct ScenePlotTests {
    /// Every point of every line and band lies inside its panel, whatever the values (here a subject
    /// who walks behind the stand, whose ideal aim is far off), and the legend names every series.
    @Test func everyPointIsInsideItsPanelAndTheLegendNamesEachLine() throws {
        let scenario = try ScenarioSuiteTests.scenario("leave-reenter")
        let ours = try runScene(scenario, seed: 1, kind: .ours, record: true)
        let svg = scenePlot(scenario: scenario, series: [.init("ours", ours.trace, .blue), .init("naive", ours.trace, .red, dashed: true)])
        let panels = matches(#"<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="none""#, in: svg).map {
            (x: Double($0[0])!, y: Double($0[1])!, width: Double($0[2])!, height: Double($0[3])!)
        }
        #expect(panels.count == 2)
        let shapes = matches(#"<(?:polyline|polygon) points="([^"]*)""#, in: svg).map { $0[0] }
        #expect(shapes.count >= 4)
        for shape in shapes {
            let points = shape.split(separator: " ").map { $0.split(separator: ",").map { Double($0)! } }
            let inside = panels.contains { p in
                points.allSatisfy { $0[0] >= p.x - 0.05 && $0[0] <= p.x + p.width + 0.05 && $0[1] >= p.y - 0.05 && $0[1] <= p.y + p.height + 0.05 }
            }
            #expect(inside, "a line leaves its panel: \(shape.prefix(80))…")
        }
        for label in ["ideal aim", "ours", "naive"] { #expect(svg.contains(">\(label)</text>")) }
    }

    /// What dockd did about its subject is drawn over the pan panel: each phase of the lost-subject
    /// policy, or the sweep, a labelled band where it held.
    @Test func thePolicysPhasesAndASweepAreDrawn() throws {
        for (name, labels) in [("lost-search-gone", ["lost-holding", "lost-searching", "returning", "at-preset"]), ("sweep-once", ["sweeping"])] {
            let scenario = try ScenarioSuiteTests.scenario(name)
            let ours = try runScene(scenario, seed: 1, kind: .ours, record: true)
            let svg = scenePlot(scenario: scenario, series: [.init("ours", ours.trace, .blue)])
            for label in labels { #expect(svg.contains(">\(label)</text>"), "\(name): \(label)") }
        }
    }

    private func matches(_ pattern: String, in text: String) -> [[String]] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { m in
            (1..<m.numberOfRanges).map { String(text[Range(m.range(at: $0), in: text)!]) }
        }
    }
}
