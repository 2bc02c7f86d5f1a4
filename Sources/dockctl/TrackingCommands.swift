import ArgumentParser
import DockJSON

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
        try dockctl.run { try connection.leased(.trackingFraming, ["mode": .string(mode)], hold: hold.hold) { _ in "framing \(mode)" } }
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
            let rect: JSONValue = ["x": JSONValue(values[0]), "y": JSONValue(values[1]), "width": JSONValue(values[2]), "height": JSONValue(values[3])]
            try connection.leased(.trackingROI, ["rect": rect], hold: hold.hold) { _ in "region of interest set" }
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
            var params: [String: JSONValue] = ["ids": .array(ids.map(JSONValue.string))]
            if let x, let y { params = ["x": JSONValue(x), "y": JSONValue(y)] }
            try connection.leased(.trackingSelect, params, hold: hold.hold) { result in
                let chosen = (result["ids"]?.array ?? []).compactMap(\.string)
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
            let state = try connection.call(.trackingGet, choice: .reads).result
            if connection.json { Output.json(state.object != nil ? state : [:]); return }
            let subjects = (state["subjects"]?.array ?? []).sorted { ($0["saliency_rank"]?.double ?? 0) < ($1["saliency_rank"]?.double ?? 0) }
            if subjects.isEmpty { Output.line("no subjects tracked") }
            for s in subjects {
                let speaking = s["speaking_confidence"]?.double.map { " speaking \(fixed($0, 2))" } ?? ""
                let selected = (s["selected"]?.bool ?? false) ? " selected" : ""
                Output.line("#\(s["saliency_rank"]?.text ?? "?")  \(s["id"]?.text ?? "?")  \(s["kind"]?.text ?? "?")\(speaking)\(selected)")
            }
            Output.line("in frame: \((state["in_frame"]?.bool ?? false) ? "yes" : "no")")
        }
    }
}
