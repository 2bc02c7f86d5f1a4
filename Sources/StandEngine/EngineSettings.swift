import DockCore
import DockProtocol
import DockTracking

/// What the daemon's configuration sets for every stand's engine.
public struct EngineSettings: Sendable {
    /// Without a valid frame from the stand for this long the link is declared lost, s.
    public var linkTimeout = ProtocolTiming.linkTimeout
    /// The controller's feedback watchdog is 25 periods here (250 ms at 100 Hz) rather than the
    /// protocol's 3: on a loaded host (a CPU hog on both cores) the daemon's and the stand's
    /// scheduling delayed a FEEDBACK by over 100 ms, failing moves that were fine. The stand's own
    /// heartbeat timeout (500 ms) still stops it if dockd goes quiet.
    public var motion: MotionConfiguration = {
        var m = MotionConfiguration()
        m.feedbackTimeoutPeriods = 25
        return m
    }()
    public var camera = CameraModel(horizontalFieldOfView: 70 * .pi / 180, verticalFieldOfView: 43 * .pi / 180)
    /// Seed of the subject identifiers (UUIDs): a run repeats exactly from it.
    public var trackingSeed: UInt64 = 1
    public var tracking = TrackingSettings.shipped
    /// Assumed age of a frame whose observations come without a capture timestamp, s.
    public var defaultCaptureLatency = 0.05
    /// How long a STOP may wait for its acknowledgement before the caller is told it was not confirmed, s.
    public var stopConfirmationTimeout = 0.5
    /// What the stand does while no client controls it.
    public var defaults = StandDefaults()
    /// How long a LIMITS may wait for its acknowledgement (the driver resends meanwhile), s.
    public var acknowledgementTimeout = 1.5
    /// How long a camera preset request may wait for the driver's answer, s: a backstop behind the
    /// drivers' own (VISCA gives up after about 2 s; an ONVIF request after its 10 s answer timeout,
    /// counted from when it is sent, which may be after a status poll in flight), so the driver's
    /// answer comes first and none is dropped as late.
    public var cameraPresetTimeout = 15.0
    /// The sweep a custom button starts and stops (nil: the buttons are only reported).
    public var buttonSweep: ButtonSweep?

    public init() {}
}
