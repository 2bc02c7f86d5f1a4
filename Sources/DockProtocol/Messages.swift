/// Every message of protocol v1, as plain values. Field names and units follow PROTOCOL.md §4.
public enum ProtocolVersion {
    public static let major: UInt8 = 1
    /// 1.1 adds no field and no type: it pins down timing, acknowledgements and value rules that 1.0
    /// left open, so 1.0 and 1.1 peers work together (PROTOCOL.md "Versions").
    public static let minor: UInt8 = 1
    /// "1.1": how both sides name a version in texts (a mismatch names both).
    public static var text: String { "\(major).\(minor)" }
}

public struct Hello: Equatable, Sendable {
    public var major: UInt8 = ProtocolVersion.major
    public var minor: UInt8 = ProtocolVersion.minor
    public var heartbeatTimeoutMs: UInt16
    public var host: String
    public init(major: UInt8 = ProtocolVersion.major, minor: UInt8 = ProtocolVersion.minor,
                heartbeatTimeoutMs: UInt16, host: String) {
        self.major = major; self.minor = minor
        self.heartbeatTimeoutMs = heartbeatTimeoutMs; self.host = host
    }
}

public struct HelloReply: Equatable, Sendable {
    public var major: UInt8
    public var minor: UInt8
    public var heartbeatTimeoutMs: UInt16
    public var model: String
    public var firmware: String
    public var hardware: String
    public var serial: String
    public init(major: UInt8 = ProtocolVersion.major, minor: UInt8 = ProtocolVersion.minor,
                heartbeatTimeoutMs: UInt16, model: String, firmware: String, hardware: String, serial: String) {
        self.major = major; self.minor = minor; self.heartbeatTimeoutMs = heartbeatTimeoutMs
        self.model = model; self.firmware = firmware; self.hardware = hardware; self.serial = serial
    }
}

public struct Features: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let imu = Features(rawValue: 1 << 0)
    public static let led = Features(rawValue: 1 << 1)
    public static let ledColor = Features(rawValue: 1 << 2)
    public static let dockedSensor = Features(rawValue: 1 << 3)
    public static let effort = Features(rawValue: 1 << 4)
}

public struct Buttons: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let tracking = Buttons(rawValue: 1 << 0)
    public static let shutter = Buttons(rawValue: 1 << 1)
    public static let flip = Buttons(rawValue: 1 << 2)
    public static let zoom = Buttons(rawValue: 1 << 3)
    public static let custom = Buttons(rawValue: 1 << 4)
}

public struct AxisCapability: Equatable, Sendable {
    public var axis: Axis
    public var continuous: Bool
    public var min: Float
    public var max: Float
    public var maxSpeed: Float
    public var maxAccel: Float
    public var countsPerRev: UInt32
    public init(axis: Axis, continuous: Bool, min: Float, max: Float, maxSpeed: Float, maxAccel: Float, countsPerRev: UInt32) {
        self.axis = axis; self.continuous = continuous; self.min = min; self.max = max
        self.maxSpeed = maxSpeed; self.maxAccel = maxAccel; self.countsPerRev = countsPerRev
    }
}

public struct Capabilities: Equatable, Sendable {
    public var feedbackHz: UInt16
    public var imuHz: UInt16
    public var features: Features
    public var buttons: Buttons
    public var customButtons: UInt8
    public var axes: [AxisCapability]
    public var batteries: [String]
    public init(feedbackHz: UInt16, imuHz: UInt16, features: Features, buttons: Buttons, customButtons: UInt8,
                axes: [AxisCapability], batteries: [String]) {
        self.feedbackHz = feedbackHz; self.imuHz = imuHz; self.features = features; self.buttons = buttons
        self.customButtons = customButtons; self.axes = axes; self.batteries = batteries
    }

    public func axis(_ axis: Axis) -> AxisCapability? { axes.first { $0.axis == axis } }
}

public enum NackCode: UInt8, Sendable, CustomStringConvertible {
    case unsupported = 1, outOfRange = 2, busy = 3, fault = 4, malformed = 5, versionMismatch = 6, notReady = 7

    public var description: String {
        switch self {
        case .unsupported: "unsupported"
        case .outOfRange: "out_of_range"
        case .busy: "busy"
        case .fault: "fault"
        case .malformed: "malformed"
        case .versionMismatch: "version_mismatch"
        case .notReady: "not_ready"
        }
    }
}

public struct Ack: Equatable, Sendable {
    public var seq: UInt16
    public var type: UInt8
    public init(seq: UInt16, type: UInt8) { self.seq = seq; self.type = type }
}

public struct Nack: Equatable, Sendable {
    public var seq: UInt16
    public var type: UInt8
    /// Raw code: a newer stand may send codes this host does not know.
    public var code: UInt8
    public var detail: String
    public init(seq: UInt16, type: UInt8, code: NackCode, detail: String) {
        self.init(seq: seq, type: type, rawCode: code.rawValue, detail: detail)
    }
    public init(seq: UInt16, type: UInt8, rawCode: UInt8, detail: String) {
        self.seq = seq; self.type = type; self.code = rawCode; self.detail = detail
    }
    public var knownCode: NackCode? { NackCode(rawValue: code) }
}

public enum RequestKind: UInt8, Sendable {
    case helloReply = 1, capabilities = 2, batteries = 3, docked = 4
}

public struct AxisValue: Equatable, Sendable {
    public var axis: Axis
    public var value: Float
    public init(_ axis: Axis, _ value: Float) { self.axis = axis; self.value = value }
}

public struct PositionTarget: Equatable, Sendable {
    public var axis: Axis
    public var position: Float
    public var velocity: Float
    public init(axis: Axis, position: Float, velocity: Float = 0) {
        self.axis = axis; self.position = position; self.velocity = velocity
    }
}

public struct AxisLimits: Equatable, Sendable {
    public var axis: Axis
    public var min: Float
    public var max: Float
    public var maxSpeed: Float
    public var maxAccel: Float
    public init(axis: Axis, min: Float, max: Float, maxSpeed: Float, maxAccel: Float) {
        self.axis = axis; self.min = min; self.max = max; self.maxSpeed = maxSpeed; self.maxAccel = maxAccel
    }
}

public enum LedMode: UInt8, Sendable {
    case off = 0, on = 1, blink = 2
}

public struct LedCommand: Equatable, Sendable {
    /// Raw mode: unknown modes from a newer host are kept so a stand can NACK them.
    public var mode: UInt8
    public var red: UInt8, green: UInt8, blue: UInt8
    public var onMs: UInt16, offMs: UInt16
    public init(mode: LedMode, red: UInt8 = 255, green: UInt8 = 255, blue: UInt8 = 255, onMs: UInt16 = 0, offMs: UInt16 = 0) {
        self.init(rawMode: mode.rawValue, red: red, green: green, blue: blue, onMs: onMs, offMs: offMs)
    }
    public init(rawMode: UInt8, red: UInt8, green: UInt8, blue: UInt8, onMs: UInt16, offMs: UInt16) {
        self.mode = rawMode; self.red = red; self.green = green; self.blue = blue; self.onMs = onMs; self.offMs = offMs
    }
}

public struct AxisStatus: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let atMin = AxisStatus(rawValue: 1 << 0)
    public static let atMax = AxisStatus(rawValue: 1 << 1)
    public static let stalled = AxisStatus(rawValue: 1 << 2)
    public static let fault = AxisStatus(rawValue: 1 << 3)
    public static let disabled = AxisStatus(rawValue: 1 << 4)
    public static let movingToTarget = AxisStatus(rawValue: 1 << 5)
}

public struct AxisFeedback: Equatable, Sendable {
    public var axis: Axis
    public var position: Float
    public var velocity: Float
    /// NaN when the stand does not measure it.
    public var effort: Float
    public var status: AxisStatus
    public init(axis: Axis, position: Float, velocity: Float, effort: Float = .nan, status: AxisStatus = []) {
        self.axis = axis; self.position = position; self.velocity = velocity; self.effort = effort; self.status = status
    }
}

public struct Feedback: Equatable, Sendable {
    public var timeUs: UInt64
    public var axes: [AxisFeedback]
    public init(timeUs: UInt64, axes: [AxisFeedback]) { self.timeUs = timeUs; self.axes = axes }
    public func axis(_ axis: Axis) -> AxisFeedback? { axes.first { $0.axis == axis } }
}

public struct ImuSample: Equatable, Sendable {
    public var timeUs: UInt64
    public var gyro: (x: Float, y: Float, z: Float)
    public var accel: (x: Float, y: Float, z: Float)
    public init(timeUs: UInt64, gyro: (x: Float, y: Float, z: Float), accel: (x: Float, y: Float, z: Float)) {
        self.timeUs = timeUs; self.gyro = gyro; self.accel = accel
    }
    public static func == (a: ImuSample, b: ImuSample) -> Bool {
        a.timeUs == b.timeUs && a.gyro == b.gyro && a.accel == b.accel
    }
}

public enum EventKind: UInt8, Sendable, CustomStringConvertible {
    case docked = 1, trackingButton = 2, shutter = 3, flip = 4, zoom = 5, customButton = 6

    public var description: String {
        switch self {
        case .docked: "docked"
        case .trackingButton: "tracking_button"
        case .shutter: "shutter"
        case .flip: "flip"
        case .zoom: "zoom"
        case .customButton: "custom_button"
        }
    }
}

public struct StandEvent: Equatable, Sendable {
    public var timeUs: UInt64
    /// Raw kind: kinds added by later minors are passed through and ignored by the host.
    public var kind: UInt8
    public var value: UInt8
    public var button: UInt8
    public var factor: Float
    public init(timeUs: UInt64, kind: EventKind, value: UInt8 = 1, button: UInt8 = 0, factor: Float = 1) {
        self.init(timeUs: timeUs, rawKind: kind.rawValue, value: value, button: button, factor: factor)
    }
    public init(timeUs: UInt64, rawKind: UInt8, value: UInt8, button: UInt8, factor: Float) {
        self.timeUs = timeUs; self.kind = rawKind; self.value = value; self.button = button; self.factor = factor
    }
    public var knownKind: EventKind? { EventKind(rawValue: kind) }
}

public enum ChargeState: UInt8, Sendable, CustomStringConvertible {
    case notCharging = 0, charging = 1, notChargeable = 2

    public var description: String {
        switch self {
        case .notCharging: "not_charging"
        case .charging: "charging"
        case .notChargeable: "not_chargeable"
        }
    }
}

public struct BatteryState: Equatable, Sendable {
    public var index: UInt8
    public var level: Float
    public var charge: ChargeState
    public var low: Bool
    public init(index: UInt8, level: Float, charge: ChargeState, low: Bool) {
        self.index = index; self.level = level; self.charge = charge; self.low = low
    }
}

public enum FaultSeverity: UInt8, Sendable {
    case info = 0, warning = 1, error = 2, critical = 3
}

public enum FaultCode: UInt16, Sendable {
    case stall = 1, overcurrent = 2, overtemperature = 3, encoder = 4, heartbeatLost = 5, brownout = 6
    case limitHit = 7, log = 8
}

public struct Fault: Equatable, Sendable {
    public var timeUs: UInt64
    public var severity: UInt8
    public var code: UInt16
    /// Axis raw value, 255 when the fault concerns no axis.
    public var axis: UInt8
    public var text: String
    public init(timeUs: UInt64, severity: FaultSeverity, code: FaultCode, axis: Axis? = nil, text: String) {
        self.timeUs = timeUs; self.severity = severity.rawValue; self.code = code.rawValue
        self.axis = axis?.rawValue ?? 255; self.text = text
    }
    public init(timeUs: UInt64, rawSeverity: UInt8, rawCode: UInt16, rawAxis: UInt8, text: String) {
        self.timeUs = timeUs; self.severity = rawSeverity; self.code = rawCode; self.axis = rawAxis; self.text = text
    }
}

/// One message of protocol v1.
public enum Message: Equatable, Sendable {
    case hello(Hello)
    case helloReply(HelloReply)
    case capabilities(Capabilities)
    case heartbeat(uptimeMs: UInt32)
    case ack(Ack)
    case nack(Nack)
    case request(RequestKind)
    case velocity([AxisValue])
    case position(duration: Float, targets: [PositionTarget])
    case stop
    case limits([AxisLimits])
    case led(LedCommand)
    case motors(enabled: AxisMask)
    case feedback(Feedback)
    case imu(ImuSample)
    case event(StandEvent)
    case battery(BatteryState)
    case fault(Fault)
}

/// Message type codes on the wire.
public enum MessageType: UInt8, Sendable, CaseIterable {
    case hello = 0x01, helloReply = 0x02, capabilities = 0x03, heartbeat = 0x04, ack = 0x05, nack = 0x06
    case request = 0x07
    case velocity = 0x10, position = 0x11, stop = 0x12, limits = 0x13, led = 0x14, motors = 0x15
    case feedback = 0x20, imu = 0x21, event = 0x22, battery = 0x23, fault = 0x24
}

extension Message {
    public var type: MessageType {
        switch self {
        case .hello: .hello
        case .helloReply: .helloReply
        case .capabilities: .capabilities
        case .heartbeat: .heartbeat
        case .ack: .ack
        case .nack: .nack
        case .request: .request
        case .velocity: .velocity
        case .position: .position
        case .stop: .stop
        case .limits: .limits
        case .led: .led
        case .motors: .motors
        case .feedback: .feedback
        case .imu: .imu
        case .event: .event
        case .battery: .battery
        case .fault: .fault
        }
    }
}
