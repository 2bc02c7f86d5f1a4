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

    /// Replayed from dockd's log of a VISCA camera tracking beside a CPU hog (the integration test
    /// `test_visca_tracking_holds_a_moving_subject_with_replies_200ms_late`, which then failed): it
    /// advertises 20 Hz of feedback (its poll rate), but with one position inquiry in flight and every reply 200 ms
    /// late its positions came every 200 ms, its velocity estimated from them. The tracking command
    /// reversed while the camera still sped up on the commands sent before; the estimate rose the old
    /// way for 0.45 s, and dockd called the axis reversed between two samples. The samples after the
    /// log's end are where the camera, braking, went next.
    @Test func aSlowPolledAxisStillAnsweringTheCommandsBeforeAReversalIsNotAFault() throws {
        var capabilities = StandConfiguration().capabilities
        capabilities.feedbackHz = 20
        var configuration = MotionConfiguration()
        configuration.feedbackTimeoutPeriods = 25  // as dockd runs it (EngineSettings)
        var c = MotionController(capabilities: capabilities, configuration: configuration)
        c.setRoundTrip(0.2025)
        let start = 100.0
        let samples: [(time: Double, position: Double, velocity: Double)] = [
            (-0.106, 0.232, 0.09), (0.096, 0.271, 0.096), (0.298, 0.322, 0.173), (0.500, 0.334, 0.116),
            (0.702, 0.331, 0.04), (0.904, 0.318, -0.045), (1.106, 0.295, -0.09), (1.308, 0.262, -0.14),
        ]
        let commands: [(time: Double, yaw: Double)] = [
            (-0.1, 0.08), (-0.05, 0.06), (0.0, 0.04), (0.05, 0.02), (0.1, -0.01), (0.136, -0.06), (0.186, -0.10),
            (0.239, -0.117), (0.289, -0.155), (0.298, -0.167), (0.339, -0.197), (0.389, -0.285), (0.439, -0.287),
            (0.489, -0.265), (0.5, -0.219), (0.539, -0.179), (0.589, -0.217), (0.639, -0.195),
        ] + (14...30).map { (Double($0) * 0.05, -0.2) }
        var next = samples[...]
        for command in commands {
            while let sample = next.first, sample.time <= command.time {
                c.feedback(feedback(yaw: sample.velocity, position: sample.position, time: start + sample.time), at: start + sample.time)
                next = next.dropFirst()
            }
            try c.setVelocity([.yaw: command.yaw], at: start + command.time)
            _ = c.tick(at: start + command.time)
            #expect(c.wrongDirection == nil, "at \(command.time) s")
        }
    }

    /// Replayed from dockd's log of the visca-over-ip peer tracking beside a CPU hog: the command had
    /// held its direction for 0.28 s when a FEEDBACK still showed the camera going the old way (the
    /// emulator, starved, had not yet taken the reversed drive); then no FEEDBACK came for 0.19 s while
    /// dockd ticked on, and it called the axis reversed on that one stale sample. (Here the gaps are a
    /// little longer, so that the reversed command has settled before the stale sample.)
    @Test func oneStaleSampleIsNotAFaultHoweverLongTheControllerTicksOnIt() throws {
        var capabilities = StandConfiguration().capabilities
        capabilities.feedbackHz = 20
        var configuration = MotionConfiguration()
        configuration.feedbackTimeoutPeriods = 25  // as dockd runs it (EngineSettings)
        var c = MotionController(capabilities: capabilities, configuration: configuration)
        c.setRoundTrip(0.0025)
        let start = 100.0
        var position = 0.0
        // Going +0.57 rad/s on the commands before t = 0; reversed commands from t = 0.
        c.feedback(feedback(yaw: 0.567, position: position, time: start - 0.05), at: start - 0.05)
        try c.setVelocity([.yaw: 0.6], at: start - 0.05)
        _ = c.tick(at: start - 0.05)
        let samples: [(time: Double, velocity: Double)] = [
            (0.0, 0.567), (0.05, 0.567), (0.1, 0.567), (0.15, 0.567), (0.2, 0.567), (0.45, 0.567), (0.7, -0.9), (0.75, -1.0),
        ]
        var next = samples[...]
        for tick in 0...12 {
            let t = Double(tick) * 0.06
            while let sample = next.first, sample.time <= t {
                position += sample.velocity * 0.05
                c.feedback(feedback(yaw: sample.velocity, position: position, time: start + sample.time), at: start + sample.time)
                next = next.dropFirst()
            }
            try c.setVelocity([.yaw: -1.0], at: start + t)
            _ = c.tick(at: start + t)
            #expect(c.wrongDirection == nil, "at \(t) s")
        }
    }
}
