/// Makes a wanted axis velocity safe to send: within the speed limit, slow enough to stop at the
/// position limits, and no faster a change from the last command than the acceleration limit allows.
/// Used for both velocity mode and trajectory following, so every command obeys the same rules.
struct VelocityShaper {
    /// Braking toward a position limit is planned at this fraction of the acceleration limit, so the
    /// one-period command latency does not carry the stand past it.
    let brakingMargin: Double
    /// Seconds between the measured position and where the stand is when a command takes effect.
    let lookahead: Double

    func shape(_ wanted: Double, position: Double, lastCommand: Double, dt: Double,
               limits: EffectiveAxisLimits) -> Double {
        var v = Swift.min(limits.maxSpeed, Swift.max(-limits.maxSpeed, wanted))
        // v² = 2·a·d: the fastest speed toward a limit that can still stop at it, from where the
        // stand will be by the time this command acts.
        let braking = brakingMargin * limits.maxAccel
        if limits.max.isFinite {
            let room = limits.max - position - Swift.max(0, lastCommand) * lookahead
            v = Swift.min(v, (2 * braking * Swift.max(0, room)).squareRoot())
        }
        if limits.min.isFinite {
            let room = position - limits.min + Swift.min(0, lastCommand) * lookahead
            v = Swift.max(v, -(2 * braking * Swift.max(0, room)).squareRoot())
        }
        let step = limits.maxAccel * dt
        return Swift.min(lastCommand + step, Swift.max(lastCommand - step, v))
    }
}
