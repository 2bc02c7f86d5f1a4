/// A rate steered as position targets, for a camera that takes a pose (or a step) and no rate
/// (a move may still carry a speed; this keeps one that carries none, or ignores it, to the rate).
/// A camera goes to each target at its own speed, so targets set ahead of the camera itself
/// compound: renewed every command interval, each three intervals ahead, they drove a camera
/// faster than the rate at 3× the rate asked (vptz: 0.9 rad/s for 0.3; an ONVIF camera by
/// AbsoluteMoves or RelativeMoves alike), and the tracking loop overshot. So the target is set
/// `lead` ahead of the rate's own path, which goes on from where the last rate left it: the camera
/// keeps to the rate on average however fast it moves to a target. The path starts afresh where
/// the camera is after a pause longer than `pause` or a turn of direction, runs no further than
/// the lead ahead of the camera (one slower than the rate), and the target lies between the camera
/// and the lead ahead of it: a camera ahead of the path holds until the path comes up.
/// One axis, in the driver's own units (pure; the caller's clock).
struct RateTargetPath: Sendable {
    private var path: (value: Double, rate: Double, time: Double)?

    /// Forgets the path: a stop, a pose asked for, a new connection.
    mutating func reset() { path = nil }

    /// The target for `rate` (units/s) on an axis now at `now`: `lead` s of the rate ahead of the
    /// path, which is kept across renewals no more than `pause` s apart. `leastReach` is for a
    /// camera that takes targets to its step: the path may run that far ahead of the camera (half
    /// a step and a hair) where a lead of the rate alone would not, so that a slow rate's path
    /// grows until its target rounds to the next step and the camera steps along at the rate on
    /// average (held to the lead, each target rounded back to where the camera was, and a rate
    /// below half a step an interval never moved it).
    mutating func target(rate: Double, from now: Double, lead: Double, leastReach: Double = 0, pause: Double, at time: Double) -> Double {
        let ahead = rate * lead
        let reach = rate > 0 ? max(ahead, leastReach) : rate < 0 ? min(ahead, -leastReach) : 0
        var along = now
        if let path, rate * path.rate > 0, time - path.time <= pause {
            along = path.value + path.rate * (time - path.time)
            along = rate > 0 ? min(along, now + reach) : max(along, now + reach)
        }
        path = rate == 0 ? nil : (along, rate, time)
        return rate > 0 ? min(now + reach, max(now, along + ahead)) : max(now + reach, min(now, along + ahead))
    }
}
