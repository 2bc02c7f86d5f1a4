import DockProtocol

/// A small MAVLink 2 codec: framing, CRC-16/MCRF4XX with CRC_EXTRA, and the few messages the
/// gimbal driver needs. Field order and CRC_EXTRA are those of the common dialect (fields sorted
/// by size, extensions last); Tests/DockDriversTests check them against pymavlink 2.4.50's bytes.
public enum MAVLink {
    public static let stxV2: UInt8 = 0xFD
    public static let stxV1: UInt8 = 0xFE

    /// CRC-16/MCRF4XX (the "X.25" of MAVLink), initial 0xFFFF.
    public static func crc(_ bytes: some Sequence<UInt8>, initial: UInt16 = 0xFFFF) -> UInt16 {
        var crc = initial
        for b in bytes {
            var tmp = b ^ UInt8(crc & 0xFF)
            tmp ^= tmp << 4
            let t = UInt16(tmp)
            crc = (crc >> 8) ^ (t << 8) ^ (t << 3) ^ (t >> 4)
        }
        return crc
    }

    /// Message ids, CRC_EXTRA and full (untruncated) payload lengths.
    public enum ID: UInt32, Sendable, CaseIterable {
        case heartbeat = 0
        case commandLong = 76
        case commandAck = 77
        case gimbalDeviceInformation = 283
        case gimbalDeviceSetAttitude = 284
        case gimbalDeviceAttitudeStatus = 285

        public var crcExtra: UInt8 {
            switch self {
            case .heartbeat: 50
            case .commandLong: 152
            case .commandAck: 143
            case .gimbalDeviceInformation: 74
            case .gimbalDeviceSetAttitude: 99
            case .gimbalDeviceAttitudeStatus: 137
            }
        }
    }

    public struct Frame: Equatable, Sendable {
        public var sequence: UInt8
        public var systemID: UInt8
        public var componentID: UInt8
        public var messageID: UInt32
        /// The payload as sent (MAVLink 2 truncates trailing zeros).
        public var payload: [UInt8]
        public init(sequence: UInt8, systemID: UInt8, componentID: UInt8, messageID: UInt32, payload: [UInt8]) {
            self.sequence = sequence; self.systemID = systemID; self.componentID = componentID
            self.messageID = messageID; self.payload = payload
        }
    }

    /// Encodes a MAVLink 2 frame (unsigned), truncating trailing zero bytes of the payload.
    public static func encode(_ id: ID, payload: [UInt8], sequence: UInt8, systemID: UInt8, componentID: UInt8) -> [UInt8] {
        var body = payload
        while body.count > 1, body.last == 0 { body.removeLast() }
        var frame: [UInt8] = [stxV2, UInt8(body.count), 0, 0, sequence, systemID, componentID,
                              UInt8(id.rawValue & 0xFF), UInt8((id.rawValue >> 8) & 0xFF), UInt8(id.rawValue >> 16)]
        frame += body
        let c = crc(CollectionOfOne(id.crcExtra), initial: crc(frame.dropFirst()))
        frame += [UInt8(c & 0xFF), UInt8(c >> 8)]
        return frame
    }
}

/// Streaming MAVLink decoder (v2, and v1 for old gimbals' heartbeats). Frames of messages it does
/// not know pass through unchecked (their CRC_EXTRA is unknown); known ones are CRC-checked.
public struct MAVLinkDecoder: Sendable {
    private var buffer: [UInt8] = []
    public init() {}

    public mutating func feed(_ bytes: [UInt8]) -> [Result<MAVLink.Frame, FrameError>] {
        buffer += bytes
        var out: [Result<MAVLink.Frame, FrameError>] = []
        var skipped = 0
        func flushSkipped() { if skipped > 0 { out.append(.failure(.malformed)); skipped = 0 } }
        // Frames start at `at`; what is before it is consumed. The bytes are dropped once, at the
        // end: dropping them one by one would make a large read of noise cost its length squared.
        var at = 0
        while at < buffer.count {
            let first = buffer[at]
            guard first == MAVLink.stxV2 || first == MAVLink.stxV1 else { at += 1; skipped += 1; continue }
            let v2 = first == MAVLink.stxV2
            let header = v2 ? 10 : 6
            guard buffer.count - at >= header else { break }
            let length = Int(buffer[at + 1])
            let signed = v2 && buffer[at + 2] & 0x01 != 0
            let total = header + length + 2 + (signed ? 13 : 0)
            guard buffer.count - at >= total else { break }
            let messageID = v2 ? UInt32(buffer[at + 7]) | UInt32(buffer[at + 8]) << 8 | UInt32(buffer[at + 9]) << 16
                               : UInt32(buffer[at + 5])
            let crcAt = at + header + length
            let wire = UInt16(buffer[crcAt]) | UInt16(buffer[crcAt + 1]) << 8
            if let id = MAVLink.ID(rawValue: messageID) {
                let c = MAVLink.crc(CollectionOfOne(id.crcExtra), initial: MAVLink.crc(buffer[(at + 1)..<crcAt]))
                guard c == wire else {
                    // Not a frame after all (or corrupted): resynchronize one byte later.
                    flushSkipped()
                    out.append(.failure(.crc))
                    at += 1
                    continue
                }
            }
            flushSkipped()
            let seq = v2 ? buffer[at + 4] : buffer[at + 2], sys = v2 ? buffer[at + 5] : buffer[at + 3]
            let comp = v2 ? buffer[at + 6] : buffer[at + 4]
            out.append(.success(MAVLink.Frame(sequence: seq, systemID: sys, componentID: comp, messageID: messageID,
                                              payload: Array(buffer[(at + header)..<crcAt]))))
            at += total
        }
        flushSkipped()
        // What waits for more input is less than one frame (at most 279 bytes): no oversize rule needed.
        buffer.removeFirst(at)
        return out
    }
}

// MARK: Payload helpers

struct PayloadWriter {
    var bytes: [UInt8] = []
    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { bytes += [UInt8(v & 0xFF), UInt8(v >> 8)] }
    mutating func u32(_ v: UInt32) { for i in 0..<4 { bytes.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
    mutating func f32(_ v: Float) { u32(v.bitPattern) }
}

struct PayloadReader {
    let bytes: [UInt8]
    var at = 0
    /// MAVLink 2 truncates trailing zeros: read past the end as zero.
    init(_ payload: [UInt8], length: Int) { bytes = payload + [UInt8](repeating: 0, count: max(0, length - payload.count)) }
    mutating func u8() -> UInt8 { defer { at += 1 }; return bytes[at] }
    mutating func u16() -> UInt16 { defer { at += 2 }; return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
    mutating func u32() -> UInt32 {
        defer { at += 4 }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }
    mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }
    mutating func f32() -> Float { Float(bitPattern: u32()) }
    mutating func string(_ n: Int) -> String {
        defer { at += n }
        let raw = bytes[at..<(at + n)].prefix { $0 != 0 }
        return String(decoding: raw, as: UTF8.self)
    }
}

// MARK: Messages

public struct MAVHeartbeat: Equatable, Sendable {
    public static let typeGimbal: UInt8 = 26
    public static let typeOnboardController: UInt8 = 18
    public static let autopilotInvalid: UInt8 = 8
    public var customMode: UInt32 = 0
    public var type: UInt8
    public var autopilot: UInt8
    public var baseMode: UInt8 = 0
    public var systemStatus: UInt8 = 4  // MAV_STATE_ACTIVE
    public var mavlinkVersion: UInt8 = 3
    public init(type: UInt8, autopilot: UInt8) { self.type = type; self.autopilot = autopilot }

    public var payload: [UInt8] {
        var w = PayloadWriter()
        w.u32(customMode); w.u8(type); w.u8(autopilot); w.u8(baseMode); w.u8(systemStatus); w.u8(mavlinkVersion)
        return w.bytes
    }
    public init(payload: [UInt8]) {
        var r = PayloadReader(payload, length: 9)
        customMode = r.u32(); type = r.u8(); autopilot = r.u8(); baseMode = r.u8(); systemStatus = r.u8(); mavlinkVersion = r.u8()
    }
}

public struct MAVCommandLong: Equatable, Sendable {
    public static let requestMessage: UInt16 = 512
    public static let setMessageInterval: UInt16 = 511
    public var params: [Float]
    public var command: UInt16
    public var targetSystem: UInt8
    public var targetComponent: UInt8
    public var confirmation: UInt8 = 0
    public init(command: UInt16, params: [Float], targetSystem: UInt8, targetComponent: UInt8) {
        self.command = command; self.params = (params + [Float](repeating: 0, count: 7)).prefix(7).map { $0 }
        self.targetSystem = targetSystem; self.targetComponent = targetComponent
    }
    public var payload: [UInt8] {
        var w = PayloadWriter()
        for p in params { w.f32(p) }
        w.u16(command); w.u8(targetSystem); w.u8(targetComponent); w.u8(confirmation)
        return w.bytes
    }
}

/// COMMAND_ACK: how a component answered a COMMAND_LONG.
public struct MAVCommandAck: Equatable, Sendable {
    public var command: UInt16
    public var result: UInt8
    public init(command: UInt16, result: UInt8) { self.command = command; self.result = result }
    public init(payload: [UInt8]) {
        var r = PayloadReader(payload, length: 3)
        command = r.u16(); result = r.u8()
    }

    public static let accepted: UInt8 = 0, inProgress: UInt8 = 5

    /// MAV_RESULT's name.
    public static func resultText(_ result: UInt8) -> String {
        switch result {
        case 0: "accepted"
        case 1: "temporarily rejected"
        case 2: "denied"
        case 3: "unsupported"
        case 4: "failed"
        case 5: "in progress"
        case 6: "cancelled"
        default: "result \(result)"
        }
    }
}

/// GIMBAL_DEVICE_FLAGS.
public struct GimbalDeviceFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let retract = GimbalDeviceFlags(rawValue: 1)
    public static let neutral = GimbalDeviceFlags(rawValue: 2)
    public static let rollLock = GimbalDeviceFlags(rawValue: 4)
    public static let pitchLock = GimbalDeviceFlags(rawValue: 8)
    public static let yawLock = GimbalDeviceFlags(rawValue: 16)
    public static let yawInVehicleFrame = GimbalDeviceFlags(rawValue: 32)
    public static let yawInEarthFrame = GimbalDeviceFlags(rawValue: 64)
}

public struct MAVGimbalDeviceInformation: Equatable, Sendable {
    public var uid: UInt64 = 0
    public var timeBootMs: UInt32 = 0
    public var firmwareVersion: UInt32 = 0
    public var hardwareVersion: UInt32 = 0
    public var rollMin: Float = .nan, rollMax: Float = .nan
    public var pitchMin: Float = .nan, pitchMax: Float = .nan
    public var yawMin: Float = .nan, yawMax: Float = .nan
    public var capFlags: UInt16 = 0
    public var customCapFlags: UInt16 = 0
    public var vendorName = "", modelName = "", customName = ""
    public var gimbalDeviceID: UInt8 = 0
    public init() {}

    public static let capHasPitchAxis: UInt16 = 32
    public static let capHasYawAxis: UInt16 = 256
    public static let capSupportsInfiniteYaw: UInt16 = 2048

    public init(payload: [UInt8]) {
        var r = PayloadReader(payload, length: 149)
        uid = r.u64(); timeBootMs = r.u32(); firmwareVersion = r.u32(); hardwareVersion = r.u32()
        rollMin = r.f32(); rollMax = r.f32(); pitchMin = r.f32(); pitchMax = r.f32(); yawMin = r.f32(); yawMax = r.f32()
        capFlags = r.u16(); customCapFlags = r.u16()
        vendorName = r.string(32); modelName = r.string(32); customName = r.string(32)
        gimbalDeviceID = r.u8()
    }

    /// `major.minor.patch` from the packed `(dev << 24) | (patch << 16) | (minor << 8) | major`.
    public static func versionText(_ v: UInt32) -> String { "\(v & 0xFF).\((v >> 8) & 0xFF).\((v >> 16) & 0xFF)" }
}

public struct MAVGimbalDeviceSetAttitude: Equatable, Sendable {
    /// w, x, y, z; NaN = ignore the attitude.
    public var q: [Float]
    public var angularVelocity: (x: Float, y: Float, z: Float)
    public var flags: GimbalDeviceFlags
    public var targetSystem: UInt8
    public var targetComponent: UInt8
    public init(q: [Float], angularVelocity: (x: Float, y: Float, z: Float), flags: GimbalDeviceFlags,
                targetSystem: UInt8, targetComponent: UInt8) {
        self.q = q; self.angularVelocity = angularVelocity; self.flags = flags
        self.targetSystem = targetSystem; self.targetComponent = targetComponent
    }
    public var payload: [UInt8] {
        var w = PayloadWriter()
        for v in q { w.f32(v) }
        w.f32(angularVelocity.x); w.f32(angularVelocity.y); w.f32(angularVelocity.z)
        w.u16(flags.rawValue); w.u8(targetSystem); w.u8(targetComponent)
        return w.bytes
    }
    public init(payload: [UInt8]) {
        var r = PayloadReader(payload, length: 32)
        q = (0..<4).map { _ in r.f32() }
        angularVelocity = (r.f32(), r.f32(), r.f32())
        flags = GimbalDeviceFlags(rawValue: r.u16()); targetSystem = r.u8(); targetComponent = r.u8()
    }
    public static func == (a: Self, b: Self) -> Bool { a.payload == b.payload }
}

public struct MAVGimbalDeviceAttitudeStatus: Equatable, Sendable {
    public var timeBootMs: UInt32 = 0
    public var q: [Float] = [1, 0, 0, 0]
    public var angularVelocity: (x: Float, y: Float, z: Float) = (.nan, .nan, .nan)
    public var failureFlags: UInt32 = 0
    public var flags: GimbalDeviceFlags = []
    public var targetSystem: UInt8 = 0
    public var targetComponent: UInt8 = 0
    public init() {}

    public init(payload: [UInt8]) {
        var r = PayloadReader(payload, length: 49)
        timeBootMs = r.u32()
        q = (0..<4).map { _ in r.f32() }
        angularVelocity = (r.f32(), r.f32(), r.f32())
        failureFlags = r.u32(); flags = GimbalDeviceFlags(rawValue: r.u16()); targetSystem = r.u8(); targetComponent = r.u8()
    }
    public static func == (a: Self, b: Self) -> Bool {
        a.timeBootMs == b.timeBootMs && a.q == b.q && a.failureFlags == b.failureFlags && a.flags == b.flags
    }
}

/// GIMBAL_DEVICE_ERROR_FLAGS.
public enum GimbalDeviceError {
    public static let atRollLimit: UInt32 = 1
    public static let atPitchLimit: UInt32 = 2
    public static let atYawLimit: UInt32 = 4
    public static let encoder: UInt32 = 8
    public static let power: UInt32 = 16
    public static let motor: UInt32 = 32
    public static let software: UInt32 = 64
    public static let comms: UInt32 = 128
    public static let calibrationRunning: UInt32 = 256
    public static let noManager: UInt32 = 512
}
