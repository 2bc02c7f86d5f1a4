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

    @Test func slowDelaysEveryFrameInOrderThenCatchesUp() {
        var host = TestHost()
        host.handshake()
        host.run(0.2)
        host.clear()
        host.apply(.slow(delayMs: 150, seconds: 1.0))
        host.run(0.149)
        #expect(host.feedback.isEmpty, "nothing arrives before the delay has passed")
        host.run(0.9)
        let late = host.received.compactMap { r -> Int64? in
            if case .feedback(let f) = r.frame.message { Int64(r.time) - Int64(f.timeUs) } else { nil }
        }
        #expect(late.count >= 85 && late.allSatisfy { (149_000...151_000).contains($0) }, "each FEEDBACK 150 ms late")
        #expect(host.errors.isEmpty)
        host.run(1.0)
        // In order, with no gap in sequence numbers, and on time again once the slow spell is over.
        let seqs = host.received.map(\.frame.seq)
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
        let lastFeedback = host.received.last { if case .feedback = $0.frame.message { true } else { false } }
        if let last = lastFeedback, case .feedback(let f) = last.frame.message {
            #expect(last.time - f.timeUs < 2_000)
        } else {
            Issue.record("no FEEDBACK after the slow spell")
        }
    }

    @Test func clockJumpOffsetsEveryLaterTimestampAndNothingElse() {
        var host = TestHost()
        host.handshake()
        host.run(1.0)
        host.clear()
        host.apply(.clockJump(seconds: -0.9))
        host.apply(.press(.trackingButton))
        host.run(0.2)
        let feedback = host.feedback
        #expect(feedback.count >= 18)
        #expect(feedback.allSatisfy { $0.timeUs < 400_000 }, "the stand's clock went back 0.9 s at t = 1 s")
        let events = host.messages.compactMap { if case .event(let e) = $0 { e } else { nil } }
        #expect(events.map(\.timeUs) == [100_000, 200_000], "press at t = 1 s, release 100 ms later, on the stand's clock")
        // Below zero the clock stops at zero rather than wrapping.
        host.apply(.clockJump(seconds: -100))
        host.run(0.05)
        #expect(host.feedback.suffix(3).allSatisfy { $0.timeUs == 0 })
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
