import DockProtocol

/// Everything that makes one simulated stand: identity, axes, rates, batteries, base motion.
public struct StandConfiguration: Sendable {
    public var model = "dock-sim"
    public var firmware = "1.0.0"
    public var hardware = "sim-1"
    public var serial = "SIM-0001"
    public var axes: [AxisModel] = [
        AxisModel(axis: .yaw, continuous: true, min: -.pi, max: .pi, maxSpeed: 3.0, maxAccel: 12.0),
        AxisModel(axis: .pitch, continuous: false, min: -0.6, max: 0.9, maxSpeed: 2.0, maxAccel: 10.0),
    ]
    public var feedbackHz: UInt16 = 100
    public var imuHz: UInt16 = 100
    public var batteries: [String] = ["internal"]
    public var customButtons: UInt8 = 2
    /// Used when the host's HELLO asks for 0.
    public var defaultHeartbeatTimeoutMs: UInt16 = 500
    /// The base sways and bobs like a hand-held stand; the IMU sees it.
    public var handheld = false
    public var gyroNoise = 0.002
    public var gyroBias = 0.001
    public var accelNoise = 0.02
    /// Battery drain per second idle and per rad of motion (fraction of capacity).
    public var idleDrainPerSecond = 0.00002
    public var motionDrainPerRadian = 0.0002
    public var chargePerSecond = 0.002
    public var physicsStepMicros: UInt64 = 1000
    /// Checks a continuous axis's LIMITS range as a limited axis's (min < max, within its own),
    /// where PROTOCOL.md 1.1 says to ignore it: a stand written to 1.0, which left this to guess.
    public var checksContinuousRanges = false

    public init() {}

    public var capabilities: Capabilities {
        Capabilities(feedbackHz: feedbackHz, imuHz: imuHz,
                     features: [.imu, .led, .ledColor, .dockedSensor, .effort],
                     buttons: [.tracking, .shutter, .flip, .zoom, .custom], customButtons: customButtons,
                     axes: axes.map(\.capability), batteries: batteries)
    }
}
