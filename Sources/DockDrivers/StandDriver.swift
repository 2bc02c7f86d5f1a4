import DockProtocol

/// What a stand's protocol must do for dockd (ArduPilot's AP_Mount_Backend, for stands): turn the
/// daemon's generic commands into the protocol's bytes, and the protocol's bytes into generic
/// reports. The vocabulary is protocol v1's message types (`Capabilities`, `Feedback`, `StandEvent`,
/// `BatteryState`, `Fault`; commands `.velocity`, `.position`, `.stop`, `.limits`, `.led`, `.motors`),
/// so the native driver is a thin layer and the others translate. Drivers are pure: no I/O, no clock
/// reads — times are host seconds passed in, so they run in tests in virtual time.
public protocol StandDriver: Sendable {
    /// A name for logs and the API (`native`, `visca`, `mavlink`).
    var name: String { get }

    /// Decoding errors, resends and refusals so far (the API shows them).
    var counters: DriverCounters { get }

    /// The link just opened: what to send first (handshake, address set, interface clear…).
    mutating func start(at time: Double) -> [UInt8]

    /// Bytes from the link. Returns what they mean, in order.
    mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport]

    /// A command from the controller or the daemon. Returns the bytes to send now (possibly none:
    /// a driver may queue it, e.g. one command in flight at a time).
    mutating func send(_ command: Message, at time: Double) -> [UInt8]

    /// Called at `nextDeadline`, and every 20 ms while that is nil: heartbeats, polls, resends,
    /// timeouts.
    mutating func tick(at time: Double) -> DriverOutput

    /// The last `.stop` sent has been confirmed by the device (its acknowledgement, or whatever
    /// the protocol offers); true when no stop is outstanding. The daemon waits for it on exit.
    /// VISCA: the Stop's Completion (false again once motion is asked for); MAVLink: an
    /// ATTITUDE_STATUS at rest received after the zero rates (never from a silent gimbal).
    var stopConfirmed: Bool { get }

    /// The driver executes `.position(duration:targets:)` with the device's own absolute
    /// positioning (VISCA AbsolutePosition, a MAVLink gimbal's attitude target): the daemon sends one
    /// `.position` per orientation move and judges its completion from the feedback, instead of
    /// closing the loop with velocities. Default false (the host closes the loop).
    var closesPositionLoop: Bool { get }

    /// The device's position is read by polling it with one request in flight (an ONVIF camera's
    /// GetStatus, 0.1–0.3 s apart), so its reads lag the velocities sent between them: where the
    /// host closes the loop, it carries the position past a read by what it commanded since, not
    /// by a velocity measured from two reads. Default false (the stand streams its feedback).
    var positionIsPolled: Bool { get }

    /// The host ends an orientation with a fine approach (`MotionController.fineApproach`): the
    /// device takes only velocities and a stop, each acted on at an uneven delay after it is sent
    /// (an ONVIF camera's ContinuousMove and Stop), and reads its position back, so the path's
    /// closed loop comes to rest anywhere within the position tolerance unless it creeps the rest
    /// of the way. Default false.
    var wantsFineApproach: Bool { get }

    /// The stand says nothing on the wire (a Pelco-D unit that answers no position query): its
    /// silence tells nothing of the link, which stays up while it is open, instead of being taken
    /// for lost after the engine's silence limit. Default false (every stand answers something).
    var standIsMute: Bool { get }

    /// When the driver next needs `tick` (host seconds; at or before now: at once), or nil when only
    /// the regular ticks matter. A caller that ticks then keeps the driver's deadlines exactly.
    var nextDeadline: Double? { get }

    /// A command of this type was sent and its acknowledgement is still awaited (drivers whose
    /// protocol acknowledges commands; the others never wait).
    func awaitsAcknowledgement(of type: MessageType) -> Bool

    /// Whether anything sent waits for the stand's answer (an acknowledgement, a probe's, a poll's
    /// reply): the host then reads the link as bytes come instead of in its next batch. Default
    /// true: every write may be answered.
    var awaitsAnswer: Bool { get }

    /// How the camera keeps presets of its own; nil: it keeps none (or none the driver uses), and
    /// `cameraPreset` is never called.
    var cameraPresets: CameraPresetStorage? { get }

    /// Stores or removes a preset in the camera. Returns the bytes to send now; the outcome comes
    /// later as one `.cameraPreset` report naming the request (whatever happens: the camera's
    /// answer, its error, no answer).
    mutating func cameraPreset(_ request: CameraPresetRequest, at time: Double) -> [UInt8]
}

extension StandDriver {
    /// Drivers whose protocol cannot confirm a stop report none outstanding.
    public var stopConfirmed: Bool { true }
    /// The host closes the position loop with velocities.
    public var closesPositionLoop: Bool { false }
    /// The stand streams its feedback.
    public var positionIsPolled: Bool { false }
    /// The stand lands where its position loop puts it.
    public var wantsFineApproach: Bool { false }
    public var standIsMute: Bool { false }
    public var nextDeadline: Double? { nil }
    public func awaitsAcknowledgement(of type: MessageType) -> Bool { false }
    public var awaitsAnswer: Bool { true }
    public var cameraPresets: CameraPresetStorage? { nil }
    /// Never called: the engine asks only a driver whose `cameraPresets` names a storage.
    public mutating func cameraPreset(_ request: CameraPresetRequest, at time: Double) -> [UInt8] { [] }
}

/// What a driver learned from the stand.
public enum DriverReport: Sendable, Equatable {
    /// Who the stand is (serial = its stable id) and what it can do: the link is usable from now.
    case ready(StandIdentity, Capabilities)
    case feedback(Feedback)
    case imu(ImuSample)
    case event(StandEvent)
    case battery(BatteryState)
    case fault(Fault)
    /// The stand refused a command (or did not acknowledge it in time).
    case refused(command: UInt8, reason: String)
    /// A `cameraPreset` request's outcome: the slot stored in or removed from, or why not.
    case cameraPreset(CameraPresetRequest, Result<CameraPresetSlot, CameraPresetRefusal>)
    /// Bytes that did not decode (counted, otherwise ignored).
    case garbage(FrameError)
    /// A report that decoded but cannot be true (a battery level of NaN or 1.5, a battery the stand
    /// never declared): dropped, and why, so the daemon can count and show it.
    case rejected(String)
    /// The link cannot work now (no answer to the handshake, a stand that cannot be steered): close it.
    case fatal(String)
    /// The stand contradicts what its handshake decided (an ONVIF camera that gave no position at
    /// connect gives one now): close the link, so that the next handshake decides again. Not a
    /// failure, but a link closed this way does not reset the reconnection backoff, so a stand
    /// flapping between the two is asked less and less often.
    case reconnect(String)
    /// The stand speaks another major version of the protocol: close the link; asking again soon
    /// cannot help (only a firmware update can), so the host waits longer before it does.
    case incompatible(String)
}

public struct DriverOutput: Sendable, Equatable {
    public var bytes: [UInt8]
    public var reports: [DriverReport]
    public init(bytes: [UInt8] = [], reports: [DriverReport] = []) { self.bytes = bytes; self.reports = reports }
}

/// The identity every driver reports; `serial` names the stand in the API.
public struct StandIdentity: Sendable, Equatable {
    public var model: String
    public var firmware: String
    public var hardware: String
    public var serial: String
    public var protocolVersion: String
    public init(model: String, firmware: String, hardware: String, serial: String, protocolVersion: String) {
        self.model = model; self.firmware = firmware; self.hardware = hardware; self.serial = serial
        self.protocolVersion = protocolVersion
    }
}

/// Counters every driver keeps (the API shows them).
public struct DriverCounters: Sendable, Equatable {
    public var decoder = DecoderCounters()
    public var retries = 0
    public var commandsFailed = 0
    public var refused = 0
    /// The measured round trip to the stand and back (drivers that can measure it).
    public var roundTrip = RoundTripEstimator()
    /// Per axis, the speed the stand really reaches over the speed its description gives for the
    /// same command, as measured from its feedback (drivers that learn it: VISCA); empty until then.
    public var speedScale: [Axis: Double] = [:]
    public init() {}
}
