import Testing
import DockProtocol
@testable import DockSim

@Suite("Fault injection and world") struct InjectionTests {
    @Test func corruptionCausesDecoderErrorsAndTheStreamRecoversAfterIt() {
        var host = TestHost()
        host.handshake()
        host.run(0.5)
        #expect(host.errors.isEmpty)
        host.apply(.corrupt(fraction: 0.05, seconds: 1.0))
        host.run(1.0)
        #expect(host.errors.count > 10, "5 % of bytes corrupted must break frames")
        host.clear()
        host.run(1.0)
        // One frame may straddle the end of the corruption; after that the stream is clean.
        #expect(host.errors.count <= 1)
        #expect(host.feedback.count >= 95)
    }

    @Test func silentSendsNothingForItsDurationThenResumes() {
        var host = TestHost()
        host.handshake()
        host.run(0.2)
        host.clear()
        host.apply(.silent(seconds: 0.5))
        host.run(0.49)
        #expect(host.received.isEmpty)
        host.run(0.2)
        #expect(host.feedback.count >= 15)
    }

    @Test func buttonPressSendsPressAndRelease() {
        var host = TestHost()
        host.handshake()
        host.apply(.press(.trackingButton))
        host.run(0.2)
        let events = host.messages.compactMap { if case .event(let e) = $0 { e } else { nil } }
        #expect(events.map(\.knownKind) == [.trackingButton, .trackingButton])
        #expect(events.map(\.value) == [1, 0])
    }

    @Test func undockSendsTheDockedEvent() {
        var host = TestHost()
        host.handshake()
        host.apply(.docked(false))
        let events = host.messages.compactMap { if case .event(let e) = $0 { e } else { nil } }
        #expect(events.count == 1 && events.first?.knownKind == .docked && events.first?.value == 0)
    }

    @Test func batteryDrainsFasterWhileMovingAndChargesOnTheCharger() {
        var idle = TestHost(), moving = TestHost(), charging = TestHost()
        idle.handshake(); moving.handshake(); charging.handshake()
        moving.send(.velocity([AxisValue(.yaw, 3)]))
        charging.apply(.charger(true))
        for _ in 0..<3 { idle.run(5); moving.run(5); charging.run(5) }
        let start = 0.8
        #expect(idle.stand.batteryLevels[0] < start)
        #expect(moving.stand.batteryLevels[0] < idle.stand.batteryLevels[0] - 0.005)
        #expect(charging.stand.batteryLevels[0] > start + 0.02)
        let reports = charging.messages.compactMap { if case .battery(let b) = $0 { b } else { nil } }
        #expect(reports.last?.charge == .charging)
        #expect((reports.last?.level ?? 0) > 0.81)
    }

    @Test func lowBatteryIsFlagged() {
        var host = TestHost()
        host.handshake()
        host.apply(.battery(level: 0.1))
        host.run(0.01)
        let reports = host.messages.compactMap { if case .battery(let b) = $0 { b } else { nil } }
        #expect(reports.last?.low == true)
        #expect(abs((reports.last?.level ?? 0) - 0.1) < 0.011)
    }
}
