import DockProtocol

/// A VISCA PTZ camera as a stand: yaw = −pan (pan is positive to the right, stand yaw to the
/// left), pitch = tilt, in the profile's degrees (its per-axis `sign` turns the camera's units into
/// them). Velocity commands become Pan-tiltDrive with the nearest speed bytes of the profile;
/// `.position` becomes AbsolutePosition (the camera closes that loop); positions come from
/// Pan-tiltPosInq polled at `pollHz` and are reported as FEEDBACK with velocities estimated from
/// successive polls.
///
/// Zoom, where the profile has one (`VISCAZoomProfile`): the stand's zoom axis, in optical
/// magnification (1 = the wide end). A rate becomes CAM_Zoom Tele/Wide at the variable speed
/// nearest it (magnification/s turned into position units/s by the table's slope where the lens
/// is), a target CAM_Zoom Direct (at the camera's own speed: the command has none), a STOP a
/// CAM_Zoom Stop beside the Pan-tiltDrive Stop. CAM_ZoomPosInq follows a Pan-tiltPosInq on the
/// inquiry lane: after each one while the zoom moves, once a second while it is still (each costs a
/// round trip the pan/tilt's feedback waits for: 200 ms on a slow link); the zoom in FEEDBACK is the
/// latest answer (measured).
/// A velocity or position that names no zoom leaves the zoom as it is.
///
/// Presets, where the profile names `presetMemories`: a `cameraPreset` request becomes CAM_Memory
/// Set or Reset of the memory number dockd chose, in the command lane ahead of drives (a preset is
/// rare and must not wait behind a tracking's stream of drives); its Completion or error is
/// reported as `.cameraPreset`. One that meets a full buffer or an IF_Clear is sent again.
///
/// Safety first:
/// - every connect clears the interface, stops the camera (a drive left running by a crash keeps
///   going otherwise: VISCA has no heartbeat), writes the limits, then reads the position; nothing
///   asked before a reconnect is sent after it;
/// - a Stop never waits behind a drive: it goes out at once, in the camera's second socket if one
///   command is in flight; if the camera's buffer is full it sends IF_Clear, then the Stop;
/// - polls are inquiries, which use no command socket: they go on while the command buffer is full;
/// - a refused drive is reported and the next ones wait (0.25 s doubling to 2 s), never a storm;
/// - with `limitSet` in the profile, the limits in force are written into the camera
///   (Pan-tiltLimitSet), so it stops there even if dockd is gone.
///
/// One command in flight at a time otherwise (the next after the previous one's completion, or for
/// a positional move its ACK: the move keeps its socket until done); velocity commands are
/// coalesced (the newest wins) and one already in force is not resent. "Buffer full" backs off
/// (0.1 s doubling to 1 s); no answer is resent twice (after the reply timeout, longer on a link
/// measured slower, doubling each time), then reported.
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
    public private(set) var stopConfirmed = true
    /// When the camera acknowledged the last drive asked for (its ACK, or its Completion when the
    /// ACK was lost), nil until it has: what that drive does starts then, not at the asking, which a
    /// busy host or a command still in the lane can hold back (--calibrate times speeds from it).
    public private(set) var driveTakenAt: Double?
    public var closesPositionLoop: Bool { true }
    public let learnsSpeeds: Bool

    private enum Phase { case idle, setup, firstPoll, running, failed }

    private var phase = Phase.idle
    private var exchange = VISCAExchange()
    /// The connect sequence still to send, in order.
    private var setupSteps: [VISCAMessage] = []
    /// Fallbacks sent ahead of everything (IF_Clear when a Stop met a full buffer, the IP RESET).
    private var urgent: [VISCAMessage] = []
    /// A Stop to send ahead of everything.
    private var stopWanted = false
    /// Motion asked for since the last Stop was asked for: that Stop's completion confirms nothing.
    private var motionSinceStop = false
    private var limitMessages: [VISCAMessage] = []
    /// The newest drive or move not sent yet: the newest wins.
    private var queued: VISCAMessage?
    /// The Pan-tiltDrive in force on the camera, as sent (the same one is not sent again).
    private var driveInForce: [UInt8]?
    private var busy = Backoff(first: 0.1, most: 1.0)
    private var refusals = Backoff(first: 0.25, most: 2.0)
    private var nextPollAt = 0.0
    private var sequence: UInt32 = 0
    /// Messages sent on this link (orders the replies VISCA does not name).
    private var sent = 0
    private var decoder = VISCAStreamDecoder()
    private var lastSample: (yaw: Double, pitch: Double, time: Double)?
    private var velocity = (yaw: 0.0, pitch: 0.0)
    /// The limits in force, stand radians.
    private var limits: (yaw: ClosedRange<Double>, pitch: ClosedRange<Double>)
    private var deferred: [DriverReport] = []
    private var reportedBadAnswer = false
    /// The profile's speed table as the feedback shows it (kept across reconnects: same camera).
    private var speedScale = VISCASpeedScale()
    /// The zoom command not sent yet (Tele/Wide, its Stop, or a Zoom Direct): the newest wins.
    private var queuedZoom: VISCAMessage?
    /// CAM_Memory Set/Reset asked for and not sent yet, in the order asked.
    private var queuedMemories: [VISCAMessage] = []
    /// The CAM_Zoom Tele/Wide/Stop in force on the camera, as sent (the same one is not sent again).
    private var zoomDriveInForce: [UInt8]?
    private var zoomStopWanted = false
    /// A CAM_ZoomPosInq goes once the inquiry lane is free (after a Pan-tiltPosInq).
    private var zoomPollDue = false
    /// How often a still zoom is read (someone else may turn it).
    private let stillZoomPollInterval = 1.0
    /// The latest CAM_ZoomPosInq answer (position units) and when it came.
    private var zoomSample: (position: Int, time: Double)?
    /// Magnification/s, from successive zoom answers.
    private var zoomRate = 0.0
    private let baseTimeout: Double
    private let completionTimeout = 2.0
    private let attemptsAllowed = 3

    /// `learnsSpeeds`: scale the profile's speed table by what the feedback shows (off for
    /// calibration, which sends every byte as it is).
    public init(profile: VISCAProfile, address: UInt8 = 1, transport: Transport = .serial, pollHz: Double = 20,
                name: String? = nil, learnsSpeeds: Bool = true) {
        self.profile = profile
        self.learnsSpeeds = learnsSpeeds
        self.address = min(7, max(1, address))
        self.transport = transport
        self.pollInterval = 1 / max(1, min(200, pollHz))
        self.serialName = name ?? "visca-\(self.address)"
        self.baseTimeout = profile.replyTimeout ?? (transport == .serial ? 0.3 : 0.2)
        self.limits = Self.fullRange(profile)
    }

    private static func fullRange(_ profile: VISCAProfile) -> (yaw: ClosedRange<Double>, pitch: ClosedRange<Double>) {
        let rad = Double.pi / 180
        return (-profile.pan.maxDegrees * rad ... -profile.pan.minDegrees * rad,
                profile.tilt.minDegrees * rad ... profile.tilt.maxDegrees * rad)
    }

    public var capabilities: Capabilities {
        let rad = Double.pi / 180
        let pan = profile.pan, tilt = profile.tilt
        let full = Self.fullRange(profile)
        return Capabilities(
            feedbackHz: UInt16((1 / pollInterval).rounded()), imuHz: 0, features: [], buttons: [], customButtons: 0,
            axes: [
                AxisCapability(axis: .yaw, continuous: false, min: Float(full.yaw.lowerBound), max: Float(full.yaw.upperBound),
                               maxSpeed: Float(pan.maxSpeedDegrees * rad), maxAccel: Float(pan.maxAccelDegrees * rad),
                               countsPerRev: UInt32((pan.unitsPerDegree * 360).rounded())),
                AxisCapability(axis: .pitch, continuous: false, min: Float(full.pitch.lowerBound), max: Float(full.pitch.upperBound),
                               maxSpeed: Float(tilt.maxSpeedDegrees * rad), maxAccel: Float(tilt.maxAccelDegrees * rad),
                               countsPerRev: UInt32((tilt.unitsPerDegree * 360).rounded())),
            ] + (profile.zoom.map { zoom in
                [AxisCapability(axis: .zoom, continuous: false, min: 1, max: Float(zoom.maxMagnification),
                                maxSpeed: Float(zoom.maxRate), maxAccel: Float(zoom.maxAccel),
                                countsPerRev: UInt32(zoom.telePosition - zoom.widePosition))]
            } ?? []),
            batteries: [])
    }

    public var identity: StandIdentity {
        StandIdentity(model: profile.model, firmware: "unknown", hardware: profile.vendor, serial: serialName,
                      protocolVersion: transport == .ip ? "visca-over-ip" : "visca")
    }

    // MARK: StandDriver

    /// A new link: everything of the previous one is forgotten (a drive asked for before a
    /// reconnect is never sent after it), then AddressSet / RESET; IF_Clear, Stop and the first
    /// poll together; the limits.
    public mutating func start(at time: Double) -> [UInt8] {
        phase = .setup
        exchange = VISCAExchange()
        urgent = []
        stopWanted = false
        motionSinceStop = false
        stopConfirmed = false
        queued = nil
        driveInForce = nil
        busy = Backoff(first: 0.1, most: 1.0)
        refusals = Backoff(first: 0.25, most: 2.0)
        sequence = 0
        decoder = VISCAStreamDecoder()
        lastSample = nil
        velocity = (0, 0)
        deferred = []
        reportedBadAnswer = false
        speedScale.reset()
        queuedZoom = nil
        queuedMemories = []
        zoomDriveInForce = nil
        zoomStopWanted = false
        zoomPollDue = false
        zoomSample = nil
        zoomRate = 0
        limits = Self.fullRange(profile)
        setupSteps = []
        switch transport {
        case .serial: setupSteps.append(VISCAMessage(kind: .addressSet, payload: VISCA.addressSet(), command: 0))
        case .ip: setupSteps.append(VISCAMessage(kind: .resetSequence, payload: [0x01], command: 0))
        case .raw, .tcp: break
        }
        setupSteps.append(VISCAMessage(kind: .ifClear(urgent: false), payload: VISCA.ifClear(address: address), command: 0))
        setupSteps.append(stopMessage(setup: true))
        limitMessages = []
        setupSteps += limitWrites()
        return pump(at: time)
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
                    handleControlReply(packet.payload, at: time)
                } else {
                    for item in decoder.feed(packet.payload) { handle(item, sequence: packet.sequence, at: time, into: &reports) }
                }
            }
        } else {
            for item in decoder.feed(bytes) { handle(item, sequence: nil, at: time, into: &reports) }
        }
        return reports
    }

    public mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        guard phase != .idle && phase != .failed else { return [] }
        switch command {
        case .velocity(let values):
            var yaw = 0.0, pitch = 0.0, panTilt = false
            for v in values {
                switch v.axis {
                case .yaw: yaw = Double(v.value); panTilt = true
                case .pitch: pitch = Double(v.value); panTilt = true
                case .roll: if v.value != 0 { deferred.append(.refused(command: command.type.rawValue, reason: "no roll axis")) }
                case .zoom: askZoom(rate: Double(v.value))
                }
            }
            if !panTilt && values.contains(where: { $0.axis == .zoom }) { return phase == .running ? pump(at: time) : [] }
            let payload = drive(yaw: yaw, pitch: pitch)
            if payload == VISCA.drive(address: address, panSpeed: 1, tiltSpeed: 1, pan: 0, tilt: 0) {
                return requestStop(explicit: false, at: time)
            }
            guard phase == .running else { return [] }
            noteMotion()
            if payload == driveInForce && queued == nil { return [] }
            queued = VISCAMessage(kind: .drive, payload: payload, command: command.type.rawValue)
            driveTakenAt = nil
            return pump(at: time)
        case .stop:
            return requestStop(explicit: true, at: time)
        case .position(let duration, let targets):
            guard phase == .running else { return [] }
            if let zoom = targets.first(where: { $0.axis == .zoom }) { askZoom(magnification: Double(zoom.position)) }
            if targets.contains(where: { $0.axis != .zoom }) {
                noteMotion()
                queued = VISCAMessage(kind: .move, payload: move(duration: Double(duration), targets: targets), command: command.type.rawValue)
            }
            return pump(at: time)
        case .limits(let axes):
            for a in axes {
                let range = Double(min(a.min, a.max))...Double(max(a.min, a.max))
                switch a.axis {
                case .yaw: limits.yaw = range
                case .pitch: limits.pitch = range
                case .roll, .zoom: break
                }
            }
            // Written into the camera where it takes them; enforced by the controller either way.
            limitMessages = limitWrites()
            return phase == .running || phase == .firstPoll ? pump(at: time) : []
        case .heartbeat:
            return []
        case .led, .motors:
            counters.refused += 1
            deferred.append(.refused(command: command.type.rawValue, reason: "not supported by VISCA cameras"))
            return []
        default:
            return []
        }
    }

    public var cameraPresets: CameraPresetStorage? { profile.presetMemories.map { .memories($0) } }

    public mutating func cameraPreset(_ request: CameraPresetRequest, at time: Double) -> [UInt8] {
        let function: VISCA.MemoryFunction = if case .store = request { .set } else { .reset }
        let slot = request.slot
        guard phase == .running else {
            deferred.append(.cameraPreset(request, .failure(CameraPresetRefusal("the camera is not connected"))))
            return []
        }
        guard case .memory(let number)? = slot, let range = profile.presetMemories, range.contains(number) else {
            let range = profile.presetMemories.map { " \($0.lowerBound)…\($0.upperBound)" } ?? "s"
            deferred.append(.cameraPreset(request, .failure(CameraPresetRefusal("the profile \(profile.name) stores presets in memory\(range) only, not \(slot.map { "\($0)" } ?? "a new slot")"))))
            return []
        }
        queuedMemories.append(VISCAMessage(kind: .memory(request), payload: VISCA.memory(address: address, function, number: number), command: 0))
        return pump(at: time)
    }

    public mutating func tick(at time: Double) -> DriverOutput {
        var out = DriverOutput(reports: deferred)
        deferred.removeAll()
        guard phase != .idle && phase != .failed else { return out }
        out.bytes += expire(at: time, into: &out.reports)
        guard phase != .failed, !(oneMessagePerWrite && !out.bytes.isEmpty) else { return out }
        out.bytes += pump(at: time)
        return out
    }

    // MARK: Asking for motion

    private mutating func noteMotion() {
        motionSinceStop = true
        stopConfirmed = false
    }

    /// A Stop goes ahead of everything. `explicit`: asked for as `.stop` (always sent, unless one is
    /// on its way with nothing after it; a CAM_Zoom Stop with it); a zero velocity is not resent to
    /// a camera known stopped.
    private mutating func requestStop(explicit: Bool, at time: Double) -> [UInt8] {
        // A drive asked for before the Stop must never go after it.
        queued = nil
        if explicit && profile.zoom != nil && phase == .running {
            queuedZoom = nil
            zoomStopWanted = true
        }
        motionSinceStop = false
        if phase == .setup { return [] }  // the connect Stop is on its way
        if let last = exchange.commands.last, last.message.isStop { return [] }
        if stopWanted { return [] }
        if !explicit && stopConfirmed && exchange.move == nil { return [] }
        stopWanted = true
        return pump(at: time)
    }

    private func stopMessage(setup: Bool) -> VISCAMessage {
        VISCAMessage(kind: .stop(setup: setup), payload: VISCA.drive(address: address, panSpeed: 1, tiltSpeed: 1, pan: 0, tilt: 0),
                     command: MessageType.stop.rawValue)
    }

    /// Whether the zoom is, or may be, moving: a command for it waits or runs, or its last two
    /// answers differed.
    private var zoomMoving: Bool {
        exchange.zoomMove != nil || queuedZoom != nil || zoomRate != 0
            || exchange.commands.contains { $0.message.kind == .zoomDrive || $0.message.kind == .zoomMove }
            || zoomDriveInForce.map { $0.count == 6 && $0[4] != 0 } ?? false
    }

    /// A zoom rate (magnification/s, positive toward tele) as the CAM_Zoom Tele/Wide variable
    /// speed nearest it where the lens is, or its Stop; queued, the newest wins.
    private mutating func askZoom(rate: Double) {
        guard let zoom = profile.zoom, phase == .running else { return }
        let slope = zoom.slope(position: zoomSample?.position ?? zoom.widePosition)
        let speed = zoom.nearestSpeed(rate / slope)
        // Every pan/tilt velocity names the zoom, at 0 while no shot zooms: a still lens needs no
        // Stop (queued behind the drives, one would keep the zoom "moving" and read after every poll).
        if speed == nil && !zoomMoving { return }
        let payload = VISCA.zoomDrive(address: address, direction: speed == nil ? 0 : (rate > 0 ? 1 : -1), speed: speed ?? 0)
        if payload == zoomDriveInForce && queuedZoom == nil { return }
        queuedZoom = VISCAMessage(kind: .zoomDrive, payload: payload, command: MessageType.velocity.rawValue)
    }

    /// A zoom target (magnification, clamped to the lens's range) as CAM_Zoom Direct; queued.
    private mutating func askZoom(magnification: Double) {
        guard let zoom = profile.zoom else { return }
        queuedZoom = VISCAMessage(kind: .zoomMove, payload: VISCA.zoomDirect(address: address, position: zoom.position(magnification: magnification)),
                                  command: MessageType.position.rawValue)
    }

    /// Stand rad/s → Pan-tiltDrive: yaw is left-positive, VISCA pan direction −1 = left.
    private func drive(yaw: Double, pitch: Double) -> [UInt8] {
        let deg = 180 / Double.pi
        let panByte = profile.pan.nearestSpeedByte(yaw * deg / speedScale.scale[0])
        let tiltByte = profile.tilt.nearestSpeedByte(pitch * deg / speedScale.scale[1])
        return VISCA.drive(address: address, panSpeed: panByte, tiltSpeed: tiltByte,
                           pan: panByte == 0 ? 0 : (yaw > 0 ? -1 : 1), tilt: tiltByte == 0 ? 0 : (pitch > 0 ? 1 : -1))
    }

    /// AbsolutePosition to the targets, at the slowest speed bytes that arrive within `duration`.
    private func move(duration: Double, targets: [PositionTarget]) -> [UInt8] {
        let deg = 180 / Double.pi
        let fromPan = -(lastSample?.yaw ?? 0) * deg, fromTilt = (lastSample?.pitch ?? 0) * deg
        var panDeg = fromPan, tiltDeg = fromTilt
        for t in targets {
            switch t.axis {
            case .yaw: panDeg = -Double(t.position) * deg
            case .pitch: tiltDeg = Double(t.position) * deg
            case .roll, .zoom: break
            }
        }
        let time = max(0.05, duration)
        let panByte = profile.pan.speedByteCovering(abs(panDeg - fromPan) / time / speedScale.scale[0])
        let tiltByte = profile.tilt.speedByteCovering(abs(tiltDeg - fromTilt) / time / speedScale.scale[1])
        let units = { (axis: VISCAProfile.AxisProfile, degrees: Double) in
            Int((Double(axis.sign) * degrees * axis.unitsPerDegree).rounded())
        }
        let single = profile.absoluteSpeed == .single
        return VISCA.move(address: address, relative: false,
                          panSpeed: single ? min(profile.pan.maxSpeedByte, max(panByte, tiltByte)) : panByte,
                          tiltSpeed: single ? nil : tiltByte,
                          pan: units(profile.pan, panDeg), tilt: units(profile.tilt, tiltDeg),
                          panNibbles: profile.pan.nibbles, tiltNibbles: profile.tilt.nibbles)
    }

    /// Pan-tiltLimitSet for both corners from the limits in force (LimitClear where they are the
    /// profile's whole range), or nothing when the profile says the camera does not take them.
    private func limitWrites() -> [VISCAMessage] {
        guard profile.limitSet == true else { return [] }
        let deg = 180 / Double.pi, full = Self.fullRange(profile)
        let pan = profile.pan, tilt = profile.tilt
        func write(_ corner: VISCA.LimitCorner, panDegrees: Double, tiltDegrees: Double, clear: Bool) -> VISCAMessage {
            let payload = clear
                ? VISCA.limitClear(address: address, corner: corner, panNibbles: pan.nibbles, tiltNibbles: tilt.nibbles)
                : VISCA.limitSet(address: address, corner: corner, pan: pan.units(degrees: panDegrees),
                                 tilt: tilt.units(degrees: tiltDegrees), panNibbles: pan.nibbles, tiltNibbles: tilt.nibbles)
            return VISCAMessage(kind: .limit, payload: payload, command: MessageType.limits.rawValue)
        }
        // Up-right: pan right = −(yaw min), tilt up = pitch max; down-left: pan left = −(yaw max), tilt down.
        let upRightFull = limits.yaw.lowerBound <= full.yaw.lowerBound && limits.pitch.upperBound >= full.pitch.upperBound
        let downLeftFull = limits.yaw.upperBound >= full.yaw.upperBound && limits.pitch.lowerBound <= full.pitch.lowerBound
        return [
            write(.upRight, panDegrees: -limits.yaw.lowerBound * deg, tiltDegrees: limits.pitch.upperBound * deg, clear: upRightFull),
            write(.downLeft, panDegrees: -limits.yaw.upperBound * deg, tiltDegrees: limits.pitch.lowerBound * deg, clear: downLeftFull),
        ]
    }

    // MARK: Sending

    /// Datagram links carry one message per datagram, and each call's bytes are one write: there,
    /// one message per call (the rest goes at the next tick, 20 ms later).
    private var oneMessagePerWrite: Bool { transport == .ip || transport == .raw }

    /// Sends what is due: the urgent fallbacks and a wanted Stop (even beside a command in flight),
    /// then one ordinary command if the command lane is free, and a poll on the inquiry lane.
    private mutating func pump(at time: Double) -> [UInt8] {
        guard phase != .idle && phase != .failed else { return [] }
        var out: [UInt8] = []
        var full: Bool { oneMessagePerWrite && !out.isEmpty }
        if exchange.commands.count < 2 && !exchange.commands.contains(where: \.message.isUrgent) {
            if !urgent.isEmpty {
                out += transmit(urgent.removeFirst(), at: time)
            } else if stopWanted {
                stopWanted = false
                out += transmit(stopMessage(setup: false), at: time)
            } else if zoomStopWanted {
                zoomStopWanted = false
                out += transmit(VISCAMessage(kind: .zoomStop, payload: VISCA.zoomDrive(address: address, direction: 0, speed: 0),
                                             command: MessageType.stop.rawValue), at: time)
            }
        }
        if !full && !busy.active(at: time) && (exchange.commands.isEmpty || phase == .setup && setupSteps.first?.isStop == true) {
            if phase == .setup, let first = setupSteps.first {
                out += transmit(setupSteps.removeFirst(), at: time)
                if first.isStop || (!oneMessagePerWrite && first.kind == .ifClear(urgent: false)) {
                    // IF_Clear, the Stop and the first poll without waiting between them (the
                    // camera takes them in that order; on a datagram link one per tick), so a link
                    // answering late attaches in one round trip, not three. The limits follow,
                    // before any drive.
                    if let stop = setupSteps.first, stop.isStop { out += transmit(setupSteps.removeFirst(), at: time) }
                    limitMessages = setupSteps + limitMessages
                    setupSteps = []
                    phase = .firstPoll
                    nextPollAt = time
                }
            } else if phase != .setup && !limitMessages.isEmpty {
                out += transmit(limitMessages.removeFirst(), at: time)
            } else if phase == .running && !queuedMemories.isEmpty {
                out += transmit(queuedMemories.removeFirst(), at: time)
            } else if phase == .running, let next = queued, !refusals.active(at: time) {
                queued = nil
                out += transmit(next, at: time)
            } else if phase == .running, let next = queuedZoom, !refusals.active(at: time) {
                queuedZoom = nil
                out += transmit(next, at: time)
            }
        }
        if !full && (phase == .firstPoll || phase == .running) && exchange.inquiry == nil && zoomPollDue {
            zoomPollDue = false
            out += transmit(VISCAMessage(kind: .zoomPoll, payload: VISCA.zoomInquiry(address: address), command: 0), at: time)
        } else if !full && (phase == .firstPoll || phase == .running) && exchange.inquiry == nil && time >= nextPollAt {
            nextPollAt = max(nextPollAt + pollInterval, time - pollInterval)
            out += transmit(VISCAMessage(kind: .poll, payload: VISCA.positionInquiry(address: address), command: 0), at: time)
            zoomPollDue = profile.zoom != nil && (zoomMoving || time - (zoomSample?.time ?? -.infinity) >= stillZoomPollInterval)
        }
        return out
    }

    private mutating func transmit(_ message: VISCAMessage, at time: Double) -> [UInt8] {
        let wire: [UInt8], number: UInt32?
        switch transport {
        case .serial, .raw, .tcp:
            wire = message.payload
            number = nil
        case .ip:
            let type: VISCAOverIP.PayloadType
            switch message.kind {
            case .resetSequence: type = .controlCommand; sequence = 0
            case .poll, .zoomPoll: type = .inquiry
            default: type = .command
            }
            wire = VISCAOverIP.wrap(message.payload, type: type.rawValue, sequence: sequence)
            number = sequence
            sequence &+= 1
        }
        switch message.kind {
        case .drive, .stop: driveInForce = message.payload
        case .move: driveInForce = nil
        case .zoomDrive, .zoomStop: zoomDriveInForce = message.payload
        case .zoomMove: zoomDriveInForce = nil
        default: break
        }
        noteCommand(message, at: time)
        sent += 1
        let flight = VISCAFlight(message: message, wire: wire, sequence: number, firstSentAt: time, sentAt: time, order: sent)
        if message.isInquiry { exchange.inquiry = flight } else { exchange.commands.append(flight) }
        return wire
    }

    /// Puts a message that did not get through back where it waits (a drive only if no newer one is).
    private mutating func requeue(_ message: VISCAMessage) {
        switch message.kind {
        case .addressSet, .resetSequence: setupSteps.insert(message, at: 0)
        case .ifClear(let isUrgent):
            if phase == .setup && !isUrgent { setupSteps.insert(message, at: 0) }
            else { urgent.insert(VISCAMessage(kind: .ifClear(urgent: true), payload: message.payload, command: 0), at: 0) }
        case .stop: stopWanted = true
        case .drive, .move: if queued == nil && !stopWanted && motionSinceStop { queued = message }
        case .limit: limitMessages.insert(message, at: 0)
        case .zoomDrive, .zoomMove: if queuedZoom == nil && !zoomStopWanted { queuedZoom = message }
        case .zoomStop: zoomStopWanted = true
        case .memory: queuedMemories.insert(message, at: 0)
        case .poll, .zoomPoll: break
        }
    }

    // MARK: Timeouts

    private func timeout(_ flight: VISCAFlight) -> Double {
        if flight.acked { return completionTimeout }
        let base = counters.roundTrip.resendTimeout(floor: baseTimeout, ceiling: completionTimeout)
        return base * Double(1 << (flight.attempts - 1))
    }

    /// Resends what went unanswered (the same bytes, the same IP sequence number), twice; then gives up.
    private mutating func expire(at time: Double, into reports: inout [DriverReport]) -> [UInt8] {
        var out: [UInt8] = []
        var full: Bool { oneMessagePerWrite && !out.isEmpty }
        if var q = exchange.inquiry, time - q.sentAt > timeout(q) {
            if q.attempts < attemptsAllowed {
                counters.retries += 1
                q.attempts += 1
                q.sentAt = time
                exchange.inquiry = q
                out += q.wire
            } else {
                exchange.inquiry = nil
                counters.commandsFailed += 1
                if phase == .firstPoll {
                    return fatal(q.message.kind == .zoomPoll ? "no answer to CAM_ZoomPosInq (the profile \(profile.name) says the camera zooms)"
                                                             : "no answer to Pan-tiltPosInq", into: &reports)
                }
            }
        }
        var i = 0
        while i < exchange.commands.count {
            var flight = exchange.commands[i]
            guard time - flight.sentAt > timeout(flight) else { i += 1; continue }
            // A drive superseded by a newer one or a Stop is dropped, never resent stale.
            let kind = flight.message.kind
            let superseded = (kind == .drive || kind == .move) && (queued != nil || stopWanted)
                || (kind == .zoomDrive || kind == .zoomMove) && (queuedZoom != nil || zoomStopWanted)
            if !flight.acked && flight.attempts < attemptsAllowed && !superseded {
                if full { i += 1; continue }  // resent at the next tick
                counters.retries += 1
                flight.attempts += 1
                flight.sentAt = time
                exchange.commands[i] = flight
                out += flight.wire
                i += 1
                continue
            }
            exchange.commands.remove(at: i)
            if superseded { continue }
            counters.commandsFailed += 1
            if flight.message.isSetup {
                return fatal("no answer from the VISCA camera at address \(address) (\(transport.rawValue))", into: &reports)
            }
            if kind == .drive { driveInForce = nil }
            if kind == .zoomDrive || kind == .zoomStop { zoomDriveInForce = nil }
            if let request = flight.message.memoryRequest {
                reports.append(.cameraPreset(request, .failure(CameraPresetRefusal("CAM_Memory: \(flight.acked ? "no completion" : "no answer")"))))
            }
            if flight.message.command != 0 {
                reports.append(.refused(command: flight.message.command, reason: flight.acked ? "no completion" : "no answer"))
            }
        }
        return out
    }

    private mutating func fatal(_ reason: String, into reports: inout [DriverReport]) -> [UInt8] {
        phase = .failed
        reports.append(.fatal(reason))
        return []
    }

    // MARK: Replies

    private mutating func fail(_ error: FrameError) -> DriverReport {
        counters.decoder.errors[error, default: 0] += 1
        return .garbage(error)
    }

    private mutating func handle(_ item: Result<[UInt8], FrameError>, sequence: UInt32?, at time: Double,
                                 into reports: inout [DriverReport]) {
        switch item {
        case .failure(let error): reports.append(fail(error))
        case .success(let message):
            counters.decoder.frames += 1
            // Replies from other cameras on the daisy chain are not ours.
            if message[0] != 0x88 && message[0] != 0x80 | ((address + 8) << 4) { return }
            handle(VISCA.classify(message), sequence: sequence, at: time, into: &reports)
        }
    }

    private mutating func handleControlReply(_ payload: [UInt8], at time: Double) {
        if payload == [0x01], let i = exchange.commands.firstIndex(where: { $0.message.kind == .resetSequence }) {
            let flight = exchange.commands.remove(at: i)
            timeRoundTrip(flight, at: time)
            sequence = 0  // the camera expects 0 next
        } else if payload.first == 0x0F {
            // 0F 01: sequence number abnormal, 0F 02: message abnormal: number again from 0, then
            // resend what was in flight (a stale drive excepted).
            counters.retries += 1
            for flight in exchange.commands.reversed() { requeue(flight.message) }
            exchange.commands = []
            exchange.inquiry = nil
            urgent.insert(VISCAMessage(kind: .resetSequence, payload: [0x01], command: 0), at: 0)
        }
    }

    private mutating func timeRoundTrip(_ flight: VISCAFlight, at time: Double) {
        // Karn's rule would take no sample from a resent message; VISCA replies name no copy, and on
        // a link slower than the first timeout every message is resent once, so the estimate would
        // never learn the link. The first copy is timed: after a loss it over-estimates (a longer
        // timeout, the safe side).
        guard !flight.answered else { return }
        counters.roundTrip.sample(time - flight.firstSentAt)
    }

    private mutating func handle(_ reply: VISCA.Reply, sequence: UInt32?, at time: Double, into reports: inout [DriverReport]) {
        if case .addressSet(let next) = reply {
            guard let i = exchange.commands.firstIndex(where: { $0.message.kind == .addressSet }) else { return }
            let flight = exchange.commands.remove(at: i)
            timeRoundTrip(flight, at: time)
            if next <= address {
                _ = fatal("VISCA address \(address) not on the chain (\(Int(next) - 1) camera(s) answered AddressSet)", into: &reports)
            }
            return
        }
        switch exchange.owner(of: reply, sequence: sequence) {
        case .inquiry?:
            inquiryAnswered(reply, at: time, into: &reports)
        case .command(let i)?:
            commandAnswered(i, reply, at: time, into: &reports)
        case .move?:
            // The positional move ended in its socket (completed, cancelled or failed).
            if case .error(_, let code) = reply, code != 0x04 {
                counters.refused += 1
                reports.append(.refused(command: MessageType.position.rawValue, reason: VISCA.errorText(code)))
            }
            exchange.move = nil
        case .zoomMove?:
            if case .error(_, let code) = reply, code != 0x04 {
                counters.refused += 1
                reports.append(.refused(command: MessageType.position.rawValue, reason: "CAM_Zoom Direct: " + VISCA.errorText(code)))
            }
            exchange.zoomMove = nil
        case nil:
            break
        }
    }

    private mutating func inquiryAnswered(_ reply: VISCA.Reply, at time: Double, into reports: inout [DriverReport]) {
        guard let flight = exchange.inquiry else { return }
        // A serial reply names no inquiry: a late answer to the other one, given up on after its
        // resends (a slow link), would be taken for this one's. Told by its length, it is dropped
        // and this one goes on waiting.
        if case .completion(_, let data) = reply, answersTheOtherInquiry(than: flight.message.kind, nibbles: data.count) { return }
        exchange.inquiry = nil
        timeRoundTrip(flight, at: time)
        if flight.message.kind == .zoomPoll { return zoomAnswered(reply, at: time, into: &reports) }
        switch reply {
        case .completion(_, let data):
            let expected = profile.pan.nibbles + profile.tilt.nibbles
            guard data.count == expected else {
                counters.commandsFailed += 1
                if !reportedBadAnswer {
                    reportedBadAnswer = true
                    reports.append(.fault(Fault(timeUs: UInt64(max(0, time) * 1e6), severity: .error, code: .log,
                                                text: "the camera's Pan-tiltPosInq answer holds \(data.count) position nibbles, the profile \(profile.name) expects \(expected) (pan \(profile.pan.nibbles) + tilt \(profile.tilt.nibbles))")))
                }
                return
            }
            position(data, at: time, into: &reports)
        case .error(_, let code):
            counters.commandsFailed += 1
            if phase == .firstPoll {
                _ = fatal("the camera refused Pan-tiltPosInq: \(VISCA.errorText(code))", into: &reports)
            }
        default:
            break
        }
    }

    private func answersTheOtherInquiry(than kind: VISCAMessage.Kind, nibbles: Int) -> Bool {
        let panTilt = profile.pan.nibbles + profile.tilt.nibbles
        guard profile.zoom != nil, panTilt != 4 else { return false }
        return kind == .zoomPoll ? nibbles == panTilt : nibbles == 4
    }

    private mutating func zoomAnswered(_ reply: VISCA.Reply, at time: Double, into reports: inout [DriverReport]) {
        guard let zoom = profile.zoom else { return }
        guard case .completion(_, let data) = reply, data.count == 4 else {
            counters.commandsFailed += 1
            if phase == .firstPoll {
                // Never ready without the zoom's position: the controller moves only known axes.
                _ = fatal("the camera does not answer CAM_ZoomPosInq as the profile \(profile.name)'s zoom expects (\(reply)): remove its zoom", into: &reports)
                return
            }
            if !reportedBadAnswer, case .completion(_, let data) = reply {
                reportedBadAnswer = true
                reports.append(.fault(Fault(timeUs: UInt64(max(0, time) * 1e6), severity: .error, code: .log,
                                            text: "the camera's CAM_ZoomPosInq answer holds \(data.count) nibbles, not 4")))
            }
            return
        }
        let position = VISCA.signedValue(([0] + data)[...])
        if let last = zoomSample, time - last.time > 1e-3 {
            let change = zoom.magnification(position: position) - zoom.magnification(position: last.position)
            zoomRate = change == 0 ? 0 : 0.5 * zoomRate + 0.5 * change / (time - last.time)
        }
        zoomSample = (position, time)
    }

    private mutating func commandAnswered(_ index: Int, _ reply: VISCA.Reply, at time: Double, into reports: inout [DriverReport]) {
        timeRoundTrip(exchange.commands[index], at: time)
        exchange.commands[index].answered = true
        let flight = exchange.commands[index]
        // The camera took the last drive asked for (an earlier one's answer while a newer waits does not count).
        switch reply {
        case .ack, .completion:
            if flight.message.kind == .drive, flight.message.payload == driveInForce, queued == nil, driveTakenAt == nil {
                driveTakenAt = time
            }
        default:
            break
        }
        switch reply {
        case .ack(let socket):
            if flight.message.kind == .move {
                // The move runs in this socket; the command lane is free for the next command.
                exchange.move = (socket, flight.sequence)
                exchange.commands.remove(at: index)
            } else if flight.message.kind == .zoomMove {
                exchange.zoomMove = (socket, flight.sequence)
                exchange.commands.remove(at: index)
            } else {
                exchange.commands[index].socket = socket
                exchange.commands[index].sentAt = time
            }
        case .completion:
            exchange.commands.remove(at: index)
            completed(flight)
            if let request = flight.message.memoryRequest, let slot = request.slot { reports.append(.cameraPreset(request, .success(slot))) }
        case .error(_, let code):
            exchange.commands.remove(at: index)
            failed(flight, code: code, at: time, into: &reports)
        case .addressSet, .other:
            break
        }
    }

    private mutating func completed(_ flight: VISCAFlight) {
        switch flight.message.kind {
        case .ifClear:
            // The camera's command buffers are empty: what was in them is gone (a drive must not be
            // resent; limits and memories are written again).
            for other in exchange.commands where other.message.kind == .limit || other.message.memoryRequest != nil { requeue(other.message) }
            exchange.commands.removeAll { !$0.message.isUrgent && !$0.message.isSetup }
            exchange.move = nil
            exchange.zoomMove = nil
        case .zoomDrive, .zoomStop:
            // Either ends a Zoom Direct in progress.
            exchange.zoomMove = nil
            refusals.reset()
            busy.reset()
        case .stop:
            exchange.move = nil
            if !motionSinceStop && queued == nil { stopConfirmed = true }
        case .drive, .move:
            refusals.reset()
            busy.reset()
        case .limit:
            busy.reset()
        case .addressSet, .resetSequence, .poll, .zoomPoll, .zoomMove, .memory:
            break
        }
    }

    private mutating func failed(_ flight: VISCAFlight, code: UInt8, at time: Double, into reports: inout [DriverReport]) {
        let reason = VISCA.errorText(code)
        if code == 0x03 {
            // Buffer full (both sockets busy, e.g. a second controller): a Stop clears the interface
            // and goes again at once; anything else waits, longer each time.
            counters.retries += 1
            if flight.message.kind == .drive { driveInForce = nil }
            if flight.message.kind == .zoomDrive || flight.message.kind == .zoomStop { zoomDriveInForce = nil }
            if flight.message.isStop && !urgent.contains(where: { $0.kind == .ifClear(urgent: true) }) {
                urgent.append(VISCAMessage(kind: .ifClear(urgent: true), payload: VISCA.ifClear(address: address), command: 0))
            } else {
                busy.hit(at: time)
            }
            requeue(flight.message)
            return
        }
        if code == 0x04 && flight.message.isStop {
            // A Stop cancelled (an IF_Clear it overtook on a datagram link): send it again.
            requeue(flight.message)
            return
        }
        if code == 0x04 && flight.message.memoryRequest != nil {
            // A CAM_Memory cancelled by an IF_Clear it overtook: send it again.
            requeue(flight.message)
            return
        }
        // Cancelled (by our Stop or IF_Clear): bookkeeping only.
        if (code == 0x04 || code == 0x05) && flight.message.memoryRequest == nil { return }
        switch flight.message.kind {
        case .addressSet, .resetSequence:
            _ = fatal("VISCA camera refused setup: \(reason)", into: &reports)
        case .ifClear:
            // Cameras that take no IF_Clear on this link (Sony: none over VISCA-over-IP) go on.
            break
        case .stop, .zoomStop:
            counters.refused += 1
            if flight.message.kind == .zoomStop { zoomDriveInForce = nil }
            reports.append(.refused(command: flight.message.command, reason: reason))
        case .zoomDrive, .zoomMove:
            counters.refused += 1
            zoomDriveInForce = nil
            refusals.hit(at: time)
            reports.append(.refused(command: flight.message.command, reason: "CAM_Zoom: " + reason))
        case .drive, .move:
            counters.refused += 1
            driveInForce = nil
            refusals.hit(at: time)
            reports.append(.refused(command: flight.message.command, reason: reason))
        case .limit:
            counters.refused += 1
            reports.append(.refused(command: flight.message.command, reason: "Pan-tiltLimitSet: \(reason)"))
        case .memory(let request):
            counters.refused += 1
            reports.append(.cameraPreset(request, .failure(CameraPresetRefusal("CAM_Memory: \(reason)"))))
        case .poll, .zoomPoll:
            break
        }
    }

    /// What the speed scale learns from: the table speeds of the bytes sent (AbsolutePosition only
    /// where it has a byte per axis), from when they were sent.
    private mutating func noteCommand(_ message: VISCAMessage, at time: Double) {
        let p = message.payload
        func table(_ axis: VISCAProfile.AxisProfile, _ byte: UInt8) -> Double { axis.speeds[Int(min(max(byte, 1), axis.maxSpeedByte)) - 1] }
        switch message.kind {
        case .drive where p.count == 9, .stop where p.count == 9:
            speedScale.commanded(.init(speed: [p[6] == 3 ? 0 : table(profile.pan, p[4]), p[7] == 3 ? 0 : table(profile.tilt, p[5])],
                                       since: time, target: nil))
        case .move where profile.absoluteSpeed != .single:
            let pn = profile.pan.nibbles, tn = profile.tilt.nibbles
            guard p.count == 6 + pn + tn + 1 else { return speedScale.commanded(nil) }
            let target = [profile.pan.degrees(units: VISCA.signedValue(p[6..<6 + pn])),
                          profile.tilt.degrees(units: VISCA.signedValue(p[(6 + pn)..<(6 + pn + tn)]))]
            speedScale.commanded(.init(speed: [table(profile.pan, p[4]), table(profile.tilt, p[5])], since: time, target: target))
        case .move, .ifClear:
            speedScale.commanded(nil)
        default:
            break
        }
    }

    private mutating func position(_ data: [UInt8], at time: Double, into reports: inout [DriverReport]) {
        let rad = Double.pi / 180
        let panUnits = VISCA.signedValue(data[0..<profile.pan.nibbles])
        let tiltUnits = VISCA.signedValue(data[profile.pan.nibbles...])
        let yaw = -profile.pan.degrees(units: panUnits) * rad
        let pitch = profile.tilt.degrees(units: tiltUnits) * rad
        if let last = lastSample, time - last.time > 1e-3 {
            let dt = time - last.time
            // Profile degrees (as the commands' targets).
            if learnsSpeeds { speedScale.observe([-yaw / rad, pitch / rad], at: time,
                                                  unitsPerDegree: [profile.pan.unitsPerDegree, profile.tilt.unitsPerDegree]) }
            if speedScale.learned[0] { counters.speedScale[.yaw] = speedScale.scale[0] }
            if speedScale.learned[1] { counters.speedScale[.pitch] = speedScale.scale[1] }
            // A light low-pass: polls are quantized to the camera's units.
            velocity.yaw = 0.5 * velocity.yaw + 0.5 * (yaw - last.yaw) / dt
            velocity.pitch = 0.5 * velocity.pitch + 0.5 * (pitch - last.pitch) / dt
        }
        lastSample = (yaw, pitch, time)
        // Ready once every axis is known: with a zoom, after its first CAM_ZoomPosInq answer too
        // (it follows this poll; the next poll reports ready).
        if phase == .firstPoll && profile.zoom != nil && zoomSample == nil { return }
        if phase == .firstPoll {
            phase = .running
            reports.append(.ready(identity, capabilities))
        }
        let moving = exchange.move != nil || exchange.commands.contains { $0.message.kind == .move } || queued?.kind == .move
        func status(_ value: Double, _ range: ClosedRange<Double>) -> AxisStatus {
            var s: AxisStatus = moving ? .movingToTarget : []
            if value <= range.lowerBound + 0.5 * rad { s.insert(.atMin) }
            if value >= range.upperBound - 0.5 * rad { s.insert(.atMax) }
            return s
        }
        var axes = [
            AxisFeedback(axis: .yaw, position: Float(yaw), velocity: Float(velocity.yaw), status: status(yaw, limits.yaw)),
            AxisFeedback(axis: .pitch, position: Float(pitch), velocity: Float(velocity.pitch), status: status(pitch, limits.pitch)),
        ]
        if let zoom = profile.zoom, let sample = zoomSample {
            var s: AxisStatus = exchange.zoomMove != nil || queuedZoom?.kind == .zoomMove ? .movingToTarget : []
            if sample.position <= zoom.widePosition { s.insert(.atMin) }
            if sample.position >= zoom.telePosition { s.insert(.atMax) }
            axes.append(AxisFeedback(axis: .zoom, position: Float(zoom.magnification(position: sample.position)),
                                     velocity: Float(zoomRate), status: s))
        }
        reports.append(.feedback(Feedback(timeUs: UInt64(max(0, time) * 1e6), axes: axes)))
    }
}
