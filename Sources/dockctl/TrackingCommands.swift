import ArgumentParser
import DockJSON

// Framing, region of interest and subject selection hold the stand's lease for as long as the
// command's connection lasts: they revert as dockctl exits unless --hold keeps the connection.

struct Framing: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Framing mode (automatic, center, left, right) and shot (--shot; the zoom keeps it on a stand with one) (reverts as dockctl exits; --hold keeps it).")
    @OptionGroup var connection: Connection
    @OptionGroup var hold: HoldOption
    @Argument(help: "automatic, center, left or right (omitted: unchanged)") var mode: String?
    @Option(help: "head, upper_body, full_body, group or wide") var shot: String?

    static let modes = ["automatic", "center", "left", "right"]
    static let shots = ["head", "upper_body", "full_body", "group", "wide"]

    func validate() throws {
        if let mode, !Self.modes.contains(mode) { throw ValidationError("say automatic, center, left or right") }
        if let shot, !Self.shots.contains(shot) { throw ValidationError("--shot is head, upper_body, full_body, group or wide") }
        guard mode != nil || shot != nil else { throw ValidationError("give a mode, --shot or both") }
    }

    func run() throws {
        var params: [String: JSONValue] = [:]
        if let mode { params["mode"] = .string(mode) }
        if let shot { params["shot"] = .string(shot) }
        let said = [mode.map { "framing \($0)" }, shot.map { "shot \($0)" }].compactMap { $0 }.joined(separator: ", ")
        try dockctl.run { try connection.leased(.trackingFraming, params, hold: hold.hold) { _ in said } }
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
