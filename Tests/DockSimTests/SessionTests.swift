import Testing
import DockProtocol
@testable import DockSim

@Suite("Session") struct SessionTests {
    @Test func helloIsAnsweredWithReplyCapabilitiesBatteryAndDockedEvent() throws {
        var host = TestHost { $0.serial = "UNIT-42" }
        host.send(.hello(Hello(heartbeatTimeoutMs: 300, host: "tests")), ack: true)
        let types = host.messages.prefix(4).map(\.type)
        #expect(types == [.helloReply, .capabilities, .battery, .event])
        guard case .helloReply(let reply) = host.messages.first else { Issue.record("no HELLO_REPLY"); return }
        #expect(reply.major == 1 && reply.heartbeatTimeoutMs == 300 && reply.serial == "UNIT-42")
        guard host.messages.count >= 4, case .event(let docked) = host.messages[3] else { Issue.record("no EVENT"); return }
        #expect(docked.knownKind == .docked && docked.value == 1)
        guard case .capabilities(let caps) = host.messages[1] else { Issue.record("no CAPABILITIES"); return }
        #expect(caps.axes.map(\.axis) == [.yaw, .pitch])
        // Then feedback starts.
        host.run(0.05)
        #expect(host.feedback.count >= 4)
    }

    @Test func heartbeatTimeoutIsClampedTo100To5000() {
        for (asked, expected): (UInt16, UInt16) in [(10, 100), (0, 500), (9000, 5000)] {
            var host = TestHost()
            host.send(.hello(Hello(heartbeatTimeoutMs: asked, host: "tests")), ack: true)
            guard case .helloReply(let reply) = host.messages.first else { Issue.record("no reply"); continue }
            #expect(reply.heartbeatTimeoutMs == expected, "asked \(asked)")
        }
    }

    @Test func commandsBeforeHelloAreRefusedNotReadyAndDoNotMove() {
        var host = TestHost()
        let seq = host.send(.velocity([AxisValue(.yaw, 1)]), ack: true)
        #expect(host.nacks.map(\.seq) == [seq])
        #expect(host.nacks.first?.knownCode == .notReady)
        host.run(0.5)
        #expect(abs(host.stand.truth(.yaw)!.motorPosition) < 1e-3)
        #expect(host.feedback.isEmpty, "no feedback before a session")
    }

    @Test func helloWithAnotherMajorIsRefusedVersionMismatch() {
        var host = TestHost()
        let seq = host.send(.hello(Hello(major: 2, minor: 0, heartbeatTimeoutMs: 0, host: "future")), ack: true)
        #expect(host.nacks.count == 1)
        #expect(host.nacks.first?.seq == seq)
        #expect(host.nacks.first?.knownCode == .versionMismatch)
        #expect(host.nacks.first?.detail.contains(ProtocolVersion.text) == true, "the detail names the stand's version")
        #expect(!host.messages.contains { $0.type == .helloReply })
        #expect(!host.stand.sessionActive)
    }

    @Test func requestRepeatsCapabilities() {
        var host = TestHost()
        host.handshake()
        let seq = host.send(.request(.capabilities), ack: true)
        #expect(host.messages.contains { $0.type == .capabilities })
        #expect(host.acks.map(\.seq) == [seq])
    }

    /// receive() and apply() must not lose what the stand sent while catching up to their time:
    /// a host that only talks (never calls advance) still sees every frame, without sequence gaps.
    @Test func receiveKeepsPeriodicOutputProducedWhileCatchingUp() {
        var stand = SimulatedStand()
        var decoder = FrameDecoder()
        var sequencer = FrameSequencer()
        func send(_ message: Message, at time: UInt64) -> [Frame] {
            let bytes = stand.receive(FrameEncoder.encode(sequencer.frame(message)), atMicros: time)
            return decoder.feed(bytes).compactMap { try? $0.get() }
        }
        _ = send(.hello(Hello(heartbeatTimeoutMs: 1000, host: "t")), at: 0)
        let frames = send(.heartbeat(uptimeMs: 100), at: 100_000)
        let feedbackCount = frames.filter { $0.message.type == .feedback }.count
        #expect(feedbackCount >= 9)
        _ = stand.apply(.log("x"), atMicros: 200_000)
        #expect(decoder.counters.sequenceGaps == 0)
    }
}
