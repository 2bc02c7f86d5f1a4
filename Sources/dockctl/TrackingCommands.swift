import ArgumentParser
import Foundation

// Framing, region of interest and subject selection hold the stand's lease for as long as the
// command's connection lasts: they revert as dockctl exits unless --hold keeps the connection.

struct Framing: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Framing mode: automatic, center, left, right (reverts as dockctl exits; --hold keeps it).")
    @OptionGroup var connection: Connection
    @OptionGroup var hold: HoldOption
    @Argument(help: "automatic, center, left or right") var mode: String

    func validate() throws {
        guard ["automatic", "center", "left", "right"].contains(mode) else { throw ValidationError("say automatic, center, left or right") }
    }

    func run() throws {
        try dockctl.run { try connection.leased("tracking.framing", ["mode": mode], hold: hold.hold) { _ in "framing \(mode)" } }
    }
}

struct ROI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roi",
        abstract: "Region of interest: a normalized rect, upper-left origin (reverts as dockctl exits; --hold keeps it).")
    @OptionGroup var connection: Connection
    @OptionGroup var hold: HoldOption
    @Argument(help: "x y width height, each 0…1") var values: [Double]

    func validate() throws {
        guard values.count == 4 else { throw ValidationError("give x y width height") }
    }

    func run() throws {
        try dockctl.run {
            let rect = ["x": values[0], "y": values[1], "width": values[2], "height": values[3]]
            try connection.leased("tracking.roi", ["rect": rect], hold: hold.hold) { _ in "region of interest set" }
        }
    }
}

struct Select: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Select subjects by id (none = automatic) or at a point (reverts as dockctl exits; --hold keeps it).")
    @OptionGroup var connection: Connection
    @OptionGroup var hold: HoldOption
    @Argument(help: "Subject ids from 'dockctl subjects'; none for automatic selection.") var ids: [String] = []
    @Option(help: "Select the subject at this normalized x (upper-left origin).") var x: Double?
    @Option(help: "… and y.") var y: Double?

    func run() throws {
        try dockctl.run {
            var params: [String: Any] = ["ids": ids]
            if let x, let y { params = ["x": x, "y": y] }
            try connection.leased("tracking.select", params, hold: hold.hold) { result in
                let chosen = (result as? [String: Any])?["ids"] as? [String] ?? []
                return chosen.isEmpty ? "automatic selection" : "selected \(chosen.joined(separator: ", "))"
            }
        }
    }
}

struct Subjects: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The subjects being tracked now, by saliency rank.")
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            let state = try connection.call("tracking.get", choice: .reads).result as? [String: Any] ?? [:]
            if connection.json { Output.json(state); return }
            let subjects = (state["subjects"] as? [[String: Any]] ?? []).sorted { ($0["saliency_rank"] as? Int ?? 0) < ($1["saliency_rank"] as? Int ?? 0) }
            if subjects.isEmpty { Output.line("no subjects tracked") }
            for s in subjects {
                let speaking = (s["speaking_confidence"] as? Double).map { String(format: " speaking %.2f", $0) } ?? ""
                let selected = (s["selected"] as? Bool ?? false) ? " selected" : ""
                Output.line("#\(s["saliency_rank"] ?? "?")  \(s["id"] ?? "?")  \(s["kind"] ?? "?")\(speaking)\(selected)")
            }
            Output.line("in frame: \((state["in_frame"] as? Bool ?? false) ? "yes" : "no")")
        }
    }
}
