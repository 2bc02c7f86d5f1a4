import Foundation
import DockProtocol

/// Reads protocol/vectors/*.json (written by the independent Python reference) and turns their
/// JSON frames into Swift frames, so the two implementations check each other.
enum VectorFile {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("protocol/vectors")

    struct MessageVector { let name: String; let bytes: [UInt8]; let frame: [String: Any] }
    struct StreamVector { let name: String; let bytes: [UInt8]; let expect: [[String: String]] }

    static func messages() throws -> [MessageVector] {
        try entries("messages.json").map {
            MessageVector(name: $0["name"] as! String, bytes: hex($0["hex"] as! String), frame: $0["frame"] as! [String: Any])
        }
    }

    static func streams() throws -> [StreamVector] {
        try entries("streams.json").map {
            StreamVector(name: $0["name"] as! String, bytes: hex($0["hex"] as! String), expect: $0["expect"] as! [[String: String]])
        }
    }

    private static func entries(_ file: String) throws -> [[String: Any]] {
        let data = try Data(contentsOf: directory.appendingPathComponent(file))
        return try JSONSerialization.jsonObject(with: data) as! [[String: Any]]
    }

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    struct BadVector: Error { let reason: String }

    /// The JSON frame of PROTOCOL.md §6 as a Swift `Frame`.
    static func frame(_ json: [String: Any]) throws -> Frame {
        let p = json["payload"] as! [String: Any]
        func u<T: FixedWidthInteger>(_ key: String, _ from: [String: Any] = p) -> T { T((from[key] as! NSNumber).uint64Value) }
        func f(_ key: String, _ from: [String: Any] = p) -> Float {
            if from[key] as? String == "NaN" { return .nan }
            return (from[key] as! NSNumber).floatValue
        }
        func s(_ key: String) -> String { p[key] as! String }
        func axes() -> [[String: Any]] { p["axes"] as! [[String: Any]] }
        func axis(_ a: [String: Any]) -> Axis { Axis(name: a["axis"] as! String)! }

        let message: Message
        switch json["type"] as! String {
        case "hello":
            message = .hello(Hello(major: u("major"), minor: u("minor"), heartbeatTimeoutMs: u("heartbeat_timeout_ms"), host: s("host")))
        case "hello_reply":
            message = .helloReply(HelloReply(major: u("major"), minor: u("minor"), heartbeatTimeoutMs: u("heartbeat_timeout_ms"),
                                             model: s("model"), firmware: s("firmware"), hardware: s("hardware"), serial: s("serial")))
        case "capabilities":
            message = .capabilities(Capabilities(
                feedbackHz: u("feedback_hz"), imuHz: u("imu_hz"), features: Features(rawValue: u("features")),
                buttons: Buttons(rawValue: u("buttons")), customButtons: u("custom_buttons"),
                axes: axes().map { a in
                    AxisCapability(axis: axis(a), continuous: (u("flags", a) as UInt8) & 1 != 0, min: f("min", a), max: f("max", a),
                                   maxSpeed: f("max_speed", a), maxAccel: f("max_accel", a), countsPerRev: u("counts_per_rev", a))
                },
                batteries: p["batteries"] as! [String]))
        case "heartbeat": message = .heartbeat(uptimeMs: u("uptime_ms"))
        case "ack": message = .ack(Ack(seq: u("ack_seq"), type: u("ack_type")))
        case "nack": message = .nack(Nack(seq: u("ack_seq"), type: u("ack_type"), rawCode: u("code"), detail: s("detail")))
        case "request": message = .request(RequestKind(rawValue: u("what"))!)
        case "velocity": message = .velocity(axes().map { AxisValue(axis($0), f("velocity", $0)) })
        case "position":
            message = .position(duration: f("duration"), targets: axes().map {
                PositionTarget(axis: axis($0), position: f("position", $0), velocity: f("velocity", $0))
            })
        case "stop": message = .stop
        case "limits":
            message = .limits(axes().map {
                AxisLimits(axis: axis($0), min: f("min", $0), max: f("max", $0), maxSpeed: f("max_speed", $0), maxAccel: f("max_accel", $0))
            })
        case "led":
            message = .led(LedCommand(rawMode: u("mode"), red: u("red"), green: u("green"), blue: u("blue"), onMs: u("on_ms"), offMs: u("off_ms")))
        case "motors": message = .motors(enabled: AxisMask((p["enabled"] as! [String]).map { Axis(name: $0)! }))
        case "feedback":
            message = .feedback(Feedback(timeUs: u("time_us"), axes: axes().map {
                AxisFeedback(axis: axis($0), position: f("position", $0), velocity: f("velocity", $0), effort: f("effort", $0),
                             status: AxisStatus(rawValue: u("status", $0)))
            }))
        case "imu":
            message = .imu(ImuSample(timeUs: u("time_us"), gyro: (f("gyro_x"), f("gyro_y"), f("gyro_z")),
                                     accel: (f("accel_x"), f("accel_y"), f("accel_z"))))
        case "event":
            message = .event(StandEvent(timeUs: u("time_us"), rawKind: u("kind"), value: u("value"), button: u("button"), factor: f("factor")))
        case "battery":
            let flags: UInt8 = u("flags")
            message = .battery(BatteryState(index: u("index"), level: f("level"), charge: ChargeState(rawValue: u("charge"))!, low: flags & 1 != 0))
        case "fault":
            message = .fault(Fault(timeUs: u("time_us"), rawSeverity: u("severity"), rawCode: u("code"), rawAxis: u("axis"), text: s("text")))
        case let other:
            throw BadVector(reason: "unknown type \(other)")
        }
        let flags: UInt8 = u("flags", json)
        return Frame(seq: u("seq", json), ackRequested: flags & 1 != 0, message: message)
    }
}
