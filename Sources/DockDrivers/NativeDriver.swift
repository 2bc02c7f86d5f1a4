import DockProtocol

/// The dockd stand protocol v1 (protocol/PROTOCOL.md) as a driver: HELLO with retries and the
/// version check, heartbeats, acknowledged commands resent up to 3 times (after 100 ms, or longer on
/// a link measured slower), and the link's round trip timed by asking an ACK of a frame every 100 ms.
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
    /// Commands waiting for their ACK, in the order sent.
    private var awaitingAck: [Pending] = []
    /// Frames that asked for an ACK only to time the link: seq → when sent.
    private var probes: [UInt16: Double] = [:]
    private var lastProbe = -Double.infinity
    public private(set) var counters = DriverCounters()

    private struct Pending: Sendable {
        var message: Message
        /// Every copy sent so far: an ACK for any of them (a late one too) means it was accepted.
        var seqs: [UInt16]
        var sentAt: Double
    }

    /// How often a frame asks for an ACK to time the link (PROTOCOL.md §3): 20 ACKs a second, 200
    /// bytes/s, so the smoothed round trip follows a change within about half a second.
    private static let probeInterval = 0.05
    /// Resend after 100 ms on a healthy link (PROTOCOL.md §5); never wait more than this on a slow one.
    private static let resendFloor = 0.1, resendCeiling = 1.0

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
        awaitingAck = []
        probes = [:]
        lastProbe = -Double.infinity
        helloTries = 0
        // A leading 0x00 ends whatever line noise came before (PROTOCOL.md §1).
        return [0] + hello(at: time)
    }

    private mutating func hello(at time: Double) -> [UInt8] {
        helloTries += 1
        helloSent = time
        return frame(.hello(Hello(heartbeatTimeoutMs: heartbeatTimeoutMs, host: host)), ackRequested: true, at: time).bytes
    }

    public mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport] {
        var reports: [DriverReport] = []
        for result in decoder.feed(bytes) {
            switch result {
            case .failure(let error): reports.append(.garbage(error))
            case .success(let frame): handle(frame.message, at: time, into: &reports)
            }
        }
        counters.decoder = earlierLinks.adding(decoder.counters)
        return reports
    }

    private mutating func handle(_ message: Message, at time: Double, into reports: inout [DriverReport]) {
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
            answered(ack.seq, at: time)
        case .nack(let nack):
            answered(nack.seq, at: time)
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

    public var stopConfirmed: Bool { !awaitingAck.contains { $0.message == .stop } }

    public mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        guard Self.wantsAck(command) else { return frame(command, ackRequested: false, at: time).bytes }
        let sent = frame(command, ackRequested: true, at: time)
        awaitingAck.append(Pending(message: command, seqs: [sent.seq], sentAt: time))
        return sent.bytes
    }

    /// Frames and numbers a message. Once the stand is ready, a frame that needs no ACK asks for one
    /// anyway every `probeInterval`, to time the link (any frame may ask, PROTOCOL.md §2).
    private mutating func frame(_ message: Message, ackRequested: Bool, at time: Double) -> (seq: UInt16, bytes: [UInt8]) {
        let probe = !ackRequested && isReady && time - lastProbe >= Self.probeInterval
        let frame = sequencer.frame(message, ackRequested: ackRequested || probe)
        if probe {
            probes[frame.seq] = time
            lastProbe = time
        }
        lastSent = time
        return (frame.seq, FrameEncoder.encode(frame))
    }

    /// An ACK or NACK for `seq`: a probe times the link; a command is done with.
    private mutating func answered(_ seq: UInt16, at time: Double) {
        if let sent = probes.removeValue(forKey: seq) {
            counters.roundTrip.sample(time - sent)
            return
        }
        guard let i = awaitingAck.firstIndex(where: { $0.seqs.contains(seq) }) else { return }
        let pending = awaitingAck.remove(at: i)
        // Karn's rule: the answer to a resent command may be for any copy, so it times nothing.
        if pending.seqs.count == 1 { counters.roundTrip.sample(time - pending.sentAt) }
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
        let timeout = counters.roundTrip.resendTimeout(floor: Self.resendFloor, ceiling: Self.resendCeiling)
        var stillWaiting: [Pending] = []
        for var pending in awaitingAck {
            guard time - pending.sentAt > timeout else { stillWaiting.append(pending); continue }
            guard pending.seqs.count <= 3 else {
                counters.commandsFailed += 1
                out.reports.append(.refused(command: pending.message.type.rawValue,
                                            reason: "no acknowledgement after \(pending.seqs.count) tries"))
                continue
            }
            counters.retries += 1
            let resent = frame(pending.message, ackRequested: true, at: time)
            pending.seqs.append(resent.seq)
            pending.sentAt = time
            stillWaiting.append(pending)
            out.bytes += resent.bytes
        }
        awaitingAck = stillWaiting
        // A probe unanswered for 2 s was lost (or the link is gone): it times nothing.
        probes = probes.filter { time - $0.value < 2 }
        if isReady && time - lastSent > heartbeatInterval {
            out.bytes += frame(.heartbeat(uptimeMs: UInt32(truncatingIfNeeded: Int(time * 1000))), ackRequested: false, at: time).bytes
        }
        return out
    }
}
