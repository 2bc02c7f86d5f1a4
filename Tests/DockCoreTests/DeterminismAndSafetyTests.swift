import DockCore
import DockProtocol
import Testing

@Suite("Determinism and safety")
struct DeterminismAndSafetyTests {
    /// A scenario that touches every mode.
    private func scenario() throws -> [ControlOutput] {
        var rig = try ClosedLoopRig()
        rig.run(for: 0.05)
        try rig.controller.setVelocity([.yaw: 0.7, .pitch: -0.3], at: rig.time)
        rig.run(for: 0.7)
        _ = try rig.controller.setOrientation([.yaw: 1.0, .pitch: 0.3], relative: false, duration: 1.0, at: rig.time)
        rig.run(for: 0.6)
        _ = try rig.controller.play(.kapow, at: rig.time)
        rig.run(for: 1.2)
        rig.controller.stop(at: rig.time)
        rig.run(for: 0.3)
        return rig.log.map(\.output)
    }

    @Test("the same inputs give identical outputs")
    func deterministic() throws {
        let first = try scenario(), second = try scenario()
        #expect(first.count == second.count)
        #expect(first == second)
        #expect(first.contains { !$0.messages.isEmpty })
    }

    private static var capabilities: Capabilities { ClosedLoopRig.standCapabilities }

    private static func feedback(yaw: Float = 0, pitch: Float = 0, status: AxisStatus = []) -> Feedback {
        Feedback(timeUs: 42, axes: [AxisFeedback(axis: .yaw, position: yaw, velocity: 0, status: status),
                                     AxisFeedback(axis: .pitch, position: pitch, velocity: 0)])
    }

    @Test("without feedback for 3 periods a motion fails and the stand is sent zero velocity")
    func feedbackWatchdog() throws {
        var controller = MotionController(capabilities: Self.capabilities)
        controller.feedback(Self.feedback(), at: 5.00)
        let id = try controller.setOrientation([.yaw: 1], relative: false, duration: 1, at: 5.00)
        let first = try #require(controller.tick(at: 5.01).progress.first)
        #expect(first.id == id && first.state == .running && abs(first.fraction - 0.01) < 1e-9)
        #expect(controller.tick(at: 5.025).progress.first?.state == .running)   // 2.5 periods old: still fine
        let out = controller.tick(at: 5.035)
        #expect(out.messages == [.velocity([AxisValue(.yaw, 0), AxisValue(.pitch, 0)])])
        guard case .failed(let reason)? = out.progress.first?.state else { Issue.record("not failed: \(out)"); return }
        #expect(reason.contains("no feedback"))
        #expect(controller.tick(at: 5.05).messages.isEmpty)
        #expect(controller.state.activity == .idle)
    }

    @Test("a stalled axis fails the motion")
    func stallFails() throws {
        var controller = MotionController(capabilities: Self.capabilities)
        controller.feedback(Self.feedback(), at: 1)
        let id = try controller.setOrientation([.yaw: 1], relative: false, duration: 1, at: 1)
        controller.feedback(Self.feedback(yaw: 0.01, status: .stalled), at: 1.01)
        let out = controller.tick(at: 1.01)
        #expect(out.progress.map(\.id) == [id] && out.progress.map(\.state) == [.failed("yaw stalled")])
        #expect(out.messages == [.velocity([AxisValue(.yaw, 0), AxisValue(.pitch, 0)])])
    }

    @Test("a trajectory that cannot settle fails after the settle timeout")
    func settleTimeout() throws {
        var controller = MotionController(capabilities: Self.capabilities)
        controller.feedback(Self.feedback(), at: 0)
        let id = try controller.setOrientation([.yaw: 0.5], relative: false, duration: 1.0, at: 0)
        var final: MotionProgress?
        var t = 0.0
        while final == nil && t < 3 {
            t += 0.01
            controller.feedback(Self.feedback(), at: t)   // the stand never moves
            final = controller.tick(at: t).progress.first { $0.state.isFinal }
        }
        #expect(final?.id == id)
        guard case .failed(let reason)? = final?.state else { Issue.record("not failed"); return }
        #expect(reason.contains("yaw still 0.500 rad"))
        #expect(t > 2.0 && t < 2.02)   // 1 s planned + 1 s settle timeout
    }
}
