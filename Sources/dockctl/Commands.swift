import ArgumentParser
import DockAPI
import DockClient
import DockJSON

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Daemon version and each stand's state.")
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            let client = try connection.client()
            let version = try client.call(.version)
            let stands = try StandList.fetch(connection, client)
            if connection.json { Output.json(["version": version, "stands": .array(stands)]); return }
            let api = version["api"] ?? [:]
            Output.line("dockd \(version["version"]?.text ?? "?") (API \(api["major"]?.text ?? "?").\(api["minor"]?.text ?? "?"), protocol \(version["protocol"]?.text ?? "?"))")
            if stands.isEmpty { Output.line("no stands configured") }
            for s in stands { Output.line(StandText.line(s)) }
        }
    }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stands with identity and capabilities.")
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            for s in try StandList.fetch(connection, connection.client()) {
                if connection.json { Output.json(s); continue }
                Output.line(StandText.line(s))
                if let caps = s["capabilities"], caps.object != nil {
                    for a in caps["axes"]?.array ?? [] { Output.line("    " + StandText.axis(a)) }
                    func names(_ key: String) -> String {
                        let names = (caps[key]?.array ?? []).compactMap(\.string)
                        return names.isEmpty ? "none" : names.joined(separator: ", ")
                    }
                    Output.line("    feedback \(caps["feedback_hz"]?.text ?? "?") Hz, buttons: \(names("buttons")), batteries: \(names("batteries"))")
                }
            }
        }
    }
}

/// `stands.list`, or the one stand `--stand` names (which must exist).
enum StandList {
    static func fetch(_ connection: Connection, _ client: APIClient) throws -> [JSONValue] {
        let stands = try client.call(.standsList).array ?? []
        guard let wanted = connection.stand else { return stands }
        let match = stands.filter { $0["id"]?.string == wanted }
        guard !match.isEmpty else {
            let known = stands.compactMap { $0["id"]?.string }.filter { !$0.isEmpty }
            throw Fail("no stand \(wanted) (dockd has \(known.isEmpty ? "none with an id" : known.joined(separator: ", ")))",
                       exitCode: ExitStatus.noSuchStand)
        }
        return match
    }

    /// The ids of the connected stands, in dockd's order.
    static func connectedIDs(_ client: APIClient) throws -> [String] {
        (try client.call(.standsList).array ?? []).filter { $0["state"]?.string == "connected" }.compactMap { $0["id"]?.string }
    }
}

struct Diag: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Each stand's link counters (frames, COBS/CRC errors, sequence gaps, round trip), reconnects and last error.")
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            let client = try connection.client()
            let stands = try StandList.fetch(connection, client)
            if stands.isEmpty && !connection.json { Output.line("no stands configured") }
            for s in stands {
                // A stand that never handshook has no id: stand.get cannot name it.
                guard let id = s["id"]?.string, !id.isEmpty else {
                    if connection.json { Output.json(s) } else { Output.line(StandText.line(s)) }
                    continue
                }
                let detail = try client.call(.standGet, ["stand": .string(id)])
                if connection.json { Output.json(detail) } else { StandText.diagnostics(detail).forEach(Output.line) }
            }
        }
    }
}

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Follow notifications live, each line with its time and stand (Ctrl-C to stop).")
    @OptionGroup var connection: Connection
    @Argument(help: "Topics: stands, motion, events, battery, tracking, logs.")
    var topics: [String] = ["stands", "events", "battery"]
    @Option(help: "Motion notifications per second.")
    var rate: Double = 5
    @Option(help: "Stop after this many seconds.")
    var seconds: Double?

    func run() throws {
        try follow(connection, topics: topics, rate: rate, seconds: seconds)
    }
}

/// Subscribes and prints notifications as they come, until `seconds` pass or a stop signal comes
/// (exit 0); with `--stand`, that stand's only.
func follow(_ connection: Connection, topics: [String], rate: Double, seconds: Double?) throws {
    let stop = StopSignals()
    try dockctl.run {
        let deadline = seconds.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        let show: (JSONValue) -> Void = { message in
            let stand = StandText.stand(of: message)
            if let wanted = connection.stand, stand != wanted { return }
            let time = utcTimestamp()
            if connection.json {
                var line = message.object ?? [:]
                line["jsonrpc"] = nil
                line["time"] = .string(time)
                line["stand"] = stand.map(JSONValue.string) ?? .null
                Output.json(.object(line))
            } else {
                Output.line("\(time) \(stand ?? "-") \(StandText.notification(message))")
            }
        }
        let client = try connection.client()
        _ = try client.call(.subscribe, ["topics": .array(topics.map(JSONValue.string)), "motion_rate": JSONValue(rate)], onNotification: show)
        while !stop.arrived() {
            var wait = StopSignals.checkInterval
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero { break }
                wait = min(wait, left.seconds)
            }
            guard let message = try client.receive(within: wait) else { continue }
            show(message)
        }
    }
}

struct Track: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn system tracking on or off (reverts as dockctl exits; --hold keeps it).")
    @OptionGroup var connection: Connection
    @OptionGroup var hold: HoldOption
    @Argument(help: "on or off") var state: String

    func validate() throws {
        guard ["on", "off"].contains(state) else { throw ValidationError("say on or off") }
    }

    func run() throws {
        try dockctl.run {
            try connection.leased(.trackingSet, ["enabled": .bool(state == "on")], hold: hold.hold) { _ in "tracking \(state)" }
        }
    }
}

struct Move: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn at a rate (rad/s) for --seconds, then give the stand back: it stops and tracking steers again.")
    @OptionGroup var connection: Connection
    @Option(help: "Yaw rate, rad/s (positive = left; write a negative one as --yaw-rate=-0.5).") var yawRate: Double?
    @Option(help: "Pitch rate, rad/s (positive = up).") var pitchRate: Double?
    @Option(help: "Seconds to keep moving.") var seconds: Double = 1

    func validate() throws {
        guard yawRate != nil || pitchRate != nil else { throw ValidationError("give --yaw-rate and/or --pitch-rate") }
    }

    func run() throws {
        try dockctl.run {
            var rates: [String: JSONValue] = [:]
            if let yawRate { rates["yaw"] = JSONValue(yawRate) }
            if let pitchRate { rates["pitch"] = JSONValue(pitchRate) }
            let end = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
            let client = try connection.client()
            let p = try StandChoice.changes.params(connection, client, rates)
            // Velocity commands expire after 0.5 s (the deadman): renew them while moving.
            repeat {
                _ = try client.call(.motionVelocity, p)
                pause(min(0.2, ContinuousClock.now.duration(to: end).seconds))
            } while ContinuousClock.now < end
            // Ends as a client that exits does: the motion stops and everything reverts. A stop
            // would hold for a dockctl that is gone, and keep tracking from steering until a resume.
            _ = try client.call(.leaseRelease)
            if connection.json { Output.json(["stand": p["stand"] ?? .null, "ok": true]) }
        }
    }
}

struct Orient: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turn to an orientation (rad), absolute or relative.")
    @OptionGroup var connection: Connection
    @Option(help: "Yaw, rad.") var yaw: Double?
    @Option(help: "Pitch, rad.") var pitch: Double?
    @Flag(help: "Relative to the present orientation.") var relative = false
    @Option(help: "Seconds to take (default: as fast as the limits allow).") var duration: Double?
    @Flag(help: "Wait until the motion completes (exit 4 if it does not).") var wait = false

    func run() throws {
        try dockctl.run {
            var p: [String: JSONValue] = ["relative": .bool(relative)]
            if let yaw { p["yaw"] = JSONValue(yaw) }
            if let pitch { p["pitch"] = JSONValue(pitch) }
            if let duration { p["duration"] = JSONValue(duration) }
            try MotionWaiter.start(.motionOrient, p, connection: connection, wait: wait)
        }
    }
}

struct Animate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Play an animation: yes, no, wakeup, kapow.")
    @OptionGroup var connection: Connection
    @Argument(help: "yes, no, wakeup or kapow") var name: String
    @Flag(help: "Wait until it completes (exit 4 if it does not).") var wait = false

    func run() throws {
        try dockctl.run { try MotionWaiter.start(.animationPlay, ["name": .string(name)], connection: connection, wait: wait) }
    }
}

struct Limits: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Narrow an axis's range (rad) and speed (rad/s) (reverts as dockctl exits; --hold keeps it).")
    @OptionGroup var connection: Connection
    @OptionGroup var hold: HoldOption
    @Argument(help: "yaw, pitch or roll") var axis: String
    @Option(help: "Minimum, rad.") var min: Double?
    @Option(help: "Maximum, rad.") var max: Double?
    @Option(help: "Maximum speed, rad/s.") var maxSpeed: Double?

    func run() throws {
        try dockctl.run {
            var a: [String: JSONValue] = [:]
            if let min { a["min"] = JSONValue(min) }
            if let max { a["max"] = JSONValue(max) }
            if let maxSpeed { a["max_speed"] = JSONValue(maxSpeed) }
            try connection.leased(.motionLimits, ["axes": .object([axis: .object(a)])], hold: hold.hold) { _ in "limits set on \(axis)" }
        }
    }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop every motion now: the stand --stand names, or every connected stand.",
        discussion: """
            The stop holds against tracking and against the program that held the stand when it came (its \
            renewed motion is refused), until `dockctl resume` (once that program has let the stand go), its \
            motion.resume, or a motion \
            command from any other client (another dockctl command too: each is a client of its own). \
            Exits 4 when a stand did not acknowledge its STOP (it stops on its own once dockd's heartbeats stop).
            """)
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            let client = try connection.client()
            var stopped: [String] = [], unconfirmed: [String] = []
            func stop(_ stand: String?) throws {
                let reply = try client.call(.motionStop, stand.map { ["stand": .string($0)] } ?? [:])
                guard let stand else { return }
                if reply["confirmed"]?.bool == false { unconfirmed.append(stand) } else { stopped.append(stand) }
            }
            if let stand = connection.stand {
                try stop(stand)
            } else {
                // Safety needs no choosing: stop them all.
                for id in try StandList.connectedIDs(client) { try stop(id) }
                if stopped.isEmpty && unconfirmed.isEmpty { try stop(nil) }  // none connected: dockd says so (10)
            }
            if connection.json {
                Output.json(["stopped": .array(stopped.map(JSONValue.string)), "unconfirmed": .array(unconfirmed.map(JSONValue.string))])
            } else {
                if !stopped.isEmpty { Output.line("stopped \(stopped.joined(separator: ", "))") }
                for id in unconfirmed { Output.line("\(id): STOP sent but not acknowledged by the stand") }
            }
            if !unconfirmed.isEmpty { throw Fail("the stand did not acknowledge the STOP", exitCode: ExitStatus.motionFailed) }
        }
    }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "End a stop (`dockctl stop`): the stand --stand names, or every connected stand. Nothing moves by itself.")
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            let client = try connection.client()
            var ids: [String] = []
            if let stand = connection.stand {
                ids = [stand]
            } else {
                ids = try StandList.connectedIDs(client)
            }
            if ids.isEmpty { _ = try client.call(.motionResume) }  // none connected: dockd says so (10)
            for id in ids { _ = try client.call(.motionResume, ["stand": .string(id)]) }
            if connection.json { Output.json(["resumed": .array(ids.map(JSONValue.string))]) } else { Output.line("resumed \(ids.joined(separator: ", "))") }
        }
    }
}

struct Battery: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Battery states.")
    @OptionGroup var connection: Connection
    func run() throws {
        try dockctl.run {
            let list = try connection.call(.batteryGet, choice: .reads).result.array ?? []
            if connection.json { list.forEach(Output.json); return }
            if list.isEmpty { Output.line("no batteries reported") }
            for b in list {
                let level = (b["level"]?.double ?? 0) * 100
                Output.line("\(b["name"]?.text ?? "?"): \(Int(level.rounded())) %, \(b["charge"]?.text ?? "?")\((b["low"]?.bool ?? false) ? ", LOW" : "")")
            }
        }
    }
}

/// Starts a motion and, when asked, follows its progress notifications to the end.
enum MotionWaiter {
    static func start(_ method: APIMethod, _ params: [String: JSONValue], connection: Connection, wait: Bool) throws {
        let client = try connection.client()
        let p = try StandChoice.changes.params(connection, client, params)
        if wait { _ = try client.call(.subscribe, ["topics": ["motion"], "motion_rate": 1]) }
        // A motion with nowhere to go (a preset recalled where the stand is) completes in the step
        // that accepts it: dockd sends its progress before the reply.
        var early: [JSONValue] = []
        let result = try client.call(method, p) { early.append($0) }
        guard let id = result["id"]?.double.map(Int.init) else { return }
        guard wait else {
            if connection.json { Output.json(["stand": p["stand"] ?? .null, "id": JSONValue(id), "state": "running"]) }
            else { Output.line("started motion \(id)") }
            return
        }
        while true {
            let message = early.isEmpty ? try client.receive() : early.removeFirst()
            guard message["method"]?.string == "motion.progress", let progress = message["params"],
                  progress["id"]?.double == Double(id), let state = progress["state"]?.string, state != "running" else { continue }
            if connection.json { Output.json(progress) }
            else { Output.line("motion \(id) \(state)\(progress["reason"]?.string.map { ": \($0)" } ?? "")") }
            guard state == "completed" else { throw Fail("motion \(id) \(state)", exitCode: ExitStatus.motionFailed) }
            return
        }
    }
}

struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Follow button, docking, tracking and fault events (Ctrl-C to stop).")
    @OptionGroup var connection: Connection
    @Option(help: "Stop after this many seconds.") var seconds: Double?

    func run() throws {
        try follow(connection, topics: ["events", "logs"], rate: 1, seconds: seconds)
    }
}

struct Attach: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Make dockd own a stand (root or dockd's user).")
    @OptionGroup var connection: DaemonConnection
    @Argument(help: "A tty path (optionally @baud), unix:PATH, rfcomm:ADDRESS[/channel], udp:HOST:PORT, tcp:HOST:PORT, video:PATH or onvif://[user@]host[:port][/profile].") var device: String
    @Option(help: "The stand's protocol (dockd --list-drivers); default: the first that runs over the device's link (onvif for onvif://, v4l2 for video:, else native).") var driver: String?

    func run() throws {
        try dockctl.run {
            var params: [String: JSONValue] = ["device": .string(device)]
            if let driver { params["driver"] = .string(driver) }
            _ = try connection.client().call(.standsAttach, params)
            if connection.json { Output.json(["attached": .string(device)]) } else { Output.line("attached \(device)") }
        }
    }
}

struct Detach: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Make dockd stop and release a stand (root or dockd's user).")
    @OptionGroup var connection: DaemonConnection
    @Argument(help: "The device as it was attached.") var device: String

    func run() throws {
        try dockctl.run {
            _ = try connection.client().call(.standsDetach, ["device": .string(device)])
            if connection.json { Output.json(["detached": .string(device)]) } else { Output.line("detached \(device)") }
        }
    }
}
