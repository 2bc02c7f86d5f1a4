import DockCore
import DockProtocol
import Testing

@Suite("Limits")
struct LimitsTests {
    @Test("DockKit's rules: min ≥ max, a negative (or zero) speed, an unsupported axis, beyond the stand's own")
    func validation() throws {
        var rig = try ClosedLoopRig()
        rig.run(for: 0.05)
        let before = rig.controller.limits(of: .pitch)
        func invalid(_ requests: [Axis: LimitRequest]) -> Bool {
            do { try rig.controller.setLimits(requests); return false } catch {
                if case .invalidParameter = error { return true }
                return false
            }
        }
        #expect(invalid([.pitch: LimitRequest(min: 0.3, max: 0.1)]))
        #expect(invalid([.pitch: LimitRequest(min: 0.2, max: 0.2)]))
        #expect(invalid([.pitch: LimitRequest(min: 0.95)]))               // above the stand's own max
        #expect(invalid([.pitch: LimitRequest(max: 1.5)]))
        #expect(invalid([.pitch: LimitRequest(maxSpeed: -1)]))
        #expect(invalid([.pitch: LimitRequest(maxSpeed: 0)]))
        #expect(invalid([.pitch: LimitRequest(maxSpeed: 5)]))             // the stand does 2 rad/s
        #expect(invalid([.pitch: LimitRequest(min: .nan)]))
        // The stand is sent float32s (PROTOCOL.md LIMITS): a speed that is zero as a float32, or a
        // range that is empty as float32s, is one the stand refuses (found by the API fuzzer).
        #expect(invalid([.yaw: LimitRequest(maxSpeed: 5e-324)]))
        #expect(invalid([.pitch: LimitRequest(min: 0.2, max: 0.2 + 1e-12)]))
        #expect(throws: MotionError.notSupported(.roll)) { try rig.controller.setLimits([.roll: LimitRequest(maxSpeed: 1)]) }
        // All or nothing: a good yaw request with a bad pitch one changes neither.
        #expect(invalid([.yaw: LimitRequest(maxSpeed: 1), .pitch: LimitRequest(min: 1, max: 0)]))
        #expect(rig.controller.limits(of: .pitch) == before)
        #expect(rig.controller.limits(of: .yaw)?.maxSpeed == 3)
        rig.step()
        #expect(rig.log.last!.output.messages.allSatisfy { if case .limits = $0 { false } else { true } })
    }

    @Test("accepted limits are sent to the stand, apply to orientation targets, and reset to the stand's own",
          arguments: ClosedLoopRig.feedbackPhases)
    func applyAndReset(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        try rig.controller.setLimits([.pitch: LimitRequest(min: -0.2, max: 0.3, maxSpeed: 1)])
        rig.step()
        #expect(rig.log.last!.output.messages.contains(.limits([AxisLimits(axis: .pitch, min: -0.2, max: 0.3, maxSpeed: 1, maxAccel: 10)])))
        #expect(throws: MotionError.self) { _ = try rig.controller.setOrientation([.pitch: 0.5], relative: false, duration: nil, at: rig.time) }

        // A move within the new range obeys the new speed limit.
        let t0 = rig.time
        let id = try rig.controller.setOrientation([.pitch: 0.3], relative: false, duration: nil, at: t0)
        let finished = rig.runUntilFinished(id)
        #expect(finished?.progress.state == .completed)
        #expect(rig.samples(since: t0).map { abs($0.pitch.velocity) }.max()! <= 1.0 + 1e-3)
        #expect(abs(rig.truth(.pitch).motorPosition - 0.3) < 0.01)

        #expect(rig.controller.resetLimits() == [.pitch])
        rig.step()
        // Only the narrowed axis goes back; the continuous yaw, never narrowed, is not sent.
        #expect(rig.log.last!.output.messages.filter { if case .limits = $0 { true } else { false } } == [
            .limits([AxisLimits(axis: .pitch, min: -0.6, max: 0.9, maxSpeed: 2, maxAccel: 10)]),
        ])
        rig.run(for: 1.1)
        let again = try rig.controller.setOrientation([.pitch: 0.5], relative: false, duration: nil, at: rig.time)
        let finishedAgain = rig.runUntilFinished(again)
        #expect(finishedAgain?.progress.state == .completed)
        #expect(abs(rig.truth(.pitch).motorPosition - 0.5) < 0.01)
        #expect(rig.nacks.isEmpty)
    }

    @Test("a reset sends one LIMITS per narrowed axis, so a refused axis cannot hold back another; a table-only change sends none")
    func resetRevertsAxisByAxis() throws {
        var rig = try ClosedLoopRig(feedbackPhase: 0)
        rig.run(for: 0.05)
        try rig.controller.setLimits([.yaw: LimitRequest(maxSpeed: 1), .pitch: LimitRequest(max: 0.3)])
        rig.step()
        #expect(rig.controller.resetLimits() == [.yaw, .pitch])
        rig.step()
        let sent = rig.log.last!.output.messages.compactMap { if case .limits(let axes) = $0 { axes.map(\.axis) } else { nil } }
        #expect(sent == [[.yaw], [.pitch]])

        try rig.controller.setLimits([.pitch: LimitRequest(max: 0.3)], informStand: false)
        #expect(rig.controller.limits(of: .pitch)?.max == 0.3)
        #expect(rig.controller.resetLimits(informStand: false) == [])
        rig.step()
        #expect(!rig.log.last!.output.messages.contains { if case .limits = $0 { true } else { false } })
        #expect(rig.controller.resetLimits() == [], "nothing narrowed: nothing to send")
    }
}
