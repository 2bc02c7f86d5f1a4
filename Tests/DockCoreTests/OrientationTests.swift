import DockCore
import DockProtocol
import Testing

@Suite("Orientation")
struct OrientationTests {
    /// The sim's limits: yaw 3 rad/s, 12 rad/s²; pitch 2 rad/s, 10 rad/s².
    static let maxSpeed: [Axis: Double] = [.yaw: 3, .pitch: 2]
    static let maxAccel: [Axis: Double] = [.yaw: 12, .pitch: 10]

    @Test("absolute: arrives within 0.01 rad in about the requested time, smoothly, without overshoot",
          arguments: ClosedLoopRig.feedbackPhases)
    func absolute(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        let t0 = rig.time
        let id = try rig.controller.setOrientation([.yaw: 1.0, .pitch: 0.4], relative: false, duration: 1.5, at: t0)
        #expect(rig.controller.state.activity == .orientation(id))
        rig.run(for: 0.75)
        // Synchronized: both axes are about half-way at half time.
        let yawShare = rig.truth(.yaw).motorPosition / 1.0, pitchShare = rig.truth(.pitch).motorPosition / 0.4
        #expect(abs(yawShare - 0.5) < 0.1 && abs(pitchShare - 0.5) < 0.1)
        let doneResult = rig.runUntilFinished(id)
        let done = try #require(doneResult)
        #expect(done.progress.state == .completed)
        #expect(done.progress.fraction == 1)
        #expect(done.time - t0 >= 1.5 && done.time - t0 < 1.8)
        rig.run(for: 0.3)
        #expect(abs(rig.truth(.yaw).motorPosition - 1.0) < 0.01)
        #expect(abs(rig.truth(.pitch).motorPosition - 0.4) < 0.01)

        let samples = rig.samples(since: t0)
        #expect(samples.map(\.yaw.motorPosition).max()! < 1.0 + 0.01)
        #expect(samples.map(\.pitch.motorPosition).max()! < 0.4 + 0.01)
        // Minimum jerk over 1.5 s peaks at 1.875·d/T: 1.25 rad/s yaw, 0.5 rad/s pitch.
        #expect(samples.map { abs($0.yaw.velocity) }.max()! < 1.25 * 1.15)
        #expect(samples.map { abs($0.pitch.velocity) }.max()! < 0.5 * 1.15)
        try expectCommandsWithinLimits(rig, since: t0)
        // Progress was reported while running, rising.
        let running = rig.log.flatMap(\.output.progress).filter { $0.id == id && $0.state == .running }
        #expect(running.count > 100)
        #expect(zip(running, running.dropFirst()).allSatisfy { $0.fraction <= $1.fraction })
        #expect(rig.nacks.isEmpty)
    }

    @Test("no duration: as fast as the limits allow, without exceeding them", arguments: ClosedLoopRig.feedbackPhases)
    func asFastAsAllowed(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        let t0 = rig.time
        let id = try rig.controller.setOrientation([.yaw: 2.0], relative: false, duration: nil, at: t0)
        let doneResult = rig.runUntilFinished(id)
        let done = try #require(doneResult)
        #expect(done.progress.state == .completed)
        // Planned at 80 % of 3 rad/s: T = 1.875·2 / 2.4 ≈ 1.56 s.
        #expect(done.time - t0 > 1.55 && done.time - t0 < 1.85)
        let peak = rig.samples(since: t0).map { abs($0.yaw.velocity) }.max()!
        #expect(peak > 2.2 && peak <= 3.0)
        try expectCommandsWithinLimits(rig, since: t0)
        #expect(abs(rig.truth(.yaw).motorPosition - 2.0) < 0.01)
    }

    @Test("relative: adds to the present pose", arguments: ClosedLoopRig.feedbackPhases)
    func relative(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        try rig.settle(at: [.yaw: 0.5, .pitch: 0.2])
        let id = try rig.controller.setOrientation([.yaw: 0.3, .pitch: -0.4], relative: true, duration: 1.0, at: rig.time)
        let doneResult = rig.runUntilFinished(id)
        let done = try #require(doneResult)
        #expect(done.progress.state == .completed)
        #expect(abs(rig.truth(.yaw).motorPosition - 0.8) < 0.01)
        #expect(abs(rig.truth(.pitch).motorPosition - -0.2) < 0.01)
    }

    @Test("moves of many lengths come to rest inside the tolerance, not at its edge", arguments: ClosedLoopRig.feedbackPhases)
    func restsInsideTolerance(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        var target = 0.0, worst = 0.0
        for k in 1...10 {
            // As fast as allowed, back and forth: the fastest moves end with the most tracking error.
            target += 0.05 * Double(k) * (k.isMultiple(of: 2) ? -1 : 1)
            let id = try rig.controller.setOrientation([.yaw: target], relative: false, duration: nil, at: rig.time)
            let result = rig.runUntilFinished(id)
            let done = try #require(result)
            #expect(done.progress.state == .completed)
            rig.run(for: 0.6)
            worst = max(worst, abs(rig.truth(.yaw).motorPosition - target))
        }
        // Completion waits until the axis has settled to half the 0.01 rad tolerance, predicting the
        // coast after the final zero VELOCITY; 1 mm more covers sensor noise (σ 0.2 mm) and the coast
        // estimate. Completing on the first sample inside 0.01 left axes that were still creeping back
        // from an overshoot at up to 0.0097 rad.
        #expect(worst < 0.006)
        #expect(rig.nacks.isEmpty)
    }

    @Test("a tighter tolerance (a preset's recall) comes to rest within half of it", arguments: ClosedLoopRig.feedbackPhases)
    func restsInsideATighterTolerance(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        var worst = 0.0
        for target in [0.5, -0.3, 0.8, 0.1] {
            let id = try rig.controller.setOrientation([.yaw: target, .pitch: target / 3], relative: false, duration: 1, tolerance: 0.002, at: rig.time)
            let result = rig.runUntilFinished(id)
            #expect(try #require(result).progress.state == .completed)
            rig.run(for: 0.6)
            worst = max(worst, abs(rig.truth(.yaw).motorPosition - target), abs(rig.truth(.pitch).motorPosition - target / 3))
        }
        // Half the 0.002 rad, and as above a margin for sensor noise and the coast estimate.
        #expect(worst < 0.0015)
    }

    @Test("continuous yaw: a relative move of more than a turn ends at the unwrapped position")
    func multiTurn() throws {
        var rig = try ClosedLoopRig()
        rig.run(for: 0.05)
        let id = try rig.controller.setOrientation([.yaw: 7.0], relative: true, duration: nil, at: rig.time)
        let doneResult = rig.runUntilFinished(id)
        let done = try #require(doneResult)
        #expect(done.progress.state == .completed)
        #expect(abs(rig.truth(.yaw).motorPosition - 7.0) < 0.01)
        #expect(abs(rig.controller.state.positions[.yaw]! - 7.0) < 0.01)
    }

    @Test("a new command pre-empts: the old id ends .preempted, the new one completes")
    func preemption() throws {
        var rig = try ClosedLoopRig()
        rig.run(for: 0.05)
        let first = try rig.controller.setOrientation([.yaw: 1.5], relative: false, duration: 2, at: rig.time)
        rig.run(for: 0.5)
        let second = try rig.controller.setOrientation([.yaw: -0.5], relative: false, duration: 1, at: rig.time)
        rig.step()
        let old = try #require(rig.final(first))
        #expect(old.progress.state == .preempted)
        #expect(old.progress.fraction > 0.2 && old.progress.fraction < 0.3)
        let doneResult = rig.runUntilFinished(second)
        let done = try #require(doneResult)
        #expect(done.progress.state == .completed)
        #expect(abs(rig.truth(.yaw).motorPosition - -0.5) < 0.01)
        // The turn-around respected the acceleration limit.
        try expectCommandsWithinLimits(rig, since: 0)

        // Velocity mode pre-empts too.
        rig.run(for: 1.1)
        let third = try rig.controller.setOrientation([.yaw: 0], relative: false, duration: 1, at: rig.time)
        rig.run(for: 0.2)
        try rig.controller.setVelocity([:], at: rig.time)
        rig.step()
        #expect(rig.final(third)?.progress.state == .preempted)
    }

    @Test("targets outside the limits, missing axes, bad numbers and no feedback are refused")
    func refusals() throws {
        var rig = try ClosedLoopRig()
        #expect(throws: MotionError.noFeedback) { _ = try rig.controller.setOrientation([.yaw: 0.1], relative: false, duration: 1, at: rig.time) }
        rig.run(for: 0.05)
        #expect(throws: MotionError.outOfRange("pitch target 1.200 rad is outside the limits -0.600…0.900 rad")) {
            _ = try rig.controller.setOrientation([.pitch: 1.2], relative: false, duration: 1, at: rig.time)
        }
        #expect(throws: MotionError.self) { _ = try rig.controller.setOrientation([.pitch: 1.0], relative: true, duration: 1, at: rig.time) }
        #expect(throws: MotionError.notSupported(.roll)) {
            _ = try rig.controller.setOrientation([.yaw: 0.1, .roll: 0.1], relative: false, duration: 1, at: rig.time)
        }
        #expect(throws: MotionError.self) { _ = try rig.controller.setOrientation([.yaw: 0.1], relative: false, duration: -1, at: rig.time) }
        #expect(throws: MotionError.self) { _ = try rig.controller.setOrientation([.yaw: .infinity], relative: false, duration: 1, at: rig.time) }
        #expect(throws: MotionError.self) { _ = try rig.controller.setOrientation([:], relative: false, duration: 1, at: rig.time) }
        rig.run(for: 0.3)
        #expect(rig.commands(since: 0).isEmpty)
        #expect(abs(rig.truth(.pitch).motorPosition) < 1e-3)
        // Refused calls did not use up the rate budget.
        _ = try rig.controller.setOrientation([.yaw: 0.1], relative: false, duration: 1, at: rig.time)
        _ = try rig.controller.setOrientation([.yaw: 0.2], relative: false, duration: 1, at: rig.time)
    }

    @Test("at most 2 orientation or animation calls per second")
    func rateLimit() throws {
        var rig = try ClosedLoopRig()
        rig.run(for: 0.05)
        let t0 = rig.time
        _ = try rig.controller.setOrientation([.yaw: 0.2], relative: false, duration: 1, at: t0)
        rig.run(for: 0.1)
        let second = try rig.controller.setOrientation([.yaw: 0.3], relative: false, duration: 1, at: rig.time)
        rig.run(for: 0.1)
        #expect(throws: MotionError.frameRateTooHigh) {
            _ = try rig.controller.setOrientation([.yaw: 0.4], relative: false, duration: 1, at: rig.time)
        }
        #expect(throws: MotionError.frameRateTooHigh) { _ = try rig.controller.play(.yes, at: rig.time) }
        #expect(rig.controller.state.activity == .orientation(second))
        rig.run(for: 0.81)   // the first call is now more than 1 s old
        _ = try rig.controller.setOrientation([.yaw: 0.4], relative: false, duration: 1, at: rig.time)
    }

    @Test("stop: STOP is sent at once, the motion ends cancelled, the stand comes to rest")
    func stop() throws {
        var rig = try ClosedLoopRig()
        rig.run(for: 0.05)
        let id = try rig.controller.setOrientation([.yaw: 2.0], relative: false, duration: 2, at: rig.time)
        rig.run(for: 0.6)
        rig.controller.stop(at: rig.time)
        let out = rig.tickNow()
        #expect(out.messages == [.stop])
        #expect(out.progress.count == 1 && out.progress[0].id == id && out.progress[0].state == .cancelled)
        rig.run(for: 0.4)
        #expect(rig.controller.state.activity == .idle)
        #expect(abs(rig.truth(.yaw).velocity) < 1e-3)
        let stoppedAt = rig.truth(.yaw).motorPosition
        #expect(stoppedAt < 1.2)
        rig.run(for: 0.5)
        #expect(abs(rig.truth(.yaw).motorPosition - stoppedAt) < 1e-3)
        #expect(rig.commands(since: rig.time - 0.8).isEmpty)
    }

    /// Every VELOCITY within the speed limits, and no step between commands larger than the
    /// acceleration limit allows in one 10 ms period.
    private func expectCommandsWithinLimits(_ rig: ClosedLoopRig, since start: Double,
                                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let commands = rig.commands(since: start)
        try #require(!commands.isEmpty, sourceLocation: sourceLocation)
        for c in commands {
            #expect(abs(c.yaw) <= Self.maxSpeed[.yaw]! + 1e-5, sourceLocation: sourceLocation)
            #expect(abs(c.pitch) <= Self.maxSpeed[.pitch]! + 1e-5, sourceLocation: sourceLocation)
        }
        for (a, b) in zip(commands, commands.dropFirst()) where b.time - a.time < 0.0101 {
            // A final zero VELOCITY may drop at once: the stand brakes at its own max_accel.
            if b.yaw == 0 && b.pitch == 0 { continue }
            #expect(abs(b.yaw - a.yaw) <= Self.maxAccel[.yaw]! * 0.01 + 1e-5, sourceLocation: sourceLocation)
            #expect(abs(b.pitch - a.pitch) <= Self.maxAccel[.pitch]! * 0.01 + 1e-5, sourceLocation: sourceLocation)
        }
    }
}
