#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the stand's base moves in the world. Still on a desk; swaying and bobbing in a hand.
struct BaseMotion: Sendable {
    var handheld: Bool

    /// Base attitude (yaw, pitch, roll), rad, and its rates, rad/s, at `t` seconds.
    func attitude(at t: Double) -> (angles: (Double, Double, Double), rates: (Double, Double, Double)) {
        guard handheld else { return ((0, 0, 0), (0, 0, 0)) }
        // A slow sway of the arm (0.25 Hz, 4°) plus a walking bob (1.8 Hz, 1°) in pitch and roll.
        let sway = (a: 0.07, w: 2 * Double.pi * 0.25)
        let bob = (a: 0.0175, w: 2 * Double.pi * 1.8)
        let yaw = sway.a * sin(sway.w * t)
        let pitch = bob.a * sin(bob.w * t)
        let roll = 0.5 * bob.a * sin(bob.w * t / 2)
        return ((yaw, pitch, roll),
                (sway.a * sway.w * cos(sway.w * t), bob.a * bob.w * cos(bob.w * t), 0.25 * bob.a * bob.w * cos(bob.w * t / 2)))
    }

    /// Vertical acceleration of the base from walking, m/s².
    func verticalAcceleration(at t: Double) -> Double {
        guard handheld else { return 0 }
        return 1.2 * sin(2 * Double.pi * 1.8 * t)
    }
}
