import ArgumentParser
import DockClient
import Foundation

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Daemon version and each stand's state.")
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            let version = try connection.call("dockd.version") as? [String: Any] ?? [:]
            let stands = try connection.call("stands.list") as? [[String: Any]] ?? []
            if connection.json { printJSON(["version": version, "stands": stands]); return }
            let api = version["api"] as? [String: Any] ?? [:]
            print("dockd \(version["version"] ?? "?") (API \(api["major"] ?? "?").\(api["minor"] ?? "?"), protocol \(version["protocol"] ?? "?"))")
            if stands.isEmpty { print("no stands configured") }
            for s in stands { print(StandText.line(s)) }
        }
    }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stands with identity and capabilities.")
    @OptionGroup var connection: Connection

    func run() throws {
        try dockctl.run {
            let stands = try connection.call("stands.list") as? [[String: Any]] ?? []
            if connection.json { printJSON(stands); return }
            for s in stands {
                print(StandText.line(s))
                if let caps = s["capabilities"] as? [String: Any] {
                    for a in caps["axes"] as? [[String: Any]] ?? [] { print("    " + StandText.axis(a)) }
                    print("    feedback \(caps["feedback_hz"] ?? "?") Hz, buttons: \((caps["buttons"] as? [String] ?? []).joined(separator: ", ")), batteries: \((caps["batteries"] as? [String] ?? []).joined(separator: ", "))")
                }
            }
        }
    }
}

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Follow notifications live (Ctrl-C to stop).")
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

/// Subscribes and prints notifications as they come, until `seconds` pass (or forever).
func follow(_ connection: Connection, topics: [String], rate: Double, seconds: Double?) throws {
    try dockctl.run {
        let deadline = seconds.map { Date().addingTimeInterval($0) }
        let show: ([String: Any]) -> Void = { message in
            // Straight to the fd, unbuffered: `dockctl watch | grep …` sees each line as it happens.
            if connection.json { printJSON(message) } else { FileHandle.standardOutput.write(Data((StandText.notification(message) + "\n").utf8)) }
        }
        do {
            let client = try connection.client()
            _ = try client.call("subscribe", ["topics": topics, "motion_rate": rate], onNotification: show)
            while deadline.map({ Date() < $0 }) ?? true {
                guard let message = try client.receive(until: deadline) else { break }
                show(message)
            }
        } catch let failure as APIClient.Failure { throw Fail(failure) }
    }
}

struct Track: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turn system tracking on or off.")
    @OptionGroup var connection: Connection
    @Argument(help: "on or off") var state: String

    func validate() throws {
        guard ["on", "off"].contains(state) else { throw ValidationError("say on or off") }
    }

    func run() throws {
        try dockctl.run { _ = try connection.call("tracking.set", ["enabled": state == "on"]); print("tracking \(state)") }
    }
}

struct Move: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turn at a rate (rad/s) for a while; the stand stops when the command expires.")
    @OptionGroup var connection: Connection
    @Option(help: "Yaw rate, rad/s (positive = left; write a negative one as --yaw-rate=-0.5).") var yawRate: Double?
    @Option(help: "Pitch rate, rad/s (positive = up).") var pitchRate: Double?
    @Option(help: "Seconds to keep moving.") var seconds: Double = 1

    func run() throws {
        try dockctl.run {
            var p: [String: Any] = [:]
            if let yawRate { p["yaw"] = yawRate }
            if let pitchRate { p["pitch"] = pitchRate }
            guard !p.isEmpty else { throw Fail(.init(description: "give --yaw-rate and/or --pitch-rate", exitCode: 64)) }
            let end = Date().addingTimeInterval(seconds)
            do {
                let client = try connection.client()
                // Velocity commands expire after 0.5 s (the deadman): renew them while moving.
                repeat {
                    _ = try client.call("motion.velocity", connection.params(p))
                    Thread.sleep(forTimeInterval: min(0.2, max(0, end.timeIntervalSinceNow)))
                } while Date() < end
                _ = try client.call("motion.stop", connection.params())
            } catch let failure as APIClient.Failure { throw Fail(failure) }
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
    @Flag(help: "Wait until the motion completes.") var wait = false

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
    @Flag(help: "Wait until it completes.") var wait = false

    func run() throws {
        try dockctl.run { try MotionWaiter.start("animation.play", ["name": name], connection: connection, wait: wait) }
    }
}

struct Limits: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Narrow an axis's range (rad) and speed (rad/s) for this session.")
    @OptionGroup var connection: Connection
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
            _ = try connection.call("motion.limits", ["axes": [axis: a]])
            print("limits set (they last while this command's connection does: use the API to hold them)")
        }
    }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop every motion now.")
    @OptionGroup var connection: Connection
    func run() throws { try dockctl.run { _ = try connection.call("motion.stop"); print("stopped") } }
}

struct Battery: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Battery states.")
    @OptionGroup var connection: Connection
    func run() throws {
        try dockctl.run {
            let list = try connection.call("battery.get") as? [[String: Any]] ?? []
            if connection.json { printJSON(list); return }
            if list.isEmpty { print("no batteries reported") }
            for b in list {
                let level = (b["level"] as? Double ?? 0) * 100
                print("\(b["name"] ?? "?"): \(Int(level.rounded())) %, \(b["charge"] ?? "?")\((b["low"] as? Bool ?? false) ? ", LOW" : "")")
            }
        }
    }
}

/// Starts a motion and, when asked, follows its progress notifications to the end.
enum MotionWaiter {
    static func start(_ method: String, _ params: [String: Any], connection: Connection, wait: Bool) throws {
        do {
            let client = try connection.client()
            if wait { _ = try client.call("subscribe", ["topics": ["motion"], "motion_rate": 1]) }
            let result = try client.call(method, connection.params(params)) as? [String: Any] ?? [:]
            guard let id = result["id"] as? Int else { return }
            guard wait else { print("started motion \(id)"); return }
            while true {
                let message = try client.receive()
                guard message["method"] as? String == "motion.progress", let p = message["params"] as? [String: Any],
                      p["id"] as? Int == id else { continue }
                let state = p["state"] as? String ?? "?"
                if state != "running" {
                    print("motion \(id) \(state)\((p["reason"] as? String).map { ": \($0)" } ?? "")")
                    if state != "completed" { throw Fail(.init(description: "motion \(state)", exitCode: 1)) }
                    return
                }
            }
        } catch let failure as APIClient.Failure { throw Fail(failure) }
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
    @Argument(help: "A tty path (optionally @baud), unix:PATH or rfcomm:ADDRESS[/channel].") var device: String

    func run() throws {
        try dockctl.run { _ = try connection.call("stands.attach", ["device": device]); print("attached \(device)") }
    }
}

struct Detach: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Make dockd stop and release a stand (root or dockd's user).")
    @OptionGroup var connection: Connection
    @Argument(help: "The device as it was attached.") var device: String

    func run() throws {
        try dockctl.run { _ = try connection.call("stands.detach", ["device": device]); print("detached \(device)") }
    }
}
