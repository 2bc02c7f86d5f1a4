import DockProtocol

/// A VISCA PTZ camera as a stand: yaw = pan (VISCA pan is positive to the right, so yaw = −pan),
/// pitch = tilt. Velocity commands become Pan-tiltDrive with the nearest speed bytes of the
/// profile; positions come from Pan-tiltPosInq polled at `pollHz` and are reported as FEEDBACK
/// with velocities estimated from successive polls.
///
/// One message is in flight at a time: the next one goes out after the previous one's
/// completion (or, for positional moves, its ACK: the move keeps a socket until it completes).
/// Velocity commands are coalesced (the newest wins) and identical ones are not resent.
/// "Buffer full" backs off; other errors become `.refused`; no answer is resent, then reported.
public struct VISCADriver: StandDriver {
    public enum Transport: String, Sendable {
        /// RS-232/422 byte stream: AddressSet + IF_Clear on start.
        case serial
        /// Sony VISCA-over-IP (UDP 52381, 8-byte header): sequence reset + IF_Clear on start.
        case ip
        /// Raw VISCA in UDP datagrams, no header: IF_Clear on start.
        case raw
        /// Raw VISCA on a TCP stream (e.g. PTZOptics' port 5678): IF_Clear on start, no AddressSet.
        case tcp
    }

    public let name = "visca"
    public let profile: VISCAProfile
    public let address: UInt8
    public let transport: Transport
    public let pollInterval: Double
    public let serialName: String
    public private(set) var counters = DriverCounters()

    private enum Kind: Equatable { case addressSet, resetSequence, ifClear, poll, command(UInt8), move(UInt8) }
    private struct Pending { var kind: Kind; var payload: [UInt8] }
    private struct InFlight {
        var pending: Pending; var wire: [UInt8]; var sentAt: Double; var attempts: Int
        /// The socket the camera's ACK named; nil until acknowledged.
        var socket: UInt8?
        var acked: Bool { socket != nil }
    }
    private enum Phase { case setup, firstPoll, running, failed }

    private var phase = Phase.setup
    private var inFlight: InFlight?
    /// The newest motion command not sent yet (drive, move, home): the newest wins.
    private var queued: Pending?
    /// A message to resend after a "buffer full" back-off.
    private var retry: Pending?
    /// The next handshake step (IF_Clear after AddressSet or the sequence reset).
    private var setupNext: Pending?
    private var lastSentKind: Kind?
    private var backoffUntil = 0.0
    private var nextPollAt = 0.0
    private var lastDrive: [UInt8]?
    private var moveSocket: UInt8?
    private var sequence: UInt32 = 0
    private var decoder = VISCAStreamDecoder()
    private var lastSample: (yaw: Double, pitch: Double, time: Double)?
    private var velocity = (yaw: 0.0, pitch: 0.0)
    private var deferred: [DriverReport] = []
    private let replyTimeout: Double
    private let completionTimeout = 2.0
    private let attemptsAllowed = 3

    public init(profile: VISCAProfile, address: UInt8 = 1, transport: Transport = .serial, pollHz: Double = 20,
                name: String? = nil) {
        self.profile = profile
        self.address = min(7, max(1, address))
        self.transport = transport
        self.pollInterval = 1 / max(1, min(200, pollHz))
        self.serialName = name ?? "visca-\(self.address)"
        self.replyTimeout = profile.replyTimeout ?? (transport == .serial ? 0.3 : 0.2)
    }

    public var capabilities: Capabilities {
        let rad = Double.pi / 180
        let pan = profile.pan, tilt = profile.tilt
        return Capabilities(
            feedbackHz: UInt16((1 / pollInterval).rounded()), imuHz: 0, features: [], buttons: [], customButtons: 0,
            axes: [
                AxisCapability(axis: .yaw, continuous: false, min: Float(-pan.maxDegrees * rad), max: Float(-pan.minDegrees * rad),
                               maxSpeed: Float(pan.maxSpeedDegrees * rad), maxAccel: Float(pan.maxAccelDegrees * rad),
                               countsPerRev: UInt32((pan.unitsPerDegree * 360).rounded())),
                AxisCapability(axis: .pitch, continuous: false, min: Float(tilt.minDegrees * rad), max: Float(tilt.maxDegrees * rad),
                               maxSpeed: Float(tilt.maxSpeedDegrees * rad), maxAccel: Float(tilt.maxAccelDegrees * rad),
                               countsPerRev: UInt32((tilt.unitsPerDegree * 360).rounded())),
            ],
            batteries: [])
    }

    public var identity: StandIdentity {
        StandIdentity(model: profile.model, firmware: "unknown", hardware: profile.vendor, serial: serialName,
                      protocolVersion: transport == .ip ? "visca-over-ip" : "visca")
    }

    // MARK: StandDriver

    public mutating func start(at time: Double) -> [UInt8] {
        phase = .setup
        switch transport {
        case .serial: return transmit(Pending(kind: .addressSet, payload: VISCA.addressSet()), at: time)
        case .ip: return transmit(Pending(kind: .resetSequence, payload: [0x01]), at: time)
        case .raw, .tcp: return transmit(Pending(kind: .ifClear, payload: VISCA.ifClear(address: address)), at: time)
        }
    }

    public mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport] {
        var reports: [DriverReport] = []
        counters.decoder.bytes += bytes.count
        if transport == .ip {
            let (packets, garbage) = VISCAOverIP.unwrap(bytes)
            if garbage > 0 { reports.append(fail(.malformed)) }
            for packet in packets {
                if packet.type == VISCAOverIP.PayloadType.controlReply.rawValue {
                    counters.decoder.frames += 1
                    handleControlReply(packet.payload, at: time, into: &reports)
                } else {
                    for item in decoder.feed(packet.payload) { handle(item, at: time, into: &reports) }
                }
            }
        } else {
            for item in decoder.feed(bytes) { handle(item, at: time, into: &reports) }
        }
        return reports
    }

    public mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        guard phase == .running || phase == .firstPoll else { return [] }
        switch command {
        case .velocity(let values):
            var yaw = 0.0, pitch = 0.0
            for v in values {
                switch v.axis {
                case .yaw: yaw = Double(v.value)
                case .pitch: pitch = Double(v.value)
                case .roll: if v.value != 0 { deferred.append(.refused(command: command.type.rawValue, reason: "no roll axis")) }
                }
            }
            return queue(Pending(kind: .command(command.type.rawValue), payload: drive(yaw: yaw, pitch: pitch)), at: time)
        case .stop:
            return queue(Pending(kind: .command(command.type.rawValue), payload: drive(yaw: 0, pitch: 0)), at: time)
        case .position(let duration, let targets):
            return queue(Pending(kind: .move(command.type.rawValue), payload: move(duration: Double(duration), targets: targets)), at: time)
        case .heartbeat, .limits:
            // No heartbeat on VISCA; limits are enforced by the controller (and the camera's own range).
            return []
        case .led, .motors:
            counters.refused += 1
            deferred.append(.refused(command: command.type.rawValue, reason: "not supported by VISCA cameras"))
            return []
        default:
            return []
        }
    }

    public mutating func tick(at time: Double) -> DriverOutput {
        var out = DriverOutput(reports: deferred)
        deferred.removeAll()
        if let flight = inFlight {
            let limit = flight.acked ? completionTimeout : replyTimeout
            if time - flight.sentAt > limit {
                if flight.attempts < attemptsAllowed && !flight.acked {
                    counters.retries += 1
                    inFlight?.attempts += 1
                    inFlight?.sentAt = time
                    out.bytes += flight.wire  // same sequence number over IP: a retransmission
                    return out
                }
                inFlight = nil
                if phase != .running {
                    phase = .failed
                    out.reports.append(.fatal("no answer from the VISCA camera at address \(address) (\(transport.rawValue))"))
                    return out
                }
                if case .command(let type) = flight.pending.kind {
                    counters.commandsFailed += 1
                    lastDrive = nil
                    out.reports.append(.refused(command: type, reason: flight.acked ? "no completion" : "no answer"))
                } else if case .move(let type) = flight.pending.kind {
                    counters.commandsFailed += 1
                    out.reports.append(.refused(command: type, reason: "no answer"))
                }
            }
        }
        out.bytes += pump(at: time)
        return out
    }

    // MARK: Replies

    private mutating func fail(_ error: FrameError) -> DriverReport {
        counters.decoder.errors[error, default: 0] += 1
        return .garbage(error)
    }

    private mutating func handle(_ item: Result<[UInt8], FrameError>, at time: Double, into reports: inout [DriverReport]) {
        switch item {
        case .failure(let error): reports.append(fail(error))
        case .success(let message):
            counters.decoder.frames += 1
            // Replies from other cameras on the daisy chain are not ours.
            if message[0] != 0x88 && message[0] != 0x80 | ((address + 8) << 4) { return }
            handle(VISCA.classify(message), at: time, into: &reports)
        }
    }

    private mutating func handleControlReply(_ payload: [UInt8], at time: Double, into reports: inout [DriverReport]) {
        if payload == [0x01], inFlight?.pending.kind == .resetSequence {
            inFlight = nil
            sequence = 0
            setupNext = Pending(kind: .ifClear, payload: VISCA.ifClear(address: address))
        } else if payload.first == 0x0F {
            // 0F 01: sequence number abnormal, 0F 02: message abnormal: start the numbering again.
            counters.retries += 1
            inFlight = nil
            retry = Pending(kind: .resetSequence, payload: [0x01])
        }
    }

    private mutating func handle(_ reply: VISCA.Reply, at time: Double, into reports: inout [DriverReport]) {
        switch reply {
        case .addressSet(let next):
            guard inFlight?.pending.kind == .addressSet else { return }
            inFlight = nil
            if next <= address {
                phase = .failed
                reports.append(.fatal("VISCA address \(address) not on the chain (\(Int(next) - 1) camera(s) answered AddressSet)"))
                return
            }
            setupNext = Pending(kind: .ifClear, payload: VISCA.ifClear(address: address))
        case .ack(let socket):
            guard let flight = inFlight else { return }
            if case .move = flight.pending.kind {
                // The move runs in this socket; the link is free for polls and new commands.
                moveSocket = socket
                inFlight = nil
            } else {
                inFlight?.socket = socket
                inFlight?.sentAt = time
            }
        case .completion(let socket, let data):
            // A positional move finished in its socket (not the answer to what is in flight).
            if data.isEmpty, socket != 0, socket == moveSocket, inFlight?.socket != socket {
                moveSocket = nil
                return
            }
            guard let flight = inFlight else { return }
            switch flight.pending.kind {
            case .poll:
                let n = profile.pan.nibbles + profile.tilt.nibbles
                guard data.count == n else { return }
                inFlight = nil
                position(data, at: time, into: &reports)
            case .ifClear:
                inFlight = nil
                phase = .firstPoll
                nextPollAt = time
            case .command, .move:
                inFlight = nil
            case .addressSet, .resetSequence:
                return
            }
        case .error(let socket, let code):
            if socket != 0, socket == moveSocket, inFlight?.socket != socket { moveSocket = nil; return }
            guard let flight = inFlight else { return }
            inFlight = nil
            if code == 0x03 {
                // Buffer full: wait, then send the same message again (no storm).
                counters.retries += 1
                backoffUntil = time + 0.1
                retry = flight.pending
                return
            }
            let reason = VISCA.errorText(code)
            switch flight.pending.kind {
            case .command(let type), .move(let type):
                counters.refused += 1
                lastDrive = nil
                reports.append(.refused(command: type, reason: reason))
            case .poll:
                counters.commandsFailed += 1
            case .ifClear, .addressSet, .resetSequence:
                phase = .failed
                reports.append(.fatal("VISCA camera refused setup: \(reason)"))
            }
        case .other:
            break
        }
    }

    private mutating func position(_ data: [UInt8], at time: Double, into reports: inout [DriverReport]) {
        let rad = Double.pi / 180
        let panUnits = VISCA.signedValue(data[0..<profile.pan.nibbles])
        let tiltUnits = VISCA.signedValue(data[profile.pan.nibbles...])
        let yaw = -Double(panUnits) / profile.pan.unitsPerDegree * rad
        let pitch = Double(tiltUnits) / profile.tilt.unitsPerDegree * rad
        if let last = lastSample, time - last.time > 1e-3 {
            let dt = time - last.time
            // A light low-pass: polls are quantized to the camera's units.
            velocity.yaw = 0.5 * velocity.yaw + 0.5 * (yaw - last.yaw) / dt
            velocity.pitch = 0.5 * velocity.pitch + 0.5 * (pitch - last.pitch) / dt
        }
        lastSample = (yaw, pitch, time)
        if phase == .firstPoll {
            phase = .running
            reports.append(.ready(identity, capabilities))
        }
        let caps = capabilities
        func status(_ axis: Axis, _ value: Double) -> AxisStatus {
            var s: AxisStatus = moveSocket != nil ? .movingToTarget : []
            if let c = caps.axis(axis) {
                if value <= Double(c.min) + 0.5 * rad { s.insert(.atMin) }
                if value >= Double(c.max) - 0.5 * rad { s.insert(.atMax) }
            }
            return s
        }
        reports.append(.feedback(Feedback(timeUs: UInt64(max(0, time) * 1e6), axes: [
            AxisFeedback(axis: .yaw, position: Float(yaw), velocity: Float(velocity.yaw), status: status(.yaw, yaw)),
            AxisFeedback(axis: .pitch, position: Float(pitch), velocity: Float(velocity.pitch), status: status(.pitch, pitch)),
        ])))
    }

    // MARK: Commands

    /// Pan-tiltDrive for stand rates (rad/s): yaw left = VISCA pan left.
    public func drive(yaw: Double, pitch: Double) -> [UInt8] {
        let deg = 180 / Double.pi
        let panByte = profile.pan.nearestSpeedByte(yaw * deg), tiltByte = profile.tilt.nearestSpeedByte(pitch * deg)
        return VISCA.drive(address: address, panSpeed: max(1, panByte), tiltSpeed: max(1, tiltByte),
                           pan: panByte == 0 ? 0 : (yaw > 0 ? -1 : 1), tilt: tiltByte == 0 ? 0 : (pitch > 0 ? 1 : -1))
    }

    /// AbsolutePosition to stand angles (rad), at speeds that cover the distance in `duration`.
    public func move(duration: Double, targets: [PositionTarget]) -> [UInt8] {
        let deg = 180 / Double.pi
        var panDeg = -(lastSample?.yaw ?? 0) * deg, tiltDeg = (lastSample?.pitch ?? 0) * deg
        let fromPan = panDeg, fromTilt = tiltDeg
        for t in targets {
            if t.axis == .yaw { panDeg = -Double(t.position) * deg }
            if t.axis == .pitch { tiltDeg = Double(t.position) * deg }
        }
        panDeg = min(profile.pan.maxDegrees, max(profile.pan.minDegrees, panDeg))
        tiltDeg = min(profile.tilt.maxDegrees, max(profile.tilt.minDegrees, tiltDeg))
        let time = max(duration, 1e-3)
        return VISCA.move(address: address, relative: false,
                          panSpeed: profile.pan.speedByteCovering(abs(panDeg - fromPan) / time),
                          tiltSpeed: profile.tilt.speedByteCovering(abs(tiltDeg - fromTilt) / time),
                          pan: Int((panDeg * profile.pan.unitsPerDegree).rounded()),
                          tilt: Int((tiltDeg * profile.tilt.unitsPerDegree).rounded()),
                          panNibbles: profile.pan.nibbles, tiltNibbles: profile.tilt.nibbles)
    }

    private mutating func queue(_ p: Pending, at time: Double) -> [UInt8] {
        if case .command = p.kind {
            if p.payload == lastDrive && queued == nil { return [] }
            lastDrive = p.payload
        } else {
            lastDrive = nil
        }
        queued = p
        return inFlight == nil && retry == nil && time >= backoffUntil ? pump(at: time) : []
    }

    /// Sends the next message if the link is free: a retry, a setup step, then alternately a
    /// queued command and a due position poll.
    private mutating func pump(at time: Double) -> [UInt8] {
        guard inFlight == nil, time >= backoffUntil, phase != .failed else { return [] }
        if let r = retry { retry = nil; return transmit(r, at: time) }
        if let s = setupNext { setupNext = nil; return transmit(s, at: time) }
        guard phase == .running || phase == .firstPoll else { return [] }
        let pollDue = time >= nextPollAt
        if let q = queued, phase == .running, !(pollDue && lastSentKind != .poll) {
            queued = nil
            return transmit(q, at: time)
        }
        if pollDue {
            nextPollAt = max(nextPollAt + pollInterval, time - pollInterval)
            return transmit(Pending(kind: .poll, payload: VISCA.positionInquiry(address: address)), at: time)
        }
        return []
    }

    private mutating func transmit(_ p: Pending, at time: Double) -> [UInt8] {
        let wire: [UInt8]
        switch transport {
        case .serial, .raw, .tcp: wire = p.payload
        case .ip:
            let type: VISCAOverIP.PayloadType
            switch p.kind {
            case .resetSequence: type = .controlCommand
            case .poll: type = .inquiry
            default: type = .command
            }
            if p.kind == .resetSequence { sequence = 0 }
            wire = VISCAOverIP.wrap(p.payload, type: type.rawValue, sequence: sequence)
            sequence &+= 1
        }
        inFlight = InFlight(pending: p, wire: wire, sentAt: time, attempts: 1)
        lastSentKind = p.kind
        return wire
    }
}
