import DockProtocol

/// Why the controller refused a command. Mirrors DockKit's errors for the motion calls; nothing is
/// sent to the stand when one is thrown.
public enum MotionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The stand has no such axis.
    case notSupported(Axis)
    /// A malformed request: non-finite numbers, bad keyframes, limits DockKit calls invalid.
    case invalidParameter(String)
    /// A target outside the active position limits.
    case outOfRange(String)
    /// More orientation/animation calls than the configured rate allows (DockKit: 2 per second).
    case frameRateTooHigh
    /// No FEEDBACK has arrived yet, so the controller does not know where the stand is.
    case noFeedback
    /// The link's round trip (s) is beyond `MotionConfiguration.maxRoundTrip`.
    case linkTooSlow(Double)
    /// An axis moved against its command: motion is refused until the stand reconnects.
    case wrongDirection(String)

    public var description: String {
        switch self {
        case .notSupported(let axis): "the stand has no \(axis) axis"
        case .invalidParameter(let reason): "invalid parameter: \(reason)"
        case .outOfRange(let reason): "out of range: \(reason)"
        case .frameRateTooHigh: "too many orientation or animation calls: wait before sending another"
        case .noFeedback: "no feedback from the stand yet: its position is unknown"
        case .linkTooSlow(let roundTrip): "the stand answers too late to be steered (round trip \(Int(roundTrip * 1000)) ms)"
        case .wrongDirection(let reason): reason
        }
    }
}
