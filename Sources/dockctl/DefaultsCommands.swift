import ArgumentParser
import DockClient
import DockJSON

/// `dockctl defaults`: what every stand does while no client controls it, kept by dockd across
/// restarts (unlike `track off`, `framing` and `roi`, which last as long as dockctl's connection).
struct Defaults: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The stands' defaults, kept across restarts: tracking on/off, framing, region of interest.",
        subcommands: [Show.self, Set.self, Reset.self], defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the defaults.")
        @OptionGroup var connection: Connection

        func run() throws {
            try dockctl.run { Defaults.print(try connection.client().call(.defaultsGet), json: connection.json) }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store new defaults (root or dockd's user); options not given keep their value.")
        @OptionGroup var connection: Connection
        @Option(help: "System tracking while no client controls a stand: on or off.") var tracking: String?
        @Option(help: "Framing mode: automatic, center, left or right.") var framing: String?
        @Option(help: "Region of interest: x,y,width,height (normalized, upper-left origin).") var roi: String?

        func validate() throws {
            if let tracking, !["on", "off"].contains(tracking) { throw ValidationError("--tracking is on or off") }
            if let framing, !["automatic", "center", "left", "right"].contains(framing) {
                throw ValidationError("--framing is automatic, center, left or right")
            }
            if let roi, roi.split(separator: ",").compactMap({ Double($0) }).count != 4 { throw ValidationError("--roi is x,y,width,height") }
            if tracking == nil && framing == nil && roi == nil { throw ValidationError("give --tracking, --framing or --roi") }
        }

        func run() throws {
            var params: [String: JSONValue] = [:]
            if let tracking { params["tracking"] = .bool(tracking == "on") }
            if let framing { params["framing"] = .string(framing) }
            if let roi {
                let v = roi.split(separator: ",").compactMap { Double($0) }
                params["roi"] = ["x": JSONValue(v[0]), "y": JSONValue(v[1]), "width": JSONValue(v[2]), "height": JSONValue(v[3])]
            }
            try dockctl.run { Defaults.print(try connection.client().call(.defaultsSet, params), json: connection.json) }
        }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Back to DockKit's defaults (root or dockd's user).")
        @OptionGroup var connection: Connection

        func run() throws {
            try dockctl.run { Defaults.print(try connection.client().call(.defaultsSet, ["reset": true]), json: connection.json) }
        }
    }

    static func print(_ d: JSONValue, json: Bool) {
        if json { Output.json(d.object != nil ? d : [:]); return }
        let roi = d["roi"] ?? [:]
        let rect = ["x", "y", "width", "height"].map { Output.number(roi[$0] ?? 0) }.joined(separator: ",")
        Output.line("tracking \(d["tracking"]?.bool == false ? "off" : "on"), framing \(d["framing"]?.text ?? "?"), roi \(rect)")
    }
}
