/// Makes a wanted axis velocity safe to send: within the speed limit, slow enough to stop at the
/// position limits, and no faster a change from the last command than the acceleration limit allows.
/// Used for both velocity mode and trajectory following, so every command obeys the same rules.
struct VelocityShaper {
    /// Braking toward a position limit is planned at this fraction of the acceleration limit, so the
    /// stand's own lag does not carry it past the limit.
    let brakingMargin: Double
    /// Seconds from the tick until the stand has reacted to the command: the command's latency and
    /// the motor's own lag. The feedback's age is not in here: `position` is already predicted to
    /// the tick.
    let reaction: Double

    /// `position` is where the axis is at the tick (the measured position predicted forward by the
    /// sample's age). `deadband` is how close to a limit counts as "at" it: a few encoder counts, so
    /// quantization and sensor noise on a stand resting at its limit do not ask for motion into it.
    func shape(_ wanted: Double, position: Double, lastCommand: Double, dt: Double,
               limits: EffectiveAxisLimits, deadband: Double) -> Double {
        var v = Swift.min(limits.maxSpeed, Swift.max(-limits.maxSpeed, wanted))
        let braking = brakingMargin * limits.maxAccel
        if limits.max.isFinite {
            v = Swift.min(v, stoppingSpeed(room: limits.max - position - deadband, braking: braking))
        }
        if limits.min.isFinite {
            v = Swift.max(v, -stoppingSpeed(room: position - limits.min - deadband, braking: braking))
        }
        let step = limits.maxAccel * dt
        return Swift.min(lastCommand + step, Swift.max(lastCommand - step, v))
    }

    /// The fastest speed toward a limit `room` away that can still stop at it, when the stand keeps
    /// this speed for `reaction` seconds and then brakes: v·r + v²/(2a) = room. Unlike the bare
    /// v = √(2·a·room) it is linear near the limit (v ≈ room / r), so a position that jitters by a
    /// count there asks for millimetres per second, not a kick.
    private func stoppingSpeed(room: Double, braking a: Double) -> Double {
        guard room > 0 else { return 0 }
        let ar = a * reaction
        return (ar * ar + 2 * a * room).squareRoot() - ar
    }
}
