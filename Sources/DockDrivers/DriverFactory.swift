/// Builds a driver from the configuration's `driver = "…"` and its options (strings, as in the
/// config file). The daemon adds `native` itself.
public enum DriverFactory {
    public struct Failure: Error, CustomStringConvertible, Equatable {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    public static let names = ["visca", "mavlink"]

    /// The usual baud rate of a driver's serial devices when the configuration names none.
    public static func defaultBaud(for name: String) -> Int? {
        switch name {
        case "visca": 9600
        case "mavlink": 115_200
        default: nil
        }
    }

    /// - visca: `address` (1–7, default 1), `profile` (name or path, default generic-ptzoptics),
    ///   `transport` (`serial` | `ip` | `raw-udp` | `raw-tcp`, default serial), `poll_hz` (default 20),
    ///   `name` (the stand's serial in the API, default `visca-<address>`).
    /// - mavlink: `system_id` (ours, default 1), `component_id` (ours, default 191),
    ///   `target_component` (the gimbal's, default 154), `feedback_hz` (default 50), `max_speed`
    ///   (rad/s, default 2), `name`.
    public static func make(name: String, options: [String: String]) throws -> any StandDriver {
        switch name {
        case "visca":
            try check(options, allowed: ["address", "profile", "transport", "poll_hz", "name"])
            let address = try int(options, "address", default: 1, in: 1...7)
            let profile = try VISCAProfile.load(options["profile"] ?? "generic-ptzoptics")
            let transport: VISCADriver.Transport
            switch options["transport"] ?? "serial" {
            case "serial": transport = .serial
            case "raw-tcp": transport = .tcp
            case "ip": transport = .ip
            case "raw-udp": transport = .raw
            case let other: throw Failure("visca transport must be serial, ip, raw-udp or raw-tcp, not \(other)")
            }
            let pollHz = try double(options, "poll_hz", default: 20, in: 1...100)
            return VISCADriver(profile: profile, address: UInt8(address), transport: transport, pollHz: pollHz,
                               name: options["name"])
        case "mavlink":
            try check(options, allowed: ["system_id", "component_id", "target_component", "feedback_hz", "max_speed", "name"])
            var s = MAVLinkGimbalDriver.Settings()
            s.systemID = UInt8(try int(options, "system_id", default: 1, in: 1...255))
            s.componentID = UInt8(try int(options, "component_id", default: 191, in: 1...255))
            s.targetComponent = UInt8(try int(options, "target_component", default: 154, in: 1...255))
            s.feedbackHz = try double(options, "feedback_hz", default: 50, in: 1...500)
            s.maxSpeed = Float(try double(options, "max_speed", default: 2, in: 0.01...20))
            s.name = options["name"]
            return MAVLinkGimbalDriver(settings: s)
        default:
            throw Failure("unknown driver \(name) (known: \(names.joined(separator: ", ")))")
        }
    }

    private static func check(_ options: [String: String], allowed: Set<String>) throws {
        if let bad = options.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw Failure("unknown option \(bad) (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    private static func int(_ o: [String: String], _ key: String, default d: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = o[key] else { return d }
        guard let v = Int(text), range.contains(v) else { throw Failure("\(key) must be an integer in \(range), not \(text)") }
        return v
    }

    private static func double(_ o: [String: String], _ key: String, default d: Double, in range: ClosedRange<Double>) throws -> Double {
        guard let text = o[key] else { return d }
        guard let v = Double(text), range.contains(v) else { throw Failure("\(key) must be a number in \(range), not \(text)") }
        return v
    }
}
