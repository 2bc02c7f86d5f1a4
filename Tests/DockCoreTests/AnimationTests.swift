import DockCore
import DockProtocol
import Testing

@Suite("Animations")
struct AnimationTests {
    /// Client limits narrower than the stand's, so an animation that ignored them would hit the stand's
    /// hard stop at the limit and be caught.
    static let pitchLimits = LimitRequest(min: -0.1, max: 0.35)
    static let start: [Axis: Double] = [.yaw: 0.4, .pitch: 0.2]

    @Test("each built-in plays, stays inside the limits, completes, and ends where documented",
          arguments: Animation.BuiltIn.allCases, ClosedLoopRig.feedbackPhases)
    func builtIn(_ kind: Animation.BuiltIn, feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        try rig.controller.setLimits([.pitch: Self.pitchLimits])
        try rig.settle(at: Self.start)
        let t0 = rig.time
        let id = try rig.controller.play(.builtIn(kind), at: t0)
        #expect(rig.controller.state.activity == .animation(id, name: kind.rawValue))
        let doneResult = rig.runUntilFinished(id, timeout: 6)
        let done = try #require(doneResult)
        #expect(done.progress.state == .completed)
        #expect(done.time - t0 > 1.0 && done.time - t0 < 4.5)
        rig.run(for: 0.2)

        let samples = rig.samples(since: t0)
        let yaw = samples.map(\.yaw.motorPosition), pitch = samples.map(\.pitch.motorPosition)
        // Never reached the client's pitch limits (the stand would have pinned it exactly there).
        #expect(pitch.min()! > -0.1 + 0.005 && pitch.max()! < 0.35 - 0.005)
        #expect(samples.allSatisfy { $0.status[.pitch].map { $0.isDisjoint(with: [.atMin, .atMax]) } ?? true })

        let end = (yaw: rig.truth(.yaw).motorPosition, pitch: rig.truth(.pitch).motorPosition)
        switch kind {
        case .yes:
            #expect(reversals(pitch) >= 3)
            #expect(pitch.max()! - 0.2 > 0.08)
            #expect(yaw.allSatisfy { abs($0 - 0.4) < 0.01 })
        case .no:
            #expect(reversals(yaw) >= 3)
            #expect(yaw.max()! - 0.4 > 0.15 && 0.4 - yaw.min()! > 0.1)
            #expect(pitch.allSatisfy { abs($0 - 0.2) < 0.01 })
        case .kapow:
            // Up first, then back past the start: a tilt that snaps back and wobbles.
            let top = pitch.firstIndex(of: pitch.max()!)!, bottom = pitch.firstIndex(of: pitch.min()!)!
            #expect(pitch.max()! - 0.2 > 0.1 && top < bottom && 0.2 - pitch.min()! > 0.03)
            #expect(reversals(pitch, hysteresis: 0.005) >= 3)
        case .wakeup:
            // Droops below the start, then rises to home.
            let low = pitch.firstIndex(of: pitch.min()!)!
            #expect(pitch.min()! < 0.2 - 0.2)
            #expect(samples[low].time - t0 < 1.8)
        }
        if kind == .wakeup {
            #expect(abs(end.yaw) < 0.01 && abs(end.pitch) < 0.01)
        } else {
            #expect(abs(end.yaw - 0.4) < 0.01 && abs(end.pitch - 0.2) < 0.01)
        }
        #expect(rig.nacks.isEmpty)
    }

    @Test("a built-in slows down uniformly to fit a low speed limit")
    func builtInSlowsToFit() throws {
        var rig = try ClosedLoopRig()
        rig.run(for: 0.05)
        try rig.controller.setLimits([.pitch: LimitRequest(maxSpeed: 0.4)])
        rig.step()
        let t0 = rig.time
        let id = try rig.controller.play(.yes, at: t0)
        let result = rig.runUntilFinished(id)
        let done = try #require(result)
        #expect(done.progress.state == .completed)
        // The nod's fastest swing (0.25 rad in 0.35 s, 1.07 rad/s) must drop to 80 % of 0.4 rad/s:
        // 3.35 × slower, 1.6 s → 5.4 s.
        #expect(done.time - t0 > 5.3 && done.time - t0 < 5.7)
        let pitch = rig.samples(since: t0).map(\.pitch.motorPosition)
        #expect(reversals(pitch) >= 3 && pitch.max()! > 0.14)
        #expect(abs(rig.truth(.pitch).motorPosition) < 0.01)
    }

    @Test("a built-in on a stand without its axis is refused")
    func builtInNeedsItsAxis() throws {
        var rig = try ClosedLoopRig(stand: ClosedLoopRig.yawOnlyStand)
        rig.run(for: 0.05)
        #expect(throws: MotionError.notSupported(.pitch)) { _ = try rig.controller.play(.yes, at: rig.time) }
        let id = try rig.controller.play(.no, at: rig.time)
        let finished = rig.runUntilFinished(id)
        #expect(finished?.progress.state == .completed)
    }

    @Test("custom relative keyframes are followed and progress is reported", arguments: ClosedLoopRig.feedbackPhases)
    func customRelative(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        try rig.settle(at: Self.start)
        let t0 = rig.time
        let frames = [Keyframe(time: 0.6, pitch: 0.1, yaw: 0.2), Keyframe(time: 1.2, pitch: -0.05, yaw: -0.1), Keyframe(time: 1.8)]
        let id = try rig.controller.play(.custom(frames, name: "wave"), at: t0)
        #expect(rig.controller.state.activity == .animation(id, name: "wave"))
        rig.run(for: 0.6)
        #expect(abs(rig.truth(.yaw).motorPosition - 0.6) < 0.03)
        #expect(abs(rig.truth(.pitch).motorPosition - 0.3) < 0.03)
        rig.run(for: 0.6)
        #expect(abs(rig.truth(.yaw).motorPosition - 0.3) < 0.03)
        #expect(abs(rig.truth(.pitch).motorPosition - 0.15) < 0.03)
        let doneResult = rig.runUntilFinished(id)
        let done = try #require(doneResult)
        #expect(done.progress.state == .completed)
        #expect(done.time - t0 >= 1.8 && done.time - t0 < 2.1)
        #expect(abs(rig.truth(.yaw).motorPosition - 0.4) < 0.01 && abs(rig.truth(.pitch).motorPosition - 0.2) < 0.01)
        let halfway = rig.log.first { $0.time >= t0 + 0.9 }!.output.progress.first { $0.id == id }!
        #expect(abs(halfway.fraction - 0.5) < 0.01 && halfway.state == .running)
    }

    @Test("custom absolute keyframes end at their last pose", arguments: ClosedLoopRig.feedbackPhases)
    func customAbsolute(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        let id = try rig.controller.play(.custom([Keyframe(time: 1.0, pitch: 0.3, yaw: -0.5), Keyframe(time: 2.0, pitch: -0.2, yaw: 0.5)],
                                                 positioning: .absolute), at: rig.time)
        let finished = rig.runUntilFinished(id)
        #expect(finished?.progress.state == .completed)
        #expect(abs(rig.truth(.yaw).motorPosition - 0.5) < 0.01 && abs(rig.truth(.pitch).motorPosition - -0.2) < 0.01)
    }

    @Test("keyframes that break the limits or the rules are refused before any motion")
    func customRefused() throws {
        var rig = try ClosedLoopRig()
        rig.run(for: 0.05)
        let t = rig.time
        func refusal(_ animation: Animation) -> MotionError? {
            do { _ = try rig.controller.play(animation, at: t); return nil } catch { return error }
        }
        func isInvalid(_ e: MotionError?, mentioning text: String) -> Bool {
            if case .invalidParameter(let reason)? = e { return reason.contains(text) }
            return false
        }
        // Outside the position range (absolute and relative).
        #expect(isInvalid(refusal(.custom([Keyframe(time: 1, pitch: 1.2)], positioning: .absolute)), mentioning: "outside the limits"))
        #expect(isInvalid(refusal(.custom([Keyframe(time: 1, pitch: 0.5), Keyframe(time: 2, pitch: 1.0)])), mentioning: "keyframe 1"))
        // A segment faster than the speed limit (1 rad in 0.1 s), then one over the acceleration limit.
        #expect(isInvalid(refusal(.custom([Keyframe(time: 0.1, yaw: 1.0)])), mentioning: "rad/s between"))
        #expect(isInvalid(refusal(.custom([Keyframe(time: 0.5, yaw: 0.6)])), mentioning: "rad/s² between"))
        // Timing rules and sizes.
        #expect(isInvalid(refusal(.custom([Keyframe(time: 1, yaw: 0.1), Keyframe(time: 1, yaw: 0.2)])), mentioning: "strictly increasing"))
        #expect(isInvalid(refusal(.custom([Keyframe(time: 0, yaw: 0.1)])), mentioning: "strictly increasing"))
        #expect(isInvalid(refusal(.custom([])), mentioning: "at least one"))
        #expect(isInvalid(refusal(.custom((1...257).map { Keyframe(time: Double($0) * 0.2) })), mentioning: "at most 256"))
        #expect(isInvalid(refusal(.custom([Keyframe(time: 61)])), mentioning: "at most 60"))
        #expect(isInvalid(refusal(.custom([Keyframe(time: 1, roll: 0), Keyframe(time: 2)])), mentioning: "roll"))
        #expect(refusal(.custom([Keyframe(time: 1, roll: 0.1)])) == .notSupported(.roll))

        rig.run(for: 0.3)
        #expect(rig.commands(since: 0).isEmpty)
        #expect(rig.controller.state.activity == .idle)
        #expect(abs(rig.truth(.yaw).motorPosition) < 1e-3 && abs(rig.truth(.pitch).motorPosition) < 1e-3)
    }

    @Test("cancel ends the animation, stops the stand, and ignores other ids")
    func cancel() throws {
        var rig = try ClosedLoopRig()
        rig.run(for: 0.05)
        let id = try rig.controller.play(.custom([Keyframe(time: 2, yaw: 1.5)]), at: rig.time)
        rig.run(for: 1.0)
        let cancelledOther = rig.controller.cancel(MotionID(rawValue: 999), at: rig.time)
        let cancelledIt = rig.controller.cancel(id, at: rig.time)
        #expect(!cancelledOther && cancelledIt)
        rig.step()
        let final = try #require(rig.final(id))
        #expect(final.progress.state == .cancelled && abs(final.progress.fraction - 0.5) < 0.01)
        #expect(rig.log.last!.output.messages == [.velocity([AxisValue(.yaw, 0), AxisValue(.pitch, 0)])])
        rig.run(for: 0.5)
        #expect(abs(rig.truth(.yaw).velocity) < 1e-3)
        #expect(rig.truth(.yaw).motorPosition < 1.1)
        #expect(rig.controller.state.activity == .idle)
    }
}
