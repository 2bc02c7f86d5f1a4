import DockCore
import DockProtocol
import Testing

/// A stand that answers late (a congested radio link, firmware busy elsewhere): its FEEDBACK shows
/// the past. The controller, told the measured round trip, predicts across it.
@Suite("Slow link")
struct SlowLinkTests {
    /// Overshoot past the target, rad, and whether the move completed, for a 0.5 rad yaw turn in 1 s.
    private func turn(linkDelay: Double, toldRoundTrip: Bool = true) throws -> (overshoot: Double, completed: Bool, final: Double) {
        var rig = try ClosedLoopRig(stand: ClosedLoopRig.yawOnlyStand, linkDelay: linkDelay)
        if !toldRoundTrip { rig.controller.setRoundTrip(0) }
        rig.run(for: 0.5)  // the first (late) FEEDBACK arrives
        let t0 = rig.time
        let id = try rig.controller.setOrientation([.yaw: 0.5], relative: false, duration: 1.0, at: t0)
        let done = rig.runUntilFinished(id, timeout: 5)
        rig.run(for: 0.5)
        let peak = rig.samples(since: t0).map(\.yaw.motorPosition).max() ?? 0
        return (peak - 0.5, done?.progress.state == .completed, rig.truth(.yaw).motorPosition)
    }

    /// Within 20 mrad (a healthy link's tests ask 10): the prediction integrates the commands and
    /// leaves out the motor's ~20 ms lag.
    @Test("150 and 300 ms late: the move completes with little overshoot", arguments: [0.15, 0.3])
    func predictsAcrossTheDelay(delay: Double) throws {
        let result = try turn(linkDelay: delay)
        #expect(result.completed)
        #expect(result.overshoot < 0.02, "overshoot \(result.overshoot) rad")
        #expect(abs(result.final - 0.5) < 0.01)
    }

    @Test func withoutThePredictionTheSameMoveOvershoots() throws {
        // The test above would pass vacuously if the delay did not matter.
        let result = try turn(linkDelay: 0.15, toldRoundTrip: false)
        #expect(result.overshoot > 0.05, "overshoot \(result.overshoot) rad")
    }

    @Test func pastTheMaximumRoundTripMotionIsRefusedAndStops() throws {
        var rig = try ClosedLoopRig(stand: ClosedLoopRig.yawOnlyStand)
        rig.run(for: 0.1)
        try rig.controller.setVelocity([.yaw: 1], at: rig.time)
        rig.run(for: 0.2)
        #expect(rig.truth(.yaw).velocity > 0.9)
        rig.controller.setRoundTrip(0.6)
        rig.run(for: 0.3)
        #expect(abs(rig.truth(.yaw).velocity) < 0.01, "velocity mode stops")
        #expect(throws: MotionError.linkTooSlow(0.6)) { _ = try rig.controller.setOrientation([.yaw: 0], relative: false, duration: nil, at: rig.time) }
        #expect(throws: MotionError.linkTooSlow(0.6)) { try rig.controller.setVelocity([.yaw: 1], at: rig.time) }
        rig.controller.setRoundTrip(0.01)
        #expect(throws: Never.self) { try rig.controller.setVelocity([.yaw: 1], at: rig.time) }
    }
}

/// A stand that moves to a position itself (a PTZ camera's absolute positioning): the orientation is
/// one POSITION, and a late link no longer matters to where it ends up.
@Suite("Orientation by the stand's own positioning")
struct StandPositioningTests {
    @Test(arguments: [0.0, 0.2])
    func oneOrientationIsOnePositionAndItCompletesAtTheTarget(linkDelay: Double) throws {
        var rig = try ClosedLoopRig(linkDelay: linkDelay, standClosesPositionLoop: true)
        rig.run(for: 0.3)
        let id = try rig.controller.setOrientation([.yaw: 0.5, .pitch: 0.2], relative: false, duration: 1, at: rig.time)
        rig.tickNow()
        let result = rig.runUntilFinished(id, timeout: 5)
        let finished = try #require(result)
        #expect(finished.progress.state == .completed)
        #expect(abs(rig.truth(.yaw).motorPosition - 0.5) < 0.01 && abs(rig.truth(.pitch).motorPosition - 0.2) < 0.01)
        let sent = rig.log.flatMap(\.output.messages)
        #expect(sent.filter { if case .position = $0 { true } else { false } }.count == 1)
        #expect(!sent.contains { if case .velocity(let v) = $0 { v.contains { $0.value != 0 } } else { false } }, "no velocity steering")
        #expect(rig.nacks.isEmpty)
    }
}
