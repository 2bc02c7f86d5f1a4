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
