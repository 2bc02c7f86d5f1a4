import ArgumentParser
import DockClient
import Foundation

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Daemon version and each stand's state.")
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            let client = try connection.client()
            let version = try client.call("dockd.version") as? [String: Any] ?? [:]
            let stands = try StandList.fetch(connection, client)
            if connection.json { Output.json(["version": version, "stands": stands]); return }
            let api = version["api"] as? [String: Any] ?? [:]
            Output.line("dockd \(version["version"] ?? "?") (API \(api["major"] ?? "?").\(api["minor"] ?? "?"), protocol \(version["protocol"] ?? "?"))")
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
                if let caps = s["capabilities"] as? [String: Any] {
                    for a in caps["axes"] as? [[String: Any]] ?? [] { Output.line("    " + StandText.axis(a)) }
                    Output.line("    feedback \(caps["feedback_hz"] ?? "?") Hz, buttons: \((caps["buttons"] as? [String] ?? []).joined(separator: ", ")), batteries: \((caps["batteries"] as? [String] ?? []).joined(separator: ", "))")
                }
            }
        }
    }
}

/// `stands.list`, or the one stand `--stand` names (which must exist).
enum StandList {
    static func fetch(_ connection: Connection, _ client: APIClient) throws -> [[String: Any]] {
        let stands = try client.call("stands.list") as? [[String: Any]] ?? []
        guard let wanted = connection.stand else { return stands }
        let match = stands.filter { $0["id"] as? String == wanted }
        guard !match.isEmpty else {
            let known = stands.compactMap { $0["id"] as? String }.filter { !$0.isEmpty }
            throw Fail("no stand \(wanted) (dockd has \(known.isEmpty ? "none with an id" : known.joined(separator: ", ")))",
                       exitCode: ExitStatus.noSuchStand)
        }
        return match
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
                guard let id = s["id"] as? String, !id.isEmpty else {
                    if connection.json { Output.json(s) } else { Output.line(StandText.line(s)) }
                    continue
                }
                let detail = try client.call("stand.get", ["stand": id]) as? [String: Any] ?? [:]
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
        let deadline = seconds.map { Date().addingTimeInterval($0) }
        let stamp = ISO8601DateFormatter()
        stamp.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let show: ([String: Any]) -> Void = { message in
            let stand = StandText.stand(of: message)
            if let wanted = connection.stand, stand != wanted { return }
            let time = stamp.string(from: Date())
            if connection.json {
                var line = message
                line["jsonrpc"] = nil
                line["time"] = time
                line["stand"] = stand ?? NSNull()
                Output.json(line)
            } else {
                Output.line("\(time) \(stand ?? "-") \(StandText.notification(message))")
            }
        }
        let client = try connection.client()
        _ = try client.call("subscribe", ["topics": topics, "motion_rate": rate], onNotification: show)
        while !stop.arrived() {
            let slice = Date().addingTimeInterval(StopSignals.checkInterval)
            if let deadline, deadline <= Date() { break }
            guard let message = try client.receive(until: min(slice, deadline ?? slice)) else { continue }
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
            try connection.leased("tracking.set", ["enabled": state == "on"], hold: hold.hold) { _ in "tracking \(state)" }
        }
    }
}

struct Move: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turn at a rate (rad/s) for a while; the stand stops when the command expires.")
    @OptionGroup var connection: Connection
    @Option(help: "Yaw rate, rad/s (positive = left; write a negative one as --yaw-rate=-0.5).") var yawRate: Double?
    @Option(help: "Pitch rate, rad/s (positive = up).") var pitchRate: Double?
    @Option(help: "Seconds to keep moving.") var seconds: Double = 1

    func validate() throws {
        guard yawRate != nil || pitchRate != nil else { throw ValidationError("give --yaw-rate and/or --pitch-rate") }
    }

    func run() throws {
        try dockctl.run {
            var rates: [String: Any] = [:]
            if let yawRate { rates["yaw"] = yawRate }
            if let pitchRate { rates["pitch"] = pitchRate }
            let end = Date().addingTimeInterval(seconds)
            let client = try connection.client()
            let p = try StandChoice.changes.params(connection, client, rates)
            // Velocity commands expire after 0.5 s (the deadman): renew them while moving.
            repeat {
                _ = try client.call("motion.velocity", p)
                Thread.sleep(forTimeInterval: min(0.2, max(0, end.timeIntervalSinceNow)))
            } while Date() < end
            _ = try client.call("motion.stop", p.filter { $0.key == "stand" })
            if connection.json { Output.json(["stand": p["stand"] ?? NSNull(), "ok": true]) }
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
            var p: [String: Any] = ["relative": relative]
            if let yaw { p["yaw"] = yaw }
            if let pitch { p["pitch"] = pitch }
            if let duration { p["duration"] = duration }
            try MotionWaiter.start("motion.orient", p, connection: connection, wait: wait)
        }
    }
}

struct Animate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Play an animation: yes, no, wakeup, kapow.")
    @OptionGroup var connection: Connection
    @Argument(help: "yes, no, wakeup or kapow") var name: String
    @Flag(help: "Wait until it completes (exit 4 if it does not).") var wait = false

    func run() throws {
        try dockctl.run { try MotionWaiter.start("animation.play", ["name": name], connection: connection, wait: wait) }
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
            var a: [String: Any] = [:]
            if let min { a["min"] = min }
            if let max { a["max"] = max }
            if let maxSpeed { a["max_speed"] = maxSpeed }
            try connection.leased("motion.limits", ["axes": [axis: a]], hold: hold.hold) { _ in "limits set on \(axis)" }
        }
    }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop every motion now: the stand --stand names, or every connected stand. The stop holds until `dockctl resume`.",
        discussion: "Exits 4 when a stand did not acknowledge its STOP (it stops on its own once dockd's heartbeats stop).")
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            let client = try connection.client()
            var stopped: [String] = [], unconfirmed: [String] = []
            func stop(_ stand: String?) throws {
                let reply = try client.call("motion.stop", stand.map { ["stand": $0] } ?? [:]) as? [String: Any] ?? [:]
                guard let stand else { return }
                if reply["confirmed"] as? Bool == false { unconfirmed.append(stand) } else { stopped.append(stand) }
            }
            if let stand = connection.stand {
                try stop(stand)
            } else {
                // Safety needs no choosing: stop them all.
                let stands = try client.call("stands.list") as? [[String: Any]] ?? []
                for s in stands where s["state"] as? String == "connected" {
                    guard let id = s["id"] as? String else { continue }
                    try stop(id)
                }
                if stopped.isEmpty && unconfirmed.isEmpty { try stop(nil) }  // none connected: dockd says so (10)
            }
            if connection.json {
                Output.json(["stopped": stopped, "unconfirmed": unconfirmed])
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
                let stands = try client.call("stands.list") as? [[String: Any]] ?? []
                ids = stands.filter { $0["state"] as? String == "connected" }.compactMap { $0["id"] as? String }
            }
            if ids.isEmpty { _ = try client.call("motion.resume") }  // none connected: dockd says so (10)
            for id in ids { _ = try client.call("motion.resume", ["stand": id]) }
            if connection.json { Output.json(["resumed": ids]) } else { Output.line("resumed \(ids.joined(separator: ", "))") }
        }
    }
}

struct Battery: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Battery states.")
    @OptionGroup var connection: Connection
    func run() throws {
        try dockctl.run {
            let list = try connection.call("battery.get", choice: .reads).result as? [[String: Any]] ?? []
            if connection.json { list.forEach(Output.json); return }
            if list.isEmpty { Output.line("no batteries reported") }
            for b in list {
                let level = (b["level"] as? Double ?? 0) * 100
                Output.line("\(b["name"] ?? "?"): \(Int(level.rounded())) %, \(b["charge"] ?? "?")\((b["low"] as? Bool ?? false) ? ", LOW" : "")")
            }
        }
    }
}

/// Starts a motion and, when asked, follows its progress notifications to the end.
enum MotionWaiter {
    static func start(_ method: String, _ params: [String: Any], connection: Connection, wait: Bool) throws {
        let client = try connection.client()
        let p = try StandChoice.changes.params(connection, client, params)
        if wait { _ = try client.call("subscribe", ["topics": ["motion"], "motion_rate": 1]) }
        // A motion with nowhere to go (a preset recalled where the stand is) completes in the step
        // that accepts it: dockd sends its progress before the reply.
        var early: [[String: Any]] = []
        let result = try client.call(method, p) { early.append($0) } as? [String: Any] ?? [:]
        guard let id = result["id"] as? Int else { return }
        let stand = p["stand"] as? String
        guard wait else {
            if connection.json { Output.json(["stand": stand as Any? ?? NSNull(), "id": id, "state": "running"]) }
            else { Output.line("started motion \(id)") }
            return
        }
        while true {
            let message = early.isEmpty ? try client.receive() : early.removeFirst()
            guard message["method"] as? String == "motion.progress", let progress = message["params"] as? [String: Any],
                  progress["id"] as? Int == id, let state = progress["state"] as? String, state != "running" else { continue }
            if connection.json { Output.json(progress) }
            else { Output.line("motion \(id) \(state)\((progress["reason"] as? String).map { ": \($0)" } ?? "")") }
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
    @OptionGroup var connection: Connection
    @Argument(help: "A tty path (optionally @baud), unix:PATH, rfcomm:ADDRESS[/channel], udp:HOST:PORT, tcp:HOST:PORT, video:PATH or onvif://[user@]host[:port][/profile].") var device: String
    @Option(help: "The stand's protocol (dockd --list-drivers); default: the first that runs over the device's link (onvif for onvif://, v4l2 for video:, else native).") var driver: String?

    func run() throws {
        try dockctl.run {
            var params = ["device": device]
            if let driver { params["driver"] = driver }
            _ = try connection.client().call("stands.attach", params)
            if connection.json { Output.json(["attached": device]) } else { Output.line("attached \(device)") }
        }
    }
}

struct Detach: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Make dockd stop and release a stand (root or dockd's user).")
    @OptionGroup var connection: Connection
    @Argument(help: "The device as it was attached.") var device: String

    func run() throws {
        try dockctl.run {
            _ = try connection.client().call("stands.detach", ["device": device])
            if connection.json { Output.json(["detached": device]) } else { Output.line("detached \(device)") }
        }
    }
}
