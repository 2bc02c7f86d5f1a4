import DockProtocol

/// One short human-readable line per message, for `--log-frames`. Names follow PROTOCOL.md.
enum FrameDescription {
    static func describe(_ frame: Frame) -> String {
        "#\(frame.seq)\(frame.ackRequested ? " ack?" : "") \(describe(frame.message))"
    }

    static func describe(_ message: Message) -> String {
        switch message {
        case .hello(let m):
            return "HELLO \(m.major).\(m.minor) heartbeat \(m.heartbeatTimeoutMs) ms host \"\(m.host)\""
        case .helloReply(let m):
            return "HELLO_REPLY \(m.major).\(m.minor) heartbeat \(m.heartbeatTimeoutMs) ms \(m.model) fw \(m.firmware) hw \(m.hardware) serial \(m.serial)"
        case .capabilities(let m):
            let axes = m.axes.map { "\($0.axis)\($0.continuous ? " continuous" : " \(f($0.min))…\(f($0.max))") ≤\(f($0.maxSpeed)) rad/s ≤\(f($0.maxAccel)) rad/s²" }
            return "CAPABILITIES feedback \(m.feedbackHz) Hz imu \(m.imuHz) Hz axes [\(axes.joined(separator: ", "))] batteries \(m.batteries)"
        case .heartbeat(let uptime):
            return "HEARTBEAT uptime \(uptime) ms"
        case .ack(let m):
            return "ACK #\(m.seq) \(typeName(m.type))"
        case .nack(let m):
            return "NACK #\(m.seq) \(typeName(m.type)) \(m.knownCode.map(String.init(describing:)) ?? "code \(m.code)") \"\(m.detail)\""
        case .request(let kind):
            return "REQUEST \(kind)"
        case .velocity(let values):
            return "VELOCITY " + values.map { "\($0.axis) \(f($0.value)) rad/s" }.joined(separator: ", ")
        case .position(let duration, let targets):
            return "POSITION in \(f(duration)) s " + targets.map { "\($0.axis) → \(f($0.position)) rad @ \(f($0.velocity)) rad/s" }.joined(separator: ", ")
        case .stop:
            return "STOP"
        case .limits(let limits):
            return "LIMITS " + limits.map { "\($0.axis) \(f($0.min))…\(f($0.max)) ≤\(f($0.maxSpeed)) ≤\(f($0.maxAccel))" }.joined(separator: ", ")
        case .led(let m):
            return "LED mode \(m.mode) rgb \(m.red),\(m.green),\(m.blue) \(m.onMs)/\(m.offMs) ms"
        case .motors(let enabled):
            return "MOTORS enabled \(enabled.axes.map(\.description))"
        case .feedback(let m):
            return "FEEDBACK t \(seconds(m.timeUs)) " + m.axes.map { a in
                "\(a.axis) \(f(a.position)) rad \(f(a.velocity)) rad/s" + (a.status.isEmpty ? "" : " [\(status(a.status))]")
            }.joined(separator: ", ")
        case .imu(let m):
            return "IMU t \(seconds(m.timeUs)) gyro \(f(m.gyro.x)),\(f(m.gyro.y)),\(f(m.gyro.z)) accel \(f(m.accel.x)),\(f(m.accel.y)),\(f(m.accel.z))"
        case .event(let m):
            let kind = m.knownKind.map(String.init(describing:)) ?? "kind \(m.kind)"
            return "EVENT t \(seconds(m.timeUs)) \(kind) value \(m.value)" + (m.kind == EventKind.customButton.rawValue ? " button \(m.button)" : "")
                + (m.kind == EventKind.zoom.rawValue ? " factor \(f(m.factor))" : "")
        case .battery(let m):
            return "BATTERY \(m.index) \(Int((m.level * 100).rounded())) % \(m.charge)\(m.low ? " low" : "")"
        case .fault(let m):
            let axis = m.axis == 255 ? "" : " axis \(Axis(rawValue: m.axis).map(String.init(describing:)) ?? String(m.axis))"
            return "FAULT t \(seconds(m.timeUs)) severity \(m.severity) code \(m.code)\(axis) \"\(m.text)\""
        }
    }

    private static func typeName(_ raw: UInt8) -> String {
        MessageType(rawValue: raw).map(String.init(describing:)) ?? "type \(raw)"
    }

    private static func status(_ s: AxisStatus) -> String {
        let names: [(AxisStatus, String)] = [(.atMin, "at_min"), (.atMax, "at_max"), (.stalled, "stalled"),
                                             (.fault, "fault"), (.disabled, "disabled"), (.movingToTarget, "moving")]
        return names.filter { s.contains($0.0) }.map(\.1).joined(separator: " ")
    }

    /// Three decimals are enough to read motion by eye; keeps lines short.
    static func f(_ value: Float) -> String {
        guard value.isFinite else { return "\(value)" }
        let scaled = (Double(value) * 1000).rounded()
        let sign = scaled < 0 ? "-" : ""
        let magnitude = Int(abs(scaled))
        let fraction = String(magnitude % 1000)
        return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    static func seconds(_ micros: UInt64) -> String {
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }
}

/// Decodes both directions of the link for `--log-frames`, each with its own decoder so a partial
/// frame in one direction never confuses the other.
struct FrameLog {
    private var incoming = FrameDecoder()
    private var outgoing = FrameDecoder()

    mutating func host(_ bytes: [UInt8], atMicros time: UInt64) { Self.log(&incoming, bytes, "in ", time) }
    mutating func stand(_ bytes: [UInt8], atMicros time: UInt64) { Self.log(&outgoing, bytes, "out", time) }
    /// What the stand sent while nobody read the link: logged, so a test can still see it happen.
    mutating func unread(_ bytes: [UInt8], atMicros time: UInt64) { Self.log(&outgoing, bytes, "out (unread)", time) }

    /// A new link starts a new byte stream.
    mutating func reset() { self = FrameLog() }

    private static func log(_ decoder: inout FrameDecoder, _ bytes: [UInt8], _ direction: String, _ time: UInt64) {
        decoder.feed(bytes) { result in
            let text = switch result {
            case .success(let frame): FrameDescription.describe(frame)
            case .failure(let error): "decode error: \(error.rawValue)"
            }
            Console.err("\(FrameDescription.seconds(time)) \(direction) \(text)")
        }
    }
}
