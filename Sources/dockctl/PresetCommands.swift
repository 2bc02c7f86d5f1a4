import ArgumentParser
import DockAPI
import DockClient
import DockJSON

/// `dockctl preset`: named poses per stand, kept by dockd across restarts. `go` waits for the
/// motion to end: the motion is this connection's, and stops when dockctl exits (as any client's).
struct PresetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preset",
        abstract: "Save, recall, list and delete a stand's presets (named poses; 'home' is built in).",
        subcommands: [List.self, Save.self, Go.self, Delete.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the stand's presets.")
        @OptionGroup var connection: Connection

        func run() throws {
            try dockctl.run {
                let presets = try connection.call(.presetList, choice: .reads).result.array ?? []
                for preset in presets { PresetCommand.print(preset, json: connection.json) }
            }
        }
    }

    struct Save: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Save where the stand points now under a name (replacing one of that name).")
        @OptionGroup var connection: Connection
        @Argument(help: "1…32 letters, digits, '-' or '_'.") var name: String

        func run() throws {
            try dockctl.run {
                let preset = try connection.call(.presetSave, ["name": .string(name)], choice: .changes).result
                PresetCommand.print(preset, json: connection.json)
            }
        }
    }

    struct Go: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn the stand to a preset and wait until it is there (exit 4 if the motion does not complete).")
        @OptionGroup var connection: Connection
        @Argument(help: "The preset's name.") var name: String
        @Option(help: "Seconds to take (default: as fast as the limits allow).") var duration: Double?

        func run() throws {
            try dockctl.run {
                var p: [String: JSONValue] = ["name": .string(name)]
                if let duration { p["duration"] = JSONValue(duration) }
                try MotionWaiter.start(.presetRecall, p, connection: connection, wait: true)
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget a preset ('home' returns to the built-in home pose).")
        @OptionGroup var connection: Connection
        @Argument(help: "The preset's name.") var name: String

        func run() throws {
            try dockctl.run {
                let result = try connection.call(.presetDelete, ["name": .string(name)], choice: .changes).result
                if let why = result["camera_error"]?.string { note("the camera still holds its copy: \(why)") }
                if connection.json { Output.json(["name": .string(name), "deleted": true]) } else { Output.line("deleted preset \(name)") }
            }
        }
    }

    static func print(_ preset: JSONValue, json: Bool) {
        if let why = preset["camera_error"]?.string { note("saved in dockd, not in the camera: \(why)") }
        if json { Output.json(preset); return }
        func angle(_ key: String) -> String { preset[key].flatMap { $0.double == nil ? nil : "\(key) \(Output.number($0))" } ?? "\(key) -" }
        let zoom = preset["zoom"].flatMap { $0.double == nil ? nil : ", zoom \(Output.number($0))" } ?? ""
        let builtIn = preset["saved"]?.bool == false ? " (built in)" : ""
        let camera = preset["camera"]?["memory"].map { ", camera memory \(Output.number($0))" }
            ?? preset["camera"]?["token"]?.string.map { ", camera token \($0)" } ?? ""
        Output.line("\(preset["name"]?.string ?? "?"): \(angle("yaw")), \(angle("pitch")) rad\(zoom)\(camera)\(builtIn)")
    }
}
