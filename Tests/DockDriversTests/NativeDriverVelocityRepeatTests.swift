import DockDrivers
import DockProtocol
import Testing

/// The VELOCITY the controller asks at every FEEDBACK, as the stand sees it: a changed setpoint goes
/// out at once, an unchanged one again only every `NativeDriver.velocityRepeatInterval` (PROTOCOL.md
/// §3.3), and at once after anything that may have changed what the stand does.
@Suite("Native driver: an unchanged VELOCITY")
struct NativeDriverVelocityRepeatTests {
    private static let steady = Message.velocity([AxisValue(.pitch, 0.5)])

    /// The stand after its handshake, then `velocity` asked every 10 ms (a FEEDBACK's control step)
    /// from `start` until `end`, the driver ticked when it asks.
    private static func drive(_ stand: inout ScriptedStand, _ velocity: (Double) -> Message, from start: Double, until end: Double) {
        var t = start
        while t < end - 1e-9 {
            t += 0.01
            if let due = stand.driver.nextDeadline, due <= t { stand.tick(at: max(stand.time, due)) }
            stand.time = t
            stand.sendToStand(velocity(t))
        }
    }

    private static func velocityTimes(_ stand: ScriptedStand, after start: Double) -> [Double] {
        stand.received.filter { if case .velocity = $0.frame.message { $0.time > start } else { false } }.map(\.time)
    }

    /// VELOCITY frames the stand heard after its first `count` frames.
    private static func velocities(_ stand: ScriptedStand, since count: Int) -> Int {
        stand.received.dropFirst(count).filter { if case .velocity = $0.frame.message { true } else { false } }.count
    }

    @Test func anUnchangedVelocityIsRepeatedEveryIntervalNotAtEveryStep() {
        var stand = ScriptedStand()
        stand.handshake()
        Self.drive(&stand, { _ in Self.steady }, from: 0, until: 1)
        let times = Self.velocityTimes(stand, after: 0)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        // 100 steps asked: one VELOCITY per interval (rounded up to the next step), not 100.
        #expect(times.count >= 15 && times.count <= 21, "\(times.count) VELOCITY frames in 1 s")
        #expect((gaps.min() ?? 0) >= NativeDriver.velocityRepeatInterval - 1e-9)
        // The stand hears the host at least every quarter of its timeout all the same.
        let all = stand.received.map(\.time).filter { $0 > 0.05 }
        #expect((zip(all.dropFirst(), all).map { $0 - $1 }.max() ?? 1) <= 0.125 + 1e-9)
    }

    @Test func aChangedVelocityGoesAtOnce() {
        var stand = ScriptedStand()
        stand.handshake()
        // A new setpoint every step: each one is written.
        Self.drive(&stand, { t in .velocity([AxisValue(.pitch, Float(t))]) }, from: 0, until: 0.5)
        #expect(Self.velocityTimes(stand, after: 0).count == 50)
    }

    @Test func afterAStopTheSameVelocityGoesAtOnce() {
        var stand = ScriptedStand()
        stand.handshake()
        Self.drive(&stand, { _ in Self.steady }, from: 0, until: 0.2)  // the last written at 0.16: the next due at 0.21
        stand.sendToStand(.stop)
        let heard = stand.received.count
        stand.sendToStand(Self.steady)
        #expect(Self.velocities(stand, since: heard) == 1, "the stand stopped: it needs the setpoint again")
    }

    @Test func afterTheStandsFaultTheSameVelocityGoesAtOnce() {
        var stand = ScriptedStand()
        stand.handshake()
        Self.drive(&stand, { _ in Self.steady }, from: 0, until: 0.2)
        // The stand stopped on its own (its heartbeat lost, a stall): only an actuation command moves it again.
        stand.send(.fault(Fault(timeUs: 0, severity: .warning, code: .heartbeatLost, text: "heartbeat lost")))
        let heard = stand.received.count
        stand.sendToStand(Self.steady)
        #expect(Self.velocities(stand, since: heard) == 1)
    }
}

extension ScriptedStand {
    /// The host sends `message` now (a control step's): the stand hears what the driver writes.
    mutating func sendToStand(_ message: Message) { hear(driver.send(message, at: time)) }
}
