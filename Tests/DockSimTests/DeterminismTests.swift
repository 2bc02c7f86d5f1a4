import Testing
import DockProtocol
@testable import DockSim

@Suite("Determinism") struct DeterminismTests {
    /// A fixed session: handshake, motion, a corruption burst and a button, all in virtual time.
    private func transcript(seed: UInt64) -> [UInt8] {
        var stand = SimulatedStand(seed: seed)
        var sequencer = FrameSequencer()
        var bytes: [UInt8] = []
        bytes += stand.receive(FrameEncoder.encode(sequencer.frame(.hello(Hello(heartbeatTimeoutMs: 0, host: "t")))), atMicros: 0)
        bytes += stand.receive(FrameEncoder.encode(sequencer.frame(.velocity([AxisValue(.yaw, 1), AxisValue(.pitch, 0.5)]))), atMicros: 1000)
        bytes += stand.apply(.corrupt(fraction: 0.01, seconds: 0.2), atMicros: 100_000)
        bytes += stand.apply(.press(.shutter), atMicros: 150_000)
        for t in stride(from: UInt64(2000), through: 400_000, by: 2000) { bytes += stand.advance(toMicros: t) }
        return bytes
    }

    @Test func theSameSeedGivesByteIdenticalOutput() {
        let a = transcript(seed: 7), b = transcript(seed: 7)
        #expect(a.count > 3000)
        #expect(a == b)
    }

    @Test func aDifferentSeedGivesDifferentOutput() {
        #expect(transcript(seed: 7) != transcript(seed: 8))
    }

    @Test func feedbackAveragesItsRateWhenThePeriodIsNotAWholeStep() {
        // 333 Hz is a 3003 µs period on a 1 ms physics step.
        var host = TestHost { $0.feedbackHz = 333; $0.imuHz = 0 }
        host.handshake()
        host.run(3.0)
        #expect(abs(host.feedback.count - 999) <= 3)
    }
}
