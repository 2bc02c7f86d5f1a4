import ArgumentParser
import DockAPI
import DockJSON

/// `dockctl lost-policy`: what the stand does once its subject is gone. Leased as framing is: it
/// reverts as dockctl exits unless `--hold` keeps the connection.
struct LostPolicy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lost-policy",
        abstract: "Once the subject is gone: hold, go to a preset after --after s, or search around where it was lost for --search-seconds s, then the preset (reverts as dockctl exits; --hold keeps it).")
    @OptionGroup var connection: Connection
    @OptionGroup var hold: HoldOption
    @Argument(help: "hold, preset or search") var policy: String
    @Option(help: "Seconds from the last sight of the subject (default 3; hold: 0).") var after: Double?
    @Option(help: "Where preset and search end (default home).") var preset: String?
    @Option(name: .customLong("search-seconds"), help: "How long search sweeps, s (default 10).") var searchSeconds: Double?

    func validate() throws {
        guard ["hold", "preset", "search"].contains(policy) else { throw ValidationError("say hold, preset or search") }
    }

    func run() throws {
        var p: [String: JSONValue] = ["policy": .string(policy)]
        if let after { p["after"] = JSONValue(after) }
        if let preset { p["preset"] = .string(preset) }
        if let searchSeconds { p["search_seconds"] = JSONValue(searchSeconds) }
        try dockctl.run { try connection.leased(.trackingLostPolicy, p, hold: hold.hold) { _ in "lost-subject policy \(policy)" } }
    }
}

/// `dockctl sweep`: a constant-rate yaw panorama. It runs while dockctl holds the connection
/// (until Ctrl-C or SIGTERM: then dockd ends it), as any leased change with `--hold`.
struct SweepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep", abstract: "Sweep the stand's yaw at a constant rate, until Ctrl-C; or end a sweep or tour.",
        subcommands: [Start.self, Stop.self])

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Go to --from, then turn at --rate to --to: once, or back and forth with --repeat. Holds until Ctrl-C, which ends it.")
        @OptionGroup var connection: Connection
        @Option(help: "Yaw to start from, rad (a negative one as --from=-1).") var from: Double
        @Option(help: "Yaw to sweep to, rad.") var to: Double
        @Option(help: "rad/s.") var rate: Double
        @Flag(name: .customLong("repeat"), help: "Back and forth until stopped.") var repeats = false

        func run() throws {
            let p: [String: JSONValue] = ["from": JSONValue(from), "to": JSONValue(to), "rate": JSONValue(rate), "repeat": .bool(repeats)]
            try dockctl.run { try connection.leased(.sweepStart, p, hold: true) { _ in "stand sweeping" } }
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End the sweep or tour running (--force: one another client holds; Ctrl-C on its dockctl does the same).")
        @OptionGroup var connection: Connection

        func run() throws {
            try dockctl.run {
                _ = try connection.call(.sweepStop, choice: .changes)
                if connection.json { Output.json(["ok": true]) } else { Output.line("stopped") }
            }
        }
    }
}

/// `dockctl tour`: presets in turn, each for its dwell time, while dockctl holds the connection.
struct TourCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tour", abstract: "Visit presets in turn with dwell times, until Ctrl-C; or end a sweep or tour.",
        subcommands: [Start.self, SweepCommand.Stop.self])

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Go to each PRESET:DWELL in turn and stay DWELL seconds (--repeat: round again). Holds until Ctrl-C, which ends it.")
        @OptionGroup var connection: Connection
        @Argument(help: "PRESET:DWELL, e.g. stage:10 home:5") var stops: [String]
        @Flag(name: .customLong("repeat"), help: "Round again until stopped.") var repeats = false

        func validate() throws {
            guard !stops.isEmpty else { throw ValidationError("give at least one PRESET:DWELL") }
            for stop in stops where Self.parse(stop) == nil { throw ValidationError("'\(stop)' is not PRESET:DWELL (seconds)") }
        }

        static func parse(_ stop: String) -> (preset: String, dwell: Double)? {
            guard let colon = stop.lastIndex(of: ":"), let dwell = Double(stop[stop.index(after: colon)...]) else { return nil }
            return (String(stop[..<colon]), dwell)
        }

        func run() throws {
            let list: [JSONValue] = stops.compactMap(Self.parse).map { ["preset": .string($0.preset), "dwell": JSONValue($0.dwell)] }
            try dockctl.run { try connection.leased(.tourStart, ["stops": .array(list), "repeat": .bool(repeats)], hold: true) { _ in "stand touring" } }
        }
    }
}
