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
    /// Seconds the stand keeps going after a tick before it has reacted to the command: the
    /// command's latency (≤ one period) and the motor's lag. Braking toward a position limit allows
    /// for it, and so does the completion check (how far an axis coasts after the final zero
    /// VELOCITY). The feedback's age is not included: the controller measures it and predicts the
    /// position to the tick. `nil` = four feedback periods: close to a limit the allowed speed is
    /// about room / lookahead, a position loop that, against the motor's ~20 ms first-order lag, only
    /// stops without overshooting the limit when the lookahead is at least about twice that lag.
    public var limitLookahead: Double? = nil
    /// A trajectory is complete once its time is up and every axis is at rest this close to its
    /// target. The controller settles to half of it (see `MotionController`), keeping the rest as the
    /// margin for sensor noise and the coasting after the final command.
    public var positionTolerance: Double = 0.01
    /// A trajectory that is not within tolerance this long after its end fails.
    public var settleTimeout: Double = 1.0
    /// The fine approach (`MotionController.fineApproach`: a stand steered by velocities that act
    /// at an uneven delay, an ONVIF camera's ContinuousMove and Stop): an orientation settled
    /// within its tolerance creeps on until a read at rest shows every axis within this band,
    /// rad; it stops once predicted within half of it. 3e-4 rad (0.017°): there the creep's speed
    /// (`positionGain`, 3–8/s on a camera polled at 10 Hz, times 1.5e-4 rad) times the spread of
    /// when a command acts (0.16 s measured: a move waits up to a command interval and the request
    /// in flight) is 1.9e-4 rad, within the band, so one stop usually lands in it.
    public var fineBand: Double = 3e-4
    /// The fine approach's top speed, rad/s: a correction acted on 0.16 s later than predicted
    /// misses by 1.6e-3 rad, well within the tolerance, however far it has to go.
    public var fineTopSpeed: Double = 0.01
    /// How long the fine approach may take, s; then the orientation completes where it is (settled
    /// within its tolerance): a camera whose slowest speed is coarse cannot make steps within
    /// `fineBand`. Two stops and reads at rest on a camera acting 30–250 ms late took 2.3 s.
    public var fineApproachTime: Double = 3
    /// Trajectories and built-in animations are planned at this fraction of the speed and
    /// acceleration limits, leaving the rest for the closed loop's corrections.
    public var planningMargin: Double = 0.8
    /// At most `commandsPerWindow` orientation/animation calls within any `rateWindow` seconds.
    public var commandsPerWindow: Int = 2
    public var rateWindow: Double = 1.0
    /// Without feedback for this many periods the controller stops the stand (PROTOCOL.md §5).
    public var feedbackTimeoutPeriods: Double = 3
    /// A stand whose measured round trip is longer than this answers too late to be steered: motion
    /// commands are refused and running motion stops (its FEEDBACK shows the past by half of it).
    public var maxRoundTrip: Double = 0.5
    /// Custom animation bounds.
    public var maxKeyframes: Int = 256
    public var maxAnimationDuration: Double = 60

    public init() {}
}
