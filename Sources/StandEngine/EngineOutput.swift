import DockDrivers
import DockCore
import DockProtocol
import DockTracking

/// What the engine asks the shell to do after an event: writes for the link, notifications for
/// subscribers, log lines, replies to commands. When to call `tick` next is `StandEngine.nextTick`.
public struct EngineOutput: Sendable {
    /// What each driver call returned, in order: one write each. On a datagram link a write is a
    /// datagram, and a VISCA-over-IP camera reads one message per datagram: two calls' bytes in one
    /// datagram lose the second (a Stop behind a poll waited for the resend timeout).
    public private(set) var writes: [[UInt8]] = []
    /// Every write's bytes, in order.
    public var bytes: [UInt8] { writes.flatMap { $0 } }
    public var notifications: [StandNotification] = []
    public var logs: [EngineLog] = []
    /// Replies to commands that were answered in this step, by the token they came with. A command
    /// may be answered later than the step that received it (a STOP waits for its acknowledgement).
    public var replies: [(token: Int, result: Result<CommandResult, EngineError>)] = []
    /// Close the link (silence, a refused handshake); the shell reconnects with backoff.
    public var closeLink: String?

    public init() {}

    mutating func write(_ bytes: [UInt8]) {
        if !bytes.isEmpty { writes.append(bytes) }
    }

    mutating func log(_ level: EngineLog.Level, _ message: String, _ metadata: [String: String] = [:]) {
        logs.append(EngineLog(level: level, message: message, metadata: metadata))
    }

    mutating func reply(_ token: Int?, _ result: Result<CommandResult, EngineError>) {
        if let token { replies.append((token, result)) }
    }

    /// Adds what one of the engine's parts decided, after what is already here.
    mutating func append(_ other: EngineOutput) {
        writes += other.writes
        notifications += other.notifications
        logs += other.logs
        replies += other.replies
        if let reason = other.closeLink { closeLink = reason }
    }
}

public struct EngineLog: Sendable, Equatable {
    public enum Level: Sendable, Equatable { case debug, info, notice, warning, error, critical }
    public var level: Level
    public var message: String
    public var metadata: [String: String]
}

/// What subscribers hear about one stand. The shell adds the stand's id and encodes it once.
public enum StandNotification: Sendable, Equatable {
    /// Topic `stands`.
    case connected(StandDescription)
    case disconnected(reason: String)
    /// Topic `motion`: `motion.state` for every FEEDBACK (rate-limited per subscriber by the shell).
    case motionState(MotionReport)
    case motionProgress(MotionProgress)
    /// Topic `tracking`, about 10 per second while tracking.
    case trackingState(TrackingReport)
    /// Topic `events`.
    case trackingChanged(enabled: Bool, source: String)
    case event(EventReport)
    case leaseChanged(client: Int, takenFrom: Int)
    case stopChanged(stopped: Bool, by: ClientRef?)
    /// What the stand does about its subject changed: lost, searching, returning, sweeping, … (`tracking.phase`).
    case phaseChanged(TrackingPhase)
    /// Topic `battery`.
    case battery(BatteryReport)
    /// Topic `logs`.
    case fault(FaultReport)
}

/// The stand as `stands.list` describes it.
public struct StandDescription: Sendable, Equatable {
    public var id: String
    public var state: LinkState
    public var systemTracking: Bool
    public var driver: String
    public var docked: Bool?
    public var lastError: String?
    public var identity: StandIdentity?
    public var capabilities: Capabilities?
}

public enum LinkState: String, Sendable, Equatable { case connecting, handshaking, connected, disconnected }

/// One FEEDBACK as clients see it. Times are the engine's clock (CLOCK_MONOTONIC seconds in dockd).
public struct MotionReport: Sendable, Equatable {
    /// When the host received the FEEDBACK.
    public var time: Double
    /// When the stand measured it: the receive time less half the link's round trip.
    public var measuredAt: Double
    public var standTimeUs: UInt64
    public var positions: [(axis: Axis, value: Double)]
    public var velocities: [(axis: Axis, value: Double)]

    public static func == (a: MotionReport, b: MotionReport) -> Bool {
        a.time == b.time && a.measuredAt == b.measuredAt && a.standTimeUs == b.standTimeUs
            && a.positions.elementsEqual(b.positions, by: { $0 == $1 }) && a.velocities.elementsEqual(b.velocities, by: { $0 == $1 })
    }
}

/// DockKit's tracking state: the subjects, where they are in the latest frame, which are selected.
public struct TrackingReport: Sendable, Equatable {
    public var time: Double
    /// Capture time of the frame the subjects were last updated from (nil before the first).
    public var captureTime: Double?
    public var subjects: [SubjectReport]
    public var inFrame: Bool
    public var phase = TrackingPhase.tracking
}

public struct SubjectReport: Sendable, Equatable {
    public var id: String
    public var isPerson: Bool
    public var rect: NormalizedRect
    public var faceRect: NormalizedRect?
    public var saliencyRank: Int
    public var speakingConfidence: Double?
    public var lookingAtCameraConfidence: Double?
    /// 0…1, how squarely the subject faces the camera (face yaw, else keypoints); nil when unknown.
    public var facing: Double?
    public var selected: Bool
    /// Capture time of the frame that last measured the subject (the report's `captureTime` when
    /// this frame did; earlier while its box is predicted).
    public var lastSeen: Double
}

public struct EventReport: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case docked(Bool)
        case trackingButton(pressed: Bool)
        case shutter(pressed: Bool)
        case flip(pressed: Bool)
        case zoom(factor: Double)
        case button(id: Int, pressed: Bool)
    }
    public var kind: Kind
}

public struct BatteryReport: Sendable, Equatable {
    public var index: Int
    public var name: String
    public var level: Double
    public var charge: ChargeState
    public var low: Bool
}

/// A fault the stand reported (`source` stand, its own code) or one dockd found about the stand
/// (`source` dockd, a `DaemonFault` code).
public struct FaultReport: Sendable, Equatable {
    public enum Source: String, Sendable { case stand, dockd }
    public var source: Source
    public var code: Int
    public var severity: Int
    public var text: String
}

/// The codes of the faults dockd itself reports about a stand (protocol/API.md, `stand.fault`).
public enum DaemonFault: Int, Sendable {
    /// A FEEDBACK or BATTERY value the stand cannot have measured was refused.
    case implausibleReport = 1001
    /// The stand answers later than the protocol's 50 ms, or too late to steer.
    case linkPace = 1002
    /// The stand refused a command (NACK, or no acknowledgement after every resend).
    case commandRefused = 1003
    /// An axis moved against its command: a reversed sign in the hardware or its description.
    case wrongDirection = 1004
}
