import DockProtocol

/// The dockd stand protocol v1 (protocol/PROTOCOL.md) as a driver: HELLO with retries and the
/// version check, heartbeats, acknowledged commands resent after 100 ms up to 3 times.
public struct NativeDriver: StandDriver {
    public let name = "native"
    private let heartbeatTimeoutMs: UInt16
    private let host: String
    private var decoder = FrameDecoder()
    private var earlierLinks = DecoderCounters()
    private var sequencer = FrameSequencer()
    private var identity: HelloReply?
    private var isReady = false
    private var helloSent = -Double.infinity
    private var helloTries = 0
    private var lastSent = -Double.infinity
    private var heartbeatInterval = 0.125
    private var awaitingAck: [UInt16: Pending] = [:]
    public private(set) var counters = DriverCounters()

    private struct Pending: Sendable {
        var message: Message
        var sentAt: Double
        var attempts: Int
    }

    /// Commands worth an acknowledgement: a lost STOP, LED, LIMITS or MOTORS would go unnoticed.
    /// Velocity setpoints are not: the next control tick sends a fresh one.
    private static func wantsAck(_ message: Message) -> Bool {
        switch message {
        case .stop, .led, .limits, .motors: true
        default: false
        }
    }

    public init(heartbeatTimeoutMs: UInt16 = 500, host: String = "dockd") {
        self.heartbeatTimeoutMs = heartbeatTimeoutMs
        self.host = host
    }

    public mutating func start(at time: Double) -> [UInt8] {
        // A new link starts a new decoder; the counts go on across reconnects.
        earlierLinks = earlierLinks.adding(decoder.counters)
        decoder = FrameDecoder()
        identity = nil
        isReady = false
        awaitingAck = [:]
        helloTries = 0
        // A leading 0x00 ends whatever line noise came before (PROTOCOL.md §1).
        return [0] + hello(at: time)
    }

    private mutating func hello(at time: Double) -> [UInt8] {
        helloTries += 1
        helloSent = time
        return frame(.hello(Hello(heartbeatTimeoutMs: heartbeatTimeoutMs, host: host)), ackRequested: true, at: time)
    }

    public mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport] {
        var reports: [DriverReport] = []
        for result in decoder.feed(bytes) {
            switch result {
            case .failure(let error): reports.append(.garbage(error))
            case .success(let frame): handle(frame.message, into: &reports)
            }
        }
        counters.decoder = earlierLinks.adding(decoder.counters)
        return reports
    }

    private mutating func handle(_ message: Message, into reports: inout [DriverReport]) {
        switch message {
        case .helloReply(let reply):
            guard reply.major == ProtocolVersion.major else {
                reports.append(.fatal("the stand speaks protocol \(reply.major).\(reply.minor), dockd speaks \(ProtocolVersion.major).\(ProtocolVersion.minor): refused"))
                return
            }
            identity = reply
            heartbeatInterval = max(0.025, Double(reply.heartbeatTimeoutMs) / 4000)
        case .capabilities(let caps):
            guard let id = identity, !isReady else { return }
            isReady = true
            reports.append(.ready(StandIdentity(model: id.model, firmware: id.firmware, hardware: id.hardware, serial: id.serial,
                                                protocolVersion: "\(id.major).\(id.minor)"), caps))
        case .feedback(let f): reports.append(.feedback(f))
        case .imu(let s): reports.append(.imu(s))
        case .event(let e): reports.append(.event(e))
        case .battery(let b): reports.append(.battery(b))
        case .fault(let f): reports.append(.fault(f))
        case .ack(let ack):
            awaitingAck.removeValue(forKey: ack.seq)
        case .nack(let nack):
            awaitingAck.removeValue(forKey: nack.seq)
            counters.refused += 1
            if nack.type == MessageType.hello.rawValue && nack.knownCode == .versionMismatch {
                reports.append(.fatal("the stand refused dockd's protocol version: \(nack.detail)"))
            } else {
                reports.append(.refused(command: nack.type, reason: "\(nack.knownCode?.description ?? "code \(nack.code)"): \(nack.detail)"))
            }
        case .heartbeat, .hello, .request, .velocity, .position, .stop, .limits, .led, .motors:
            break
        }
    }

    public mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        frame(command, ackRequested: Self.wantsAck(command), at: time)
    }

    private mutating func frame(_ message: Message, ackRequested: Bool, at time: Double) -> [UInt8] {
        let frame = sequencer.frame(message, ackRequested: ackRequested)
        if ackRequested, message.type != .hello {
            awaitingAck[frame.seq] = Pending(message: message, sentAt: time, attempts: (awaitingAck[frame.seq]?.attempts ?? 0) + 1)
        }
        lastSent = time
        return FrameEncoder.encode(frame)
    }

    public mutating func tick(at time: Double) -> DriverOutput {
        var out = DriverOutput()
        if !isReady && time - helloSent > 0.5 {
            if helloTries >= 5 {
                out.reports.append(.fatal("no HELLO_REPLY after 5 tries: the device does not speak dockd protocol v1"))
                return out
            }
            out.bytes += hello(at: time)
        }
        for (seq, pending) in awaitingAck where time - pending.sentAt > 0.1 {
            awaitingAck.removeValue(forKey: seq)
            guard pending.attempts <= 3 else {
                counters.commandsFailed += 1
                out.reports.append(.refused(command: pending.message.type.rawValue,
                                            reason: "no acknowledgement after \(pending.attempts) tries"))
                continue
            }
            counters.retries += 1
            let frame = sequencer.frame(pending.message, ackRequested: true)
            awaitingAck[frame.seq] = Pending(message: pending.message, sentAt: time, attempts: pending.attempts + 1)
            lastSent = time
            out.bytes += FrameEncoder.encode(frame)
        }
        if isReady && time - lastSent > heartbeatInterval {
            out.bytes += frame(.heartbeat(uptimeMs: UInt32(truncatingIfNeeded: Int(time * 1000))), ackRequested: false, at: time)
        }
        return out
    }
}
