import ArgumentParser
import DockClient
import Foundation

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
                let presets = try connection.call("preset.list", choice: .reads).result as? [[String: Any]] ?? []
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
                let preset = try connection.call("preset.save", ["name": name], choice: .changes).result as? [String: Any] ?? [:]
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
                var p: [String: Any] = ["name": name]
                if let duration { p["duration"] = duration }
                try MotionWaiter.start("preset.recall", p, connection: connection, wait: true)
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget a preset ('home' returns to the built-in home pose).")
        @OptionGroup var connection: Connection
        @Argument(help: "The preset's name.") var name: String

        func run() throws {
            try dockctl.run {
                _ = try connection.call("preset.delete", ["name": name], choice: .changes)
                if connection.json { Output.json(["name": name, "deleted": true]) } else { Output.line("deleted preset \(name)") }
            }
        }
    }

    static func print(_ preset: [String: Any], json: Bool) {
        if json { Output.json(preset); return }
        func angle(_ key: String) -> String { (preset[key] as? Double).map { "\(key) \(JSONText.double($0))" } ?? "\(key) -" }
        let zoom = (preset["zoom"] as? Double).map { ", zoom \(JSONText.double($0))" } ?? ""
        let builtIn = preset["saved"] as? Bool == false ? " (built in)" : ""
        Output.line("\(preset["name"] as? String ?? "?"): \(angle("yaw")), \(angle("pitch")) rad\(zoom)\(builtIn)")
    }
}
