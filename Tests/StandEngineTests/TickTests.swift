import DockProtocol
import DockSim
import VirtualTime
import StandEngine
import Testing

@Suite("Engine: ticks only when due")
struct TickTests {
    @Test func nothingIsDueWhileTheLinkIsClosed() {
        let rig = VirtualHost<SimulatedStand>()
        #expect(rig.engine.nextTick == nil)
    }

    /// A stand at rest streaming FEEDBACK needs from the engine only the heartbeat dockd owes it
    /// (every 0.8 × 125 ms while nothing else goes out), no periodic tick.
    @Test func atRestTheEngineIsTickedOnlyForTheHeartbeatToTheStand() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        rig.run(for: 0.5)
        let (ticks, heartbeats) = (rig.ticks, rig.sentMessages(isHeartbeat).count)
        rig.run(for: 2)
        let sent = rig.sentMessages(isHeartbeat).count - heartbeats
        #expect(sent >= 19 && sent <= 21, "a heartbeat every 100 ms")
        #expect(rig.ticks - ticks == sent)
        let due = try #require(rig.engine.nextTick)
        #expect(due > rig.now && due <= rig.now + 0.1 + 1e-6)
    }

    /// While the stand moves, a FEEDBACK runs the control step, and the next is due one control gap
    /// later: when the feedback stalls, the timer steps the controller then (it renews the motors'
    /// command and lets the deadman and the feedback watchdog act).
    @Test func whileMovingTheControlStepIsDueOneGapAfterTheLast() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        _ = try rig.send(.velocity([.yaw: 0.5]), from: .app)
        rig.run(for: 0.2)
        #expect(rig.run(until: rig.now + 0.05) { $0.engine.lastFeedback?.time == $0.now })
        let lastStep = rig.now
        let due = try #require(rig.engine.nextTick)
        #expect(abs(due - (lastStep + StandEngine.controlGap)) < 1e-5)
        rig.stand(.silent(seconds: 0.5))
        rig.clearRecords()
        rig.run(for: 0.06)
        let velocities = rig.sent.filter { $0.frame.message.type == .velocity }.map(\.time)
        #expect(velocities.count == 1)
        #expect(abs((velocities.first ?? 0) - due) <= 0.001, "the timer's step, at its due time (1 ms steps)")
    }

    private func isHeartbeat(_ message: Message) -> Bool { message.type == .heartbeat }
}
