/// Tuning of a `MotionController`. Times in seconds, angles in rad.
public struct MotionConfiguration: Sendable, Equatable {
    /// Velocity mode stops this long after the last `setVelocity` (DockKit-style dead man's switch).
    public var deadman: Double = 0.5
    /// Proportional gain on the position error while following a trajectory, 1/s. The stand's
    /// velocity loop lags ~20 ms and the command period is ~10 ms; 8/s keeps > 60° phase margin.
    public var positionGain: Double = 8
    /// How far ahead the velocity feed-forward looks, to make up for the command reaching the motor
    /// late. `nil` = one feedback period (PROTOCOL.md §5: a command acts within one period).
    public var latencyCompensation: Double? = nil
    /// Braking toward a position limit starts as if the stand were already this far ahead: the
    /// feedback's age, the command's latency and the motor's own lag. `nil` = three feedback periods.
    public var limitLookahead: Double? = nil
    /// A trajectory is complete once its time is up and every axis is this close to its target.
    public var positionTolerance: Double = 0.01
    /// A trajectory that is not within tolerance this long after its end fails.
    public var settleTimeout: Double = 1.0
    /// Trajectories and built-in animations are planned at this fraction of the speed and
    /// acceleration limits, leaving the rest for the closed loop's corrections.
    public var planningMargin: Double = 0.8
    /// At most `commandsPerWindow` orientation/animation calls within any `rateWindow` seconds.
    public var commandsPerWindow: Int = 2
    public var rateWindow: Double = 1.0
    /// Without feedback for this many periods the controller stops the stand (PROTOCOL.md §5).
    public var feedbackTimeoutPeriods: Double = 3
    /// Custom animation bounds.
    public var maxKeyframes: Int = 256
    public var maxAnimationDuration: Double = 60

    public init() {}
}
