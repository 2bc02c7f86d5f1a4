import DockProtocol

/// The dockd stand protocol v1 (protocol/PROTOCOL.md) as a driver: HELLO with retries and the
/// version check, heartbeats, acknowledgements both ways (commands resent up to 3 times; the stand's
/// ACK requests answered), impossible reports refused, and the link's round trip timed by asking
/// an ACK of a frame twice a second while the round trip holds steady, every 50 ms while it moves
/// (or a probe is overdue). A VELOCITY equal to the last one goes out again only every 50 ms (the
/// controller asks one at every FEEDBACK). Every time comes from `ProtocolTiming`.
public struct NativeDriver: StandDriver {
    public let name = "native"
    private let heartbeatTimeoutMs: UInt16
    private let host: String
    private var decoder = FrameDecoder()
    private var earlierLinks = DecoderCounters()
    private var sequencer = FrameSequencer()
    private var identity: HelloReply?
    /// The stand answered HELLO (`identity` is set): its session runs, and the host must not stay
    /// silent. Kept apart because it is asked after every event, and `identity != nil` copies the
    /// whole reply (its strings retained and released) to look at it.
    private var sessionRuns = false
    private var capabilities: Capabilities?
    private var isReady = false
    /// The handshake failed (reported once); nothing more is sent on this link.
    private var failed = false
    private var handshakeStart = 0.0
    private var hellosSent = 0
    private var lastHello = -Double.infinity
    private var lastSent = -Double.infinity
    /// The longest the driver may stay silent once the stand's session runs: a quarter of the
    /// heartbeat timeout in force (PROTOCOL.md §3).
    private var silenceLimit: Double
    private var lastTick: Double?
    /// The gap between the last two ticks: how late the next one may come.
    private var tickGap = 0.0
    /// ACK/NACK answers to the stand's ACK requests, sent at the next tick (at once for a caller
    /// that follows `nextDeadline`).
    private var answers: [Message] = []
    private var answersDue: Double?
    /// Commands waiting for their ACK, in the order sent.
    private var awaitingAck: [Pending] = []
    /// Frames that asked for an ACK only to time the link: seq → when sent.
    private var probes: [UInt16: Double] = [:]
    private var lastProbe = -Double.infinity
    /// The last round trip measured lay well off the smoothed one (or was the first): the link's
    /// timing is changing, so frames time it every `probeInterval` until the estimate has caught up
    /// (`steadyProbeInterval`).
    private var roundTripMoving = false
    /// The last VELOCITY written and when, while nothing sent or heard since may have changed what
    /// the stand does with it (nil: the next VELOCITY goes out whatever it says).
    private var lastVelocity: (message: Message, sentAt: Double)?
    public private(set) var counters = DriverCounters()

    private struct Pending: Sendable {
        var message: Message
        /// Every copy sent so far: an ACK for any of them (a late one too) means it was accepted.
        var seqs: [UInt16]
        var sentAt: Double
    }

    /// How often a frame asks for an ACK to time the link (PROTOCOL.md §3) while its timing is
    /// changing: at most 20 ACKs a second, 200 bytes/s, so the smoothed round trip follows a change
    /// within a second or two.
    private static let probeInterval = 0.05
    /// How often a frame asks for one while the link's timing holds steady. Each probe's ACK wakes
    /// dockd for its read: at rest a stand hears nothing but heartbeats, ten a second (a link read
    /// in batches is read at once while an answer is awaited: `awaitsAnswer`), and a stand tracking
    /// a subject a VELOCITY at every FEEDBACK; probing at `probeInterval` made a fifth of the
    /// wake-ups at rest and one in ten while tracking. A round trip measured well off the smoothed
    /// one (`roundTripMoving`), or a probe unanswered past the time it allows (`probeOverdue`),
    /// brings back a probe every `probeInterval`: a link that slows is probed that often from one
    /// round trip after its first probe since (at most this interval after the slowing).
    private static let steadyProbeInterval = 0.5
    /// How often a VELOCITY equal to the last one sent goes out again (PROTOCOL.md §3.3), so that a
    /// VELOCITY lost on the link is made good within it.
    public static let velocityRepeatInterval = 0.05
    /// The idle heartbeat goes out at this fraction of the silence limit: the rest is slack for a
    /// caller that ticks late.
    private static let heartbeatAim = 0.8
    /// Two times this close are the same deadline (a tick exactly on it must act).
    private static let epsilon = 1e-9

    /// Commands worth an acknowledgement: a lost STOP, LED, LIMITS or MOTORS would go unnoticed.
    /// Velocity setpoints are not: the next control tick sends a fresh one.
    private static func wantsAck(_ message: Message) -> Bool {
        switch message {
        case .stop, .led, .limits, .motors: true
        default: false
        }
    }

    public init(heartbeatTimeoutMs: UInt16 = ProtocolTiming.defaultHeartbeatTimeoutMs, host: String = "dockd") {
        self.heartbeatTimeoutMs = heartbeatTimeoutMs
        self.host = host
        self.silenceLimit = ProtocolTiming.hostSilenceLimit(heartbeatTimeoutMs: heartbeatTimeoutMs)
    }

    public mutating func start(at time: Double) -> [UInt8] {
        // A new link starts a new decoder; the counts go on across reconnects.
        earlierLinks = earlierLinks.adding(decoder.counters)
        decoder = FrameDecoder()
        identity = nil
        sessionRuns = false
        capabilities = nil
        isReady = false
        failed = false
        awaitingAck = []
        probes = [:]
        answers = []
        answersDue = nil
        lastProbe = -Double.infinity
        roundTripMoving = false
        lastVelocity = nil
        lastTick = nil
        tickGap = 0
        silenceLimit = ProtocolTiming.hostSilenceLimit(heartbeatTimeoutMs: heartbeatTimeoutMs)
        handshakeStart = time
        hellosSent = 0
        // A leading 0x00 ends whatever line noise came before (PROTOCOL.md §1).
        return [0] + hello(at: time)
    }

    private mutating func hello(at time: Double) -> [UInt8] {
        hellosSent += 1
        lastHello = time
        return frame(.hello(Hello(heartbeatTimeoutMs: heartbeatTimeoutMs, host: host)), ackRequested: true, at: time).bytes
    }

    // MARK: - Receiving

    public mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport] {
        var reports: [DriverReport] = []
        for event in decoder.events(bytes) {
            switch event {
            case .broken(let error):
                reports.append(.garbage(error))
            case .unusable(let header, let error):
                reports.append(.garbage(error))
                // A later minor's type, or a payload this version cannot read: refused, never ignored
                // when the stand asked (PROTOCOL.md §3, "Acknowledgements").
                let code: NackCode = error == .unknownType ? .unsupported : .malformed
                let what = error == .unknownType ? "unknown to protocol \(ProtocolVersion.text)" : "its payload is malformed"
                answer(header, .refuse(code, "type 0x\(String(header.type, radix: 16)): \(what)"), at: time)
            case .frame(let frame):
                let verdict = handle(frame.message, at: time, into: &reports)
                answer(FrameHeader(type: frame.message.type.rawValue, seq: frame.seq, ackRequested: frame.ackRequested), verdict, at: time)
            }
        }
        counters.decoder = earlierLinks.adding(decoder.counters)
        return reports
    }

    private enum Verdict {
        case accept
        case refuse(NackCode, String)
    }

    /// Queues the answer to a frame that asked for one. ACK and NACK are never answered: two peers
    /// would otherwise answer each other forever.
    private mutating func answer(_ header: FrameHeader, _ verdict: Verdict, at time: Double) {
        guard header.ackRequested, header.type != MessageType.ack.rawValue, header.type != MessageType.nack.rawValue else { return }
        switch verdict {
        case .accept: answers.append(.ack(Ack(seq: header.seq, type: header.type)))
        case .refuse(let code, let detail): answers.append(.nack(Nack(seq: header.seq, type: header.type, code: code, detail: detail)))
        }
        if answersDue == nil { answersDue = time }
    }

    private mutating func handle(_ message: Message, at time: Double, into reports: inout [DriverReport]) -> Verdict {
        switch message {
        case .helloReply(let reply):
            guard reply.major == ProtocolVersion.major else {
                let text = "the stand speaks protocol \(reply.major).\(reply.minor), dockd speaks \(ProtocolVersion.text): refused"
                reports.append(.incompatible(text))
                failed = true
                return .refuse(.versionMismatch, "host speaks \(ProtocolVersion.text)")
            }
            identity = reply
            sessionRuns = true
            lastVelocity = nil
            // The stand's session runs from here: its heartbeat timeout is the one it reports.
            let inForce = reply.heartbeatTimeoutMs == 0 ? ProtocolTiming.defaultHeartbeatTimeoutMs : reply.heartbeatTimeoutMs
            silenceLimit = max(0.005, Double(inForce) / 4000)
        case .capabilities(let caps):
            if let problem = caps.problem {
                reports.append(.fatal("the stand's \(problem): it cannot be steered"))
                failed = true
                return .refuse(.outOfRange, problem)
            }
            guard let id = identity, !isReady else { return .accept }
            capabilities = caps
            isReady = true
            reports.append(.ready(StandIdentity(model: id.model, firmware: id.firmware, hardware: id.hardware, serial: id.serial,
                                                protocolVersion: "\(id.major).\(id.minor)"), caps))
        case .feedback(let f): reports.append(.feedback(f))
        case .imu(let s):
            if let problem = s.problem { return reject(problem, into: &reports) }
            reports.append(.imu(s))
        case .event(let e):
            if let problem = e.problem { return reject(problem, into: &reports) }
            reports.append(.event(e))
        case .battery(let b):
            if let problem = b.problem(batteryCount: capabilities?.batteries.count) { return reject(problem, into: &reports) }
            reports.append(.battery(b))
        case .fault(let f):
            // A stand that reports a fault may have stopped (its heartbeat lost, a stall): only an
            // actuation command moves it again, so the next VELOCITY goes out whatever it says.
            lastVelocity = nil
            reports.append(.fault(f))
        case .ack(let ack):
            answered(ack.seq, at: time)
        case .nack(let nack):
            lastVelocity = nil
            answered(nack.seq, at: time)
            counters.refused += 1
            if nack.type == MessageType.hello.rawValue && nack.knownCode == .versionMismatch {
                reports.append(.incompatible("the stand refused dockd's protocol \(ProtocolVersion.text): \(nack.detail)"))
                failed = true
            } else {
                reports.append(.refused(command: nack.type, reason: "\(nack.knownCode?.description ?? "code \(nack.code)"): \(nack.detail)"))
            }
        case .heartbeat:
            break
        case .hello, .request, .velocity, .position, .stop, .limits, .led, .motors:
            return .refuse(.unsupported, "a host does not take \(message.type)")
        }
        return .accept
    }

    public var stopConfirmed: Bool { !awaitsAcknowledgement(of: .stop) }

    public func awaitsAcknowledgement(of type: MessageType) -> Bool { awaitingAck.contains { $0.message.type == type } }
    /// Before the stand is ready every frame of the handshake is answered.
    public var awaitsAnswer: Bool { !isReady || !probes.isEmpty || !awaitingAck.isEmpty }

    private func reject(_ problem: String, into reports: inout [DriverReport]) -> Verdict {
        reports.append(.rejected(problem))
        return .refuse(.outOfRange, problem)
    }

    // MARK: - Sending

    public mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        if case .velocity = command {
            // The stand holds a VELOCITY until the next command; the host's silence is the heartbeat's to fill.
            if let last = lastVelocity, last.message == command, time - last.sentAt < Self.velocityRepeatInterval - Self.epsilon { return [] }
            lastVelocity = (command, time)
        } else {
            // A STOP, POSITION, LIMITS or MOTORS changes what the stand does with the last VELOCITY.
            lastVelocity = nil
        }
        guard Self.wantsAck(command) else { return frame(command, ackRequested: false, at: time).bytes }
        let sent = frame(command, ackRequested: true, at: time)
        awaitingAck.append(Pending(message: command, seqs: [sent.seq], sentAt: time))
        return sent.bytes
    }

    /// Frames and numbers a message. Once the stand is ready, a frame that needs no ACK asks for one
    /// anyway every `steadyProbeInterval` (`probeInterval` while the link's timing moves), to time the link
    /// (any frame may ask, PROTOCOL.md §3) — except ACK and NACK, which are never answered.
    private mutating func frame(_ message: Message, ackRequested: Bool, at time: Double) -> (seq: UInt16, bytes: [UInt8]) {
        let answerable = message.type != .ack && message.type != .nack
        let interval = roundTripMoving || probeOverdue(at: time) ? Self.probeInterval : Self.steadyProbeInterval
        let probe = !ackRequested && answerable && isReady && time + Self.epsilon - lastProbe >= interval
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
            sample(roundTrip: time - sent)
            return
        }
        guard let i = awaitingAck.firstIndex(where: { $0.seqs.contains(seq) }) else { return }
        let pending = awaitingAck.remove(at: i)
        // Karn's rule: the answer to a resent command may be for any copy, so it times nothing.
        if pending.seqs.count == 1 { sample(roundTrip: time - pending.sentAt) }
    }

    /// A round trip measured: into the smoothed estimate, and whether the link's timing is moving
    /// (the first measured is: the next frames probe until a second agrees).
    private mutating func sample(roundTrip: Double) {
        roundTripMoving = counters.roundTrip.smoothed.map { !Self.withinJitter(roundTrip, of: $0) } ?? true
        counters.roundTrip.sample(roundTrip)
    }

    /// Off by no more than 2 ms or a twentieth: a pty's or a USB link's jitter stays inside (well
    /// under 1 ms). The estimate's last twentieth of a change is then closed at the steady probes'
    /// pace. (A fifth did while a moving stand's VELOCITYs probed every 50 ms whatever; without
    /// them it judged a link slowed to 200 ms steady at 170, and a move begun then was predicted
    /// across 170 ms and overshot.)
    private static func withinJitter(_ roundTrip: Double, of smoothed: Double) -> Bool {
        abs(roundTrip - smoothed) <= max(0.002, 0.05 * smoothed)
    }

    /// A probe still unanswered past the time the smoothed round trip allows: the link has slowed (or
    /// lost it; a probe unanswered for 2 s is forgotten). Its answer, a round trip away, would bring
    /// back probing every `probeInterval` (`roundTripMoving`) only then; the probes after it go at
    /// that pace from now, so that their answers follow its own one `probeInterval` apart.
    private func probeOverdue(at time: Double) -> Bool {
        guard let smoothed = counters.roundTrip.smoothed else { return false }
        return probes.values.contains { time - $0 > smoothed && !Self.withinJitter(time - $0, of: smoothed) }
    }

    // MARK: - Duties

    private var resendTimeout: Double {
        counters.roundTrip.resendTimeout(floor: ProtocolTiming.resendAfter, ceiling: ProtocolTiming.resendCeiling)
    }

    /// HELLO `k` (0-based) is due `k` intervals after the first: a late tick never shifts the ones after it.
    private var nextHelloDue: Double? {
        hellosSent < ProtocolTiming.helloAttempts ? handshakeStart + Double(hellosSent) * ProtocolTiming.helloInterval : nil
    }

    /// The handshake gives up at `handshakeTimeout`, and never less than an interval after the last HELLO.
    private var handshakeDeadline: Double {
        max(handshakeStart + ProtocolTiming.handshakeTimeout, lastHello + ProtocolTiming.helloInterval)
    }

    /// The stand's session runs once it answered HELLO: from then on the host must not stay silent.
    private var heartbeatDue: Double? {
        sessionRuns ? lastSent + Self.heartbeatAim * silenceLimit : nil
    }

    /// Asked after every event the host handles (100 a second on a streaming stand): no array.
    public var nextDeadline: Double? {
        guard !failed else { return answersDue }
        var due = answersDue
        func include(_ time: Double) { due = min(due ?? time, time) }
        if !isReady { include(nextHelloDue ?? handshakeDeadline) }
        if !awaitingAck.isEmpty {
            let timeout = resendTimeout
            for pending in awaitingAck { include(pending.sentAt + timeout) }
        }
        if let heartbeatDue { include(heartbeatDue) }
        return due
    }

    public mutating func tick(at time: Double) -> DriverOutput {
        var out = DriverOutput()
        if let last = lastTick { tickGap = max(0, time - last) }
        lastTick = time
        // Answers first: a refused version is NACKed before the link closes.
        for answer in answers { out.bytes += frame(answer, ackRequested: false, at: time).bytes }
        answers = []
        answersDue = nil
        guard !failed else { return out }
        if !isReady {
            if let due = nextHelloDue, time + Self.epsilon >= due {
                out.bytes += hello(at: time)
            } else if nextHelloDue == nil && time + Self.epsilon >= handshakeDeadline {
                failed = true
                let waited = Int(((time - handshakeStart) * 1000).rounded())
                out.reports.append(.fatal(
                    "no HELLO_REPLY and CAPABILITIES after \(hellosSent) HELLOs in \(waited) ms: the device does not speak dockd protocol \(ProtocolVersion.major) (dockd speaks \(ProtocolVersion.text))"))
                return out
            }
        }
        resend(at: time, into: &out)
        // A probe unanswered for 2 s was lost (or the link is gone): it times nothing.
        probes = probes.filter { time - $0.value < 2 }
        if sessionRuns && needsHeartbeat(at: time) {
            out.bytes += frame(.heartbeat(uptimeMs: UInt32(truncatingIfNeeded: Int(time * 1000))), ackRequested: false, at: time).bytes
        }
        return out
    }

    /// Due at `heartbeatAim` of the limit; earlier if the next tick, as late as the last gap between
    /// ticks, would come after the limit. So 20 ms ticks keep a 25 ms limit (100 ms timeout) too.
    private func needsHeartbeat(at time: Double) -> Bool {
        let limit = lastSent + silenceLimit
        return time + Self.epsilon >= lastSent + Self.heartbeatAim * silenceLimit
            || time + min(tickGap, silenceLimit / 2) + Self.epsilon >= limit
    }

    private mutating func resend(at time: Double, into out: inout DriverOutput) {
        let timeout = resendTimeout
        var stillWaiting: [Pending] = []
        for var pending in awaitingAck {
            guard time + Self.epsilon >= pending.sentAt + timeout else { stillWaiting.append(pending); continue }
            guard pending.seqs.count <= ProtocolTiming.maxResends else {
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
    }
}
