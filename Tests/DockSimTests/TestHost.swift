import DockProtocol
@testable import DockSim

/// A host in virtual time: sends frames to a `SimulatedStand`, advances its clock in 1 ms steps and
/// decodes everything the stand sends with the real `FrameDecoder`, as dockd would.
struct TestHost {
    var stand: SimulatedStand
    private var decoder = FrameDecoder()
    private var sequencer = FrameSequencer()
    /// Virtual time, µs on the stand's clock.
    private(set) var now: UInt64 = 0
    /// Every frame received, with the virtual time it arrived.
    private(set) var received: [(time: UInt64, frame: Frame)] = []
    private(set) var errors: [FrameError] = []
    private var lastHeartbeat: UInt64 = 0

    init(seed: UInt64 = 1, configure: (inout StandConfiguration) -> Void = { _ in }) {
        var configuration = StandConfiguration()
        configure(&configuration)
        stand = SimulatedStand(configuration: configuration, seed: seed)
    }

    var counters: DecoderCounters { decoder.counters }
    var messages: [Message] { received.map(\.frame.message) }

    /// Sends one frame at the present time; returns its seq so tests can match ACK/NACK.
    @discardableResult
    mutating func send(_ message: Message, ack: Bool = false) -> UInt16 {
        let frame = sequencer.frame(message, ackRequested: ack)
        take(stand.receive(FrameEncoder.encode(frame), atMicros: now))
        return frame.seq
    }

    mutating func apply(_ action: SimAction) { take(stand.apply(action, atMicros: now)) }

    /// Bytes as they are, for frames the codec would not build (unknown types, short payloads).
    mutating func sendRaw(_ bytes: [UInt8]) { take(stand.receive(bytes, atMicros: now)) }

    /// Lets `seconds` pass. With `keepAlive` the host sends HEARTBEAT every 100 ms, well inside
    /// any timeout, so long motion tests are not cut short by the stand's safety stop.
    mutating func run(_ seconds: Double, keepAlive: Bool = true) {
        let end = now + UInt64(seconds * 1e6)
        while now < end {
            now = min(end, now + 1000)
            take(stand.advance(toMicros: now))
            if keepAlive && now - lastHeartbeat >= 100_000 {
                lastHeartbeat = now
                send(.heartbeat(uptimeMs: UInt32(now / 1000)))
            }
        }
    }

    /// HELLO and its answers; clears what was received so tests start from a clean slate.
    mutating func handshake(heartbeatTimeoutMs: UInt16 = 0) {
        send(.hello(Hello(heartbeatTimeoutMs: heartbeatTimeoutMs, host: "tests")), ack: true)
        lastHeartbeat = now
        clear()
    }

    mutating func clear() {
        received.removeAll()
        errors.removeAll()
    }

    /// Feedback samples received, in order.
    var feedback: [Feedback] {
        received.compactMap { if case .feedback(let f) = $0.frame.message { f } else { nil } }
    }

    /// The latest feedback for `axis`.
    func last(_ axis: Axis) -> AxisFeedback? { feedback.last?.axis(axis) }

    var nacks: [Nack] { messages.compactMap { if case .nack(let n) = $0 { n } else { nil } } }
    var acks: [Ack] { messages.compactMap { if case .ack(let a) = $0 { a } else { nil } } }
    var faults: [(time: UInt64, fault: Fault)] {
        received.compactMap { if case .fault(let f) = $0.frame.message { ($0.time, f) } else { nil } }
    }

    private mutating func take(_ bytes: [UInt8]) {
        for result in decoder.feed(bytes) {
            switch result {
            case .success(let frame): received.append((now, frame))
            case .failure(let error): errors.append(error)
            }
        }
    }
}

/// Position of `axis` in the last feedback sampled at or before `micros`.
func position(_ axis: Axis, at micros: UInt64, in feedback: [Feedback]) -> Double? {
    feedback.last { $0.timeUs <= micros }?.axis(axis).map { Double($0.position) }
}
