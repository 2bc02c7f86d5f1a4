import ArgumentParser
import Foundation

// Framing, region of interest and subject selection. They hold the stand's lease for as long as
// the command's connection lasts, so from the shell they show the API's validation and errors; an
// app keeps its connection (and its choices) open.

struct Framing: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Framing mode: automatic, center, left, right.")
    @OptionGroup var connection: Connection
    @Argument(help: "automatic, center, left or right") var mode: String

    func validate() throws {
        guard ["automatic", "center", "left", "right"].contains(mode) else { throw ValidationError("say automatic, center, left or right") }
    }

    func run() throws {
        try dockctl.run { _ = try connection.call("tracking.framing", ["mode": mode]); print("framing \(mode)") }
    }
}

struct ROI: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "roi", abstract: "Region of interest: a normalized rect, upper-left origin.")
    @OptionGroup var connection: Connection
    @Argument(help: "x y width height, each 0…1") var values: [Double]

    func validate() throws {
        guard values.count == 4 else { throw ValidationError("give x y width height") }
    }

    func run() throws {
        try dockctl.run {
            let rect = ["x": values[0], "y": values[1], "width": values[2], "height": values[3]]
            _ = try connection.call("tracking.roi", ["rect": rect])
            print("region of interest set")
        }
    }
}

struct Select: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Select subjects by id (none = automatic) or at a point.")
    @OptionGroup var connection: Connection
    @Argument(help: "Subject ids from 'dockctl subjects'; none for automatic selection.") var ids: [String] = []
    @Option(help: "Select the subject at this normalized x (upper-left origin).") var x: Double?
    @Option(help: "… and y.") var y: Double?

    func run() throws {
        try dockctl.run {
            var params: [String: Any] = ["ids": ids]
            if let x, let y { params = ["x": x, "y": y] }
            let result = try connection.call("tracking.select", params) as? [String: Any] ?? [:]
            let chosen = result["ids"] as? [String] ?? []
            print(chosen.isEmpty ? "automatic selection" : "selected \(chosen.joined(separator: ", "))")
        }
    }
}

struct Subjects: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The subjects being tracked now, by saliency rank.")
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            let state = try connection.call("tracking.get") as? [String: Any] ?? [:]
            if connection.json { printJSON(state); return }
            let subjects = (state["subjects"] as? [[String: Any]] ?? []).sorted { ($0["saliency_rank"] as? Int ?? 0) < ($1["saliency_rank"] as? Int ?? 0) }
            if subjects.isEmpty { print("no subjects tracked") }
            for s in subjects {
                let speaking = (s["speaking_confidence"] as? Double).map { String(format: " speaking %.2f", $0) } ?? ""
                let selected = (s["selected"] as? Bool ?? false) ? " selected" : ""
                print("#\(s["saliency_rank"] ?? "?")  \(s["id"] ?? "?")  \(s["kind"] ?? "?")\(speaking)\(selected)")
            }
            print("in frame: \((state["in_frame"] as? Bool ?? false) ? "yes" : "no")")
        }
    }
}
