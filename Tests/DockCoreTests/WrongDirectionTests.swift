import DockCore
import DockProtocol
import DockSim
import Testing

/// An axis that moves against its command (a reversed sign in the hardware or its description) is
/// caught within a fraction of a second; an axis braking out of the other direction is not.
@Suite("Wrong direction")
struct WrongDirectionTests {
    private func controller() -> MotionController {
        MotionController(capabilities: StandConfiguration().capabilities)
    }

    private func feedback(yaw velocity: Double, position: Double, time: Double) -> Feedback {
        Feedback(timeUs: UInt64(time * 1e6), axes: [AxisFeedback(axis: .yaw, position: Float(position), velocity: Float(velocity)),
                                                   AxisFeedback(axis: .pitch, position: 0, velocity: 0)])
    }

    @Test func anAxisSpeedingUpAgainstItsCommandStopsEverythingWithAClearFault() throws {
        var c = controller()
        c.feedback(feedback(yaw: 0, position: 0, time: 0), at: 0)
        try c.setVelocity([.yaw: 0.5], at: 0)
        var position = 0.0, stopped: Double?
        for step in 1...60 {
            let t = Double(step) * 0.01
            // The axis accelerates the other way, as a reversed pan does.
            let velocity = -min(0.5, 5 * t)
            position += velocity * 0.01
            c.feedback(feedback(yaw: velocity, position: position, time: t), at: t)
            if c.tick(at: t).messages.contains(.stop), stopped == nil { stopped = t }
        }
        let at = try #require(stopped, "no STOP")
        #expect(at < 0.35)
        #expect(c.wrongDirection?.contains("yaw moves against its command") == true)
        #expect(throws: MotionError.self) { try c.setVelocity([.yaw: 0.2], at: 1) }
    }

    @Test func anAxisBrakingFromTheOtherDirectionIsNotAFault() throws {
        var c = controller()
        c.feedback(feedback(yaw: 2.5, position: 0, time: 0), at: 0)
        try c.setVelocity([.yaw: -2.5], at: 0)
        var velocity = 2.5, position = 0.0
        for step in 1...100 {
            let t = Double(step) * 0.01
            // Brakes at 10 rad/s² through zero and on to −2.5 rad/s: against its command for 0.25 s.
            velocity = max(-2.5, velocity - 0.1)
            position += velocity * 0.01
            c.feedback(feedback(yaw: velocity, position: position, time: t), at: t)
            try c.setVelocity([.yaw: -2.5], at: t)
            _ = c.tick(at: t)
        }
        #expect(c.wrongDirection == nil)
    }
}
