import DockDrivers
import DockProtocol
import VirtualTime

/// The scripted VISCA camera (VISCAScriptedCamera.swift) on the virtual host's clock, with a lens:
/// its zoom position inquiry answered at once (the wide end), as every shipped profile has a zoom.
struct VISCACameraPeer: VirtualPeer {
    private(set) var camera = ScriptedCamera()
    private var buffer: [UInt8] = []

    mutating func receive(_ bytes: [UInt8], atMicros micros: UInt64) -> [UInt8] {
        var answer: [UInt8] = []
        for b in bytes {
            buffer.append(b)
            guard b == 0xFF else { continue }
            if buffer == VISCA.zoomInquiry(address: 1) {
                answer += [0x90, 0x50, 0, 0, 0, 0, 0xFF]
            } else {
                camera.feed(buffer, at: Double(micros) / 1e6)
            }
            buffer = []
        }
        return answer
    }

    mutating func advance(toMicros micros: UInt64) -> [UInt8] { camera.due(at: Double(micros) / 1e6) }

    mutating func endSession(atMicros micros: UInt64) {}
}

/// A MAVLink gimbal device: its HEARTBEAT every second, its attitude at 50 Hz turned by the rates
/// (or set to the attitude) it is sent, and its information when asked.
struct MAVLinkGimbalPeer: VirtualPeer {
    /// GIMBAL_DEVICE_INFORMATION as pymavlink encodes it (Fixtures/mavlink_frames.json).
    let information: [UInt8]
    /// Where it points, FRD, rad, and how fast it turns.
    private(set) var yaw = 0.0, pitch = 0.0
    private var yawRate = 0.0, pitchRate = 0.0
    private var decoder = MAVLinkDecoder()
    private var time: UInt64 = 0, nextStatus: UInt64 = 0, nextHeartbeat: UInt64 = 0
    private var sequence: UInt8 = 0

    init(information: [UInt8]) { self.information = information }

    mutating func receive(_ bytes: [UInt8], atMicros micros: UInt64) -> [UInt8] {
        var answer: [UInt8] = []
        for case .success(let frame) in decoder.feed(bytes) {
            if frame.messageID == MAVLink.ID.commandLong.rawValue { answer += information }
            guard frame.messageID == MAVLink.ID.gimbalDeviceSetAttitude.rawValue else { continue }
            let set = MAVGimbalDeviceSetAttitude(payload: frame.payload)
            if set.angularVelocity.z.isNaN {
                let target = MAVLinkGimbalDriver.yawPitch(set.q)
                (yaw, pitch, yawRate, pitchRate) = (Double(target.yaw), Double(target.pitch), 0, 0)
            } else {
                (yawRate, pitchRate) = (Double(set.angularVelocity.z), Double(set.angularVelocity.y))
            }
        }
        return answer
    }

    mutating func advance(toMicros micros: UInt64) -> [UInt8] {
        let dt = Double(micros - time) / 1e6
        (yaw, pitch, time) = (yaw + yawRate * dt, pitch + pitchRate * dt, micros)
        var out: [UInt8] = []
        if micros >= nextHeartbeat {
            nextHeartbeat = micros + 1_000_000
            out += frame(.heartbeat, MAVHeartbeat(type: MAVHeartbeat.typeGimbal, autopilot: MAVHeartbeat.autopilotInvalid).payload)
        }
        if micros >= nextStatus {
            nextStatus = micros + 20_000
            // time_boot_ms, the attitude, its rates (x, y, z), no failures, no flags, the target.
            var p: [UInt8] = [0, 0, 0, 0]
            for v in MAVLinkGimbalDriver.quaternion(yaw: yaw, pitch: pitch) + [0, Float(pitchRate), Float(yawRate)] {
                p += withUnsafeBytes(of: v.bitPattern.littleEndian, Array.init)
            }
            out += frame(.gimbalDeviceAttitudeStatus, p + [0, 0, 0, 0, 0, 0, 1, 191])
        }
        return out
    }

    mutating func endSession(atMicros micros: UInt64) {}

    private mutating func frame(_ id: MAVLink.ID, _ payload: [UInt8]) -> [UInt8] {
        sequence &+= 1
        return MAVLink.encode(id, payload: payload, sequence: sequence, systemID: 1, componentID: 154)
    }
}

/// A V4L2 camera as its device adapter (DockIO's VideoDeviceLink) answers: absolute pan and tilt
/// controls in arc-seconds, each set taken at once, each read answered from what was set.
struct V4L2CameraPeer: VirtualPeer {
    static let pan = V4L2Wire.Control.panAbsolute.rawValue, tilt = V4L2Wire.Control.tiltAbsolute.rawValue
    private(set) var values: [UInt32: Int32] = [:]
    private var buffer: [UInt8] = []

    mutating func receive(_ bytes: [UInt8], atMicros micros: UInt64) -> [UInt8] {
        buffer += bytes
        var answer: [UInt8] = []
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: buffer[..<newline], as: UTF8.self)
            buffer.removeSubrange(...newline)
            switch V4L2Wire.request(Substring(line)) {
            case .query?:
                answer += V4L2Wire.encode(.control(.init(id: Self.pan, minimum: -468_000, maximum: 468_000, step: 3600, defaultValue: 0, flags: 0x80)))
                answer += V4L2Wire.encode(.control(.init(id: Self.tilt, minimum: -324_000, maximum: 324_000, step: 3600, defaultValue: 0, flags: 0x80)))
                answer += V4L2Wire.encode(.card("Virtual PTZ"))
            case .get(let ids)?: answer += V4L2Wire.encode(.values(ids.map { ($0, values[$0] ?? 0) }))
            case .set(let set, _)?:
                for (id, value) in set { values[id] = value }
                answer += V4L2Wire.encode(.values(set))
            case .extensionUnit(_, let unit, _, _, _)?: answer += V4L2Wire.encode(.unit(unit))
            case .extensionUnitRead(_, let unit, _)?: answer += V4L2Wire.encode(.unitRead(unit, []))
            case nil: answer += V4L2Wire.encode(.failure(errno: 22, text: "EINVAL"))
            }
        }
        return answer
    }

    mutating func advance(toMicros micros: UInt64) -> [UInt8] { [] }
    mutating func endSession(atMicros micros: UInt64) {}
}

/// A Pelco-D pan/tilt unit at address 1: it turns at the speeds it is sent (`degreesPerSecondAtTop`
/// at 0x3F), stops at a stop, and answers the extended position queries in hundredths of a degree
/// (pan growing to the right, tilt downwards) when `answersQueries`. It acknowledges nothing.
struct PelcoDUnitPeer: VirtualPeer {
    var answersQueries = true
    var degreesPerSecondAtTop = 0.6 * 180 / Double.pi
    /// Where it points, degrees: pan to the right, tilt downwards.
    private(set) var pan = 0.0, tilt = 0.0
    private var panSpeed = 0.0, tiltSpeed = 0.0
    private(set) var received: [[UInt8]] = []
    private var buffer: [UInt8] = []
    private var time: UInt64 = 0

    var still: Bool { panSpeed == 0 && tiltSpeed == 0 }

    init(answersQueries: Bool = true) { self.answersQueries = answersQueries }

    mutating func receive(_ bytes: [UInt8], atMicros micros: UInt64) -> [UInt8] {
        _ = advance(toMicros: micros)
        var answer: [UInt8] = []
        for byte in bytes {
            if buffer.isEmpty && byte != 0xFF { continue }
            buffer.append(byte)
            guard buffer.count == 7 else { continue }
            let message = buffer
            buffer = []
            guard message[1] == 1, message[1...5].reduce(0, &+) == message[6] else { continue }
            received.append(message)
            answer += act(on: message)
        }
        return answer
    }

    private mutating func act(on message: [UInt8]) -> [UInt8] {
        let command2 = message[3], unit = degreesPerSecondAtTop / 63
        switch command2 {
        case 0x51 where answersQueries: return position(0x59, pan)
        case 0x53 where answersQueries: return position(0x5B, tilt)
        case 0x00...0x1F where command2 & 0x01 == 0:
            let panSign = command2 & 0x02 != 0 ? 1.0 : command2 & 0x04 != 0 ? -1.0 : 0
            let tiltSign = command2 & 0x10 != 0 ? 1.0 : command2 & 0x08 != 0 ? -1.0 : 0
            (panSpeed, tiltSpeed) = (panSign * Double(message[4]) * unit, tiltSign * Double(message[5]) * unit)
            return []
        default: return []
        }
    }

    private func position(_ command2: UInt8, _ degrees: Double) -> [UInt8] {
        let hundredths = (Int((degrees * 100).rounded()) % 36_000 + 36_000) % 36_000
        let body: [UInt8] = [1, 0, command2, UInt8(hundredths >> 8), UInt8(hundredths & 0xFF)]
        return [0xFF] + body + [body.reduce(0, &+)]
    }

    mutating func advance(toMicros micros: UInt64) -> [UInt8] {
        let dt = Double(micros - min(micros, time)) / 1e6
        (pan, tilt, time) = (pan + panSpeed * dt, max(-90, min(90, tilt + tiltSpeed * dt)), max(time, micros))
        return []
    }

    mutating func endSession(atMicros micros: UInt64) {}
}

/// Two Feetech STS servos on one bus (ids 1 and 2), written from the protocol's description (the
/// vendor SDK's packet layout, LeRobot's STS/SMS control table), not from the driver's codec: each
/// keeps its control table, turns toward its goal position (42) at its goal speed (46, steps/s; 0
/// is its top speed) while its torque (40) is on, and reports present position (56) and speed (58,
/// sign in bit 15). PING, READ and WRITE are answered by a status packet carrying `errors[id]`;
/// SYNC WRITE by none.
struct FeetechServosPeer: VirtualPeer {
    static let topSpeed = 3400.0
    /// Each servo's control table (RAM addresses as the STS manual numbers them).
    private(set) var tables: [UInt8: [UInt8]] = [:]
    /// Where each servo is, in fractional steps.
    private(set) var positions: [UInt8: Double] = [:]
    /// The error byte each servo answers with (0x20 overload, 0x04 overheat…).
    var errors: [UInt8: UInt8] = [:]
    private(set) var received: [[UInt8]] = []
    private var buffer: [UInt8] = []
    private var time: UInt64 = 0

    init(ids: [UInt8] = [1, 2], at step: Int = 2048) {
        for id in ids {
            var table = [UInt8](repeating: 0, count: 0x50)
            (table[3], table[4]) = (0x09, 0x03)  // model 777 (STS3215)
            (table[0x2A], table[0x2B]) = (UInt8(step & 0xFF), UInt8(step >> 8))
            tables[id] = table
            positions[id] = Double(step)
        }
    }

    func steps(_ id: UInt8) -> Double { positions[id] ?? .nan }

    /// Servo `id` off the bus (unplugged, its power lost): it answers nothing from now on.
    mutating func remove(_ id: UInt8) { (tables[id], positions[id]) = (nil, nil) }

    func goal(_ id: UInt8) -> Int { tables[id].map { Int($0[0x2A]) | Int($0[0x2B]) << 8 } ?? -1 }

    /// Every servo at its goal (or limp).
    var still: Bool { tables.allSatisfy { id, table in table[0x28] == 0 || abs(Double(goal(id)) - positions[id]!) < 0.5 } }

    mutating func receive(_ bytes: [UInt8], atMicros micros: UInt64) -> [UInt8] {
        _ = advance(toMicros: micros)
        buffer += bytes
        var answer: [UInt8] = []
        while buffer.count >= 4 {
            guard buffer[0] == 0xFF, buffer[1] == 0xFF else { buffer.removeFirst(); continue }
            let length = Int(buffer[3])
            guard buffer.count >= 4 + length else { break }
            let packet = Array(buffer[..<(4 + length)])
            buffer.removeFirst(4 + length)
            guard ~packet[2..<(3 + length)].reduce(0, &+) == packet[3 + length] else { continue }
            received.append(packet)
            answer += act(id: packet[2], instruction: packet[4], parameters: Array(packet[5..<(3 + length)]))
        }
        return answer
    }

    private mutating func act(id: UInt8, instruction: UInt8, parameters: [UInt8]) -> [UInt8] {
        switch instruction {
        case 0x01 where tables[id] != nil: return status(id, [])
        case 0x02 where tables[id] != nil && parameters.count == 2:
            let from = Int(parameters[0]), count = Int(parameters[1])
            return status(id, Array(tables[id]![from..<(from + count)]))
        case 0x03 where tables[id] != nil && !parameters.isEmpty:
            write(id, at: Int(parameters[0]), Array(parameters.dropFirst()))
            return status(id, [])
        case 0x83 where id == 0xFE && parameters.count >= 2:
            let count = Int(parameters[1])
            var rest = parameters.dropFirst(2)
            while rest.count >= count + 1 {
                write(rest.first!, at: Int(parameters[0]), Array(rest.dropFirst().prefix(count)))
                rest = rest.dropFirst(count + 1)
            }
            return []
        default: return []
        }
    }

    private mutating func write(_ id: UInt8, at address: Int, _ data: [UInt8]) {
        guard tables[id] != nil else { return }
        for (offset, byte) in data.enumerated() { tables[id]![address + offset] = byte }
    }

    private func status(_ id: UInt8, _ parameters: [UInt8]) -> [UInt8] {
        let body = [id, UInt8(parameters.count + 2), errors[id] ?? 0] + parameters
        return [0xFF, 0xFF] + body + [~body.reduce(0, &+)]
    }

    mutating func advance(toMicros micros: UInt64) -> [UInt8] {
        let dt = Double(micros - min(micros, time)) / 1e6
        time = max(time, micros)
        for (id, table) in tables {
            let goal = Double(Int(table[0x2A]) | Int(table[0x2B]) << 8)
            let asked = Double(Int(table[0x2E]) | Int(table[0x2F]) << 8)
            let speed = asked == 0 ? Self.topSpeed : min(asked, Self.topSpeed)
            var position = positions[id]!, velocity = 0.0
            if table[0x28] == 1, goal != position {
                let step = min(abs(goal - position), speed * dt)
                velocity = goal > position ? speed : -speed
                position += goal > position ? step : -step
            }
            positions[id] = position
            let steps = Int(position.rounded()), magnitude = Int(abs(velocity).rounded())
            tables[id]![0x38] = UInt8(steps & 0xFF)
            tables[id]![0x39] = UInt8((steps >> 8) & 0xFF)
            tables[id]![0x3A] = UInt8(magnitude & 0xFF)
            tables[id]![0x3B] = UInt8((magnitude >> 8) & 0x7F) | (velocity < 0 ? 0x80 : 0)
        }
        return []
    }

    mutating func endSession(atMicros micros: UInt64) {}
}
