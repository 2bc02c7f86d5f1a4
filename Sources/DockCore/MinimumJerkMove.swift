/// A rest-to-rest minimum-jerk move of one axis (Flash & Hogan 1985): the quintic
/// p(s) = p0 + D·(10s³ − 15s⁴ + 6s⁵), s = t/T, whose velocity and acceleration are zero at both
/// ends and whose jerk is finite everywhere, so the stand starts and stops without a kick.
struct MinimumJerkMove: Sendable, Equatable {
    let start: Double
    let end: Double
    let duration: Double

    /// Peak speed is 1.875·|D|/T (at s = ½); peak acceleration 10/√3·|D|/T² (at s = ½ ∓ √3/6).
    static let peakSpeedFactor = 1.875
    static let peakAccelFactor = 10 / 3.0.squareRoot()

    /// The shortest T that keeps a move of `distance` within `maxSpeed` and `maxAccel`.
    static func shortestDuration(distance: Double, maxSpeed: Double, maxAccel: Double) -> Double {
        let d = abs(distance)
        return Swift.max(peakSpeedFactor * d / maxSpeed, (peakAccelFactor * d / maxAccel).squareRoot())
    }

    /// Position and velocity `t` seconds after the start; before 0 it is at the start, after T at the end.
    func sample(at t: Double) -> (position: Double, velocity: Double) {
        guard duration > 0 else { return (end, 0) }
        let s = Swift.min(1, Swift.max(0, t / duration))
        let d = end - start
        let s2 = s * s, s3 = s2 * s
        let shape = s3 * (10 - 15 * s + 6 * s2)
        let slope = 30 * s2 * (1 - 2 * s + s2)
        return (start + d * shape, d * slope / duration)
    }
}
