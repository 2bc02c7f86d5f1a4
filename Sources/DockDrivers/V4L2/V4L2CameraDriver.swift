import DockProtocol

/// A UVC PTZ webcam (OBSBOT, Insta360 Link, Logitech PTZ Pro…) through its V4L2 camera-class
/// controls, as a stand: pan and tilt are its yaw (= −pan) and pitch, in radians. Each axis is
/// steered the way its controls allow (`V4L2Steering`): to an absolute target the camera moves to
/// by itself (`closesPositionLoop`; a rate is a target a little ahead, renewed at the command
/// interval), by relative steps from where it is, or by a speed, with dockd closing the position
/// loop. Where it points is read back from the absolute controls when the camera updates them
/// (volatile) and estimated from what was sent and `max_speed` otherwise.
///
/// Pure, like every driver: it speaks `V4L2Wire` lines, and DockIO's `VideoDeviceLink` runs the
/// ioctls on a thread of its own. One request is in flight at a time; sets are coalesced to the
/// newest value and sent at most once per `commandInterval` (a camera sent faster can wedge), pan
/// and tilt in one request.
///
/// Zoom, where the camera has ZOOM_ABSOLUTE or ZOOM_CONTINUOUS and its profile (or `max_zoom`)
/// gives the magnification: the stand's zoom axis (`V4L2ZoomDrive`), set in the same request as
/// the pan/tilt (one budget of sets), read back with them, estimated where the camera does not
/// update it while it moves.
public struct V4L2CameraDriver: StandDriver {
    public struct Settings: Sendable, Equatable {
        /// The camera's top rate, rad/s (UVC does not report one): at full speed, and to estimate
        /// where it is where it does not say. nil: the profile's, else 1.
        public var maxSpeed: Double?
        public var pollHz = 10.0
        /// The least time between two sets, s. nil: the profile's, else 0.1.
        public var commandInterval: Double?
        /// nil: each axis as `V4L2Steering.automatic` picks.
        public var steering: V4L2Steering?
        public var name: String?
        /// The profiles to match the camera's card against.
        public var profiles: [V4L2Profile] = []
        /// A profile named in the configuration: it applies whatever the card.
        public var profile: V4L2Profile?
        /// The magnification at ZOOM_ABSOLUTE's maximum. nil: the profile's, else the zoom is not steered.
        public var maxZoom: Double?
        public init() {}
    }

    /// What this camera is driven with: the settings, else its profile's figures, else defaults.
    struct Tuning: Sendable {
        var maxSpeed = 1.0
        var commandInterval = 0.1
        var panSign = 1.0
        var maxZoom: Double?
        var zoomSeconds = 0.0
        var profile: V4L2Profile?

        init(_ settings: Settings, card: String) {
            profile = settings.profile ?? V4L2Profile.matching(card, in: settings.profiles)
            maxSpeed = settings.maxSpeed ?? profile.map { $0.maxSpeedDegrees * .pi / 180 } ?? 1.0
            commandInterval = settings.commandInterval ?? profile?.commandInterval ?? 0.1
            panSign = Double(profile?.panSign ?? 1)
            maxZoom = settings.maxZoom ?? profile?.maxZoom
            zoomSeconds = profile?.zoomSeconds ?? 0
        }
        init() {}
    }

    public let name = "v4l2"
    public let settings: Settings
    public private(set) var counters = DriverCounters()

    private enum Phase { case querying, polling, ready }
    private var phase = Phase.querying
    private var tuning = Tuning()
    /// The camera's own tracking, to switch off once the connect's hold is done.
    private var trackingOff: V4L2Profile.ExtensionControl?
    /// The tracking control as read before it is switched off, where the profile says how to put
    /// it back from that (nil: not read yet; empty: the read failed).
    private var trackingRead: [UInt8]?
    private var controls: [UInt32: V4L2Wire.ControlInfo] = [:]
    private var drives: [V4L2AxisDrive] = []
    /// The zoom, where it is steered (its values live under `.zoom` in `pending`, `heading`, `pose`).
    private var zoom: V4L2ZoomDrive?
    private var lineBuffer: [UInt8] = []
    /// The request awaiting its answer; for a set, what each axis heads for once accepted, and
    /// the command it carries (a STOP's hold, a rate or a target: what a refusal refuses).
    private var inFlight: (request: V4L2Wire.Request, sentAt: Double, set: [(axis: Axis, heading: Double)], carries: MessageType?)?
    /// The newest value of each axis not yet sent: a target pose (arc-seconds) for absolute and
    /// relative steering, a speed (the control's units) for speed steering.
    private var pending: [Axis: Double] = [:]
    /// Whether the newest rate or target asked was a rate or a target (a STOP's hold: `stopQueued`).
    private var pendingMotion = MessageType.position
    private var lastSet = -Double.infinity
    /// A set went while a read was due: the read goes before the next set. One request is in
    /// flight at a time, so on a link whose round trip reaches the command interval (an ioctl
    /// thread scheduled late on a loaded machine) a set was always due first and the pose was
    /// never read again: the engine aimed by a pose seconds old, and tracking hunted or froze.
    private var readPassedOver = false
    /// What the camera was last told and since when: the target pose it moves to (absolute,
    /// relative), or the speed it holds.
    private var heading: [Axis: (value: Double, time: Double)] = [:]
    /// Where each axis is (arc-seconds) and when that was known.
    private var pose: [Axis: (value: Double, time: Double)] = [:]
    /// The last rate measured from the pose, arc-seconds/s.
    private var rate: [Axis: Double] = [:]
    /// Where rates steered as targets ahead have taken each axis.
    private var ratePaths: [Axis: RateTargetPath] = [:]
    private var nextPoll = 0.0
    private var identity: StandIdentity?
    /// The pending values are a STOP's hold where the camera is: they go before a due read, and
    /// even where they change nothing. A rate or a target asked before they went takes their place.
    private var stopQueued = false
    /// A STOP asked and not yet accepted by the camera. Apart from `stopQueued`: a rate that takes
    /// a queued stop's place sends no stop, so the stop stays unconfirmed until a later one is.
    private var stopAwaited = false
    /// The last command was a STOP (a rate or a target since clears it). Another STOP then changes
    /// nothing while the first is queued, in flight or accepted: the camera heads for its hold. (At
    /// SIGTERM dockd stops the stand, then the client whose move that interrupted goes away and its
    /// lease's release stops it again: a second hold went an interval later, another command to a
    /// camera that may take most of a second for each.)
    private var stopLast = false

    /// The longest a request may wait for its answer before the link is given up, s.
    static let answerTimeout = 3.0
    private static let arcSecondsPerRadian = 180 * 3600 / Double.pi

    public init(settings: Settings) { self.settings = settings }

    /// A camera steered by speed on any axis leaves the position loop to dockd's controller.
    public var closesPositionLoop: Bool { !drives.contains { $0.steering == .speed } }
    public var stopConfirmed: Bool { !stopAwaited }

    public mutating func start(at time: Double) -> [UInt8] {
        phase = .querying
        controls = [:]
        drives = []
        zoom = nil
        lineBuffer = []
        pending = [:]
        heading = [:]
        pose = [:]
        rate = [:]
        ratePaths = [:]
        stopQueued = false
        stopAwaited = false
        stopLast = false
        pendingMotion = .position
        readPassedOver = false
        inFlight = nil
        trackingOff = nil
        trackingRead = nil
        return send(.query, at: time)
    }

    // MARK: - Answers

    public mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport] {
        var reports: [DriverReport] = []
        for byte in bytes {
            guard byte != UInt8(ascii: "\n") else {
                let line = String(decoding: lineBuffer, as: UTF8.self)
                lineBuffer = []
                guard let reply = V4L2Wire.reply(Substring(line)) else {
                    counters.decoder.errors[.malformed, default: 0] += 1
                    reports.append(.garbage(.malformed))
                    continue
                }
                counters.decoder.frames += 1
                reports += handle(reply, at: time)
                continue
            }
            lineBuffer.append(byte)
            if lineBuffer.count > 1024 { lineBuffer = []; reports.append(.garbage(.oversize)) }
        }
        // The next request goes at the next tick: `nextDeadline` says when.
        return reports
    }

    private mutating func handle(_ reply: V4L2Wire.Reply, at time: Double) -> [DriverReport] {
        switch reply {
        case .control(let info):
            controls[info.id] = info
            return []
        case .card(let card):
            inFlight = nil
            return ready(card: card)
        case .unit:
            inFlight = nil
            return []
        case .unitRead(_, let bytes):
            inFlight = nil
            trackingRead = bytes
            return []
        case .values(let values):
            let flight = inFlight
            inFlight = nil
            if let set = flight?.set, !set.isEmpty {
                // Accepted: from now on each axis heads for its new value.
                for (axis, value) in set {
                    if let now = estimate(axis, at: time) { pose[axis] = (now, time) }
                    heading[axis] = (value, time)
                }
                if flight?.carries == .stop, stopQueued, pending.isEmpty { stopQueued = false; stopAwaited = false }
                return []
            }
            // The link's round trip is a read's: a set may take the camera most of a second to act.
            if let sent = flight?.sentAt { counters.roundTrip.sample(time - sent) }
            return feedback(values, at: time)
        case .failure(let errno, let text):
            let flight = inFlight
            inFlight = nil
            if errno == 19 {  // ENODEV: the camera was unplugged
                return [.fatal("the camera is gone: \(text)")]
            }
            if phase == .querying { return [.fatal("the camera's controls cannot be listed: \(text)")] }
            switch flight?.request {
            case .extensionUnit?:
                counters.commandsFailed += 1
                return [.rejected("the camera's own tracking was not switched off (\(Self.errnoName(errno)): \(text)): it may steer against dockd")]
            case .extensionUnitRead?:
                counters.commandsFailed += 1
                return [.rejected("the camera's own tracking could not be read (\(Self.errnoName(errno)): \(text)): it is switched off and not put back after")]
            case .set?:
                counters.refused += 1
                // A STOP asked while another set was in flight is still pending: its hold goes
                // next, and only its own refusal is the STOP's (which stays unconfirmed).
                let carried = flight?.carries ?? .position
                if carried == .stop, pending.isEmpty { stopQueued = false }
                return [.refused(command: carried.rawValue, reason: "\(Self.errnoName(errno)): \(text)")]
            default:
                counters.commandsFailed += 1
                return [.rejected("reading the pose failed: \(Self.errnoName(errno)): \(text)")]
            }
        }
    }

    /// The controls are known: how each axis is steered, or why the camera cannot be.
    private mutating func ready(card: String) -> [DriverReport] {
        tuning = Tuning(settings, card: card)
        trackingOff = tuning.profile?.aiTrackingOff
        drives = [Axis.yaw, .pitch].compactMap { axis in
            func usable(_ steering: V4L2Steering) -> V4L2Wire.ControlInfo? {
                guard let c = controls[steering.control(axis).rawValue], !c.isDisabled, !c.isReadOnly,
                      c.maximum > (steering == .absolute ? c.minimum : 0) else { return nil }
                return c
            }
            let chosen = settings.steering.map { usable($0) != nil ? $0 : nil } ?? V4L2Steering.automatic(usable)
            guard let steering = chosen, let control = usable(steering) else { return nil }
            let absolute = controls[V4L2Steering.absolute.control(axis).rawValue].flatMap { $0.isDisabled ? nil : $0 }
            return V4L2AxisDrive(axis: axis, steering: steering, control: control, absolute: absolute, panSign: tuning.panSign)
        }
        guard !drives.isEmpty else {
            let wanted = settings.steering.map { "PAN/TILT_\($0.rawValue.uppercased()) control (steering = \($0.rawValue))" }
                ?? "pan or tilt control dockd can steer (PAN/TILT_ABSOLUTE, _SPEED or _RELATIVE)"
            return [.fatal("\(card) has no \(wanted)")]
        }
        zoom = tuning.maxZoom.flatMap { maxZoom in
            func usable(_ control: V4L2Wire.Control) -> V4L2Wire.ControlInfo? {
                controls[control.rawValue].flatMap { !$0.isDisabled && !$0.isReadOnly && $0.maximum > max(0, $0.minimum) ? $0 : nil }
            }
            let absolute = usable(.zoomAbsolute)
            guard let control = absolute ?? usable(.zoomContinuous) else { return nil }
            return V4L2ZoomDrive(control: control, absolute: absolute, maxZoom: maxZoom, fullRangeSeconds: tuning.zoomSeconds)
        }
        var axes = drives.map { drive -> AxisCapability in
            let low = drive.sign * drive.range.lowerBound / Self.arcSecondsPerRadian
            let high = drive.sign * drive.range.upperBound / Self.arcSecondsPerRadian
            let step = drive.steering == .speed ? (drive.absolute?.step ?? 3600) : drive.control.step
            let counts = UInt32(min(Double(UInt32.max), 360 * 3600 / Double(max(1, step))))
            return AxisCapability(axis: drive.axis, continuous: false, min: Float(min(low, high)), max: Float(max(low, high)),
                                  maxSpeed: Float(tuning.maxSpeed), maxAccel: Float(4 * tuning.maxSpeed), countsPerRev: counts)
        }
        if let zoom {
            let counts = UInt32(min(Double(UInt32.max), (zoom.range.upperBound - zoom.range.lowerBound) / Double(max(1, zoom.control.step))))
            axes.append(AxisCapability(axis: .zoom, continuous: false, min: 1, max: Float(zoom.maxZoom), maxSpeed: Float(zoom.topRate),
                                       maxAccel: Float(4 * zoom.topRate), countsPerRev: counts))
        }
        let how = (drives.map { "\($0.axis == .yaw ? "pan" : "tilt") by \($0.steering.rawValue)" }
            + (zoom.map { ["zoom by " + ($0.steersByPosition ? "absolute" : "continuous")] } ?? [])).joined(separator: ", ")
        let profile = tuning.profile.map { "; profile \($0.name)" } ?? ""
        identity = StandIdentity(model: card, firmware: "", hardware: (measured ? "pose read back; " : "pose estimated; ") + how + profile,
                                 serial: settings.name ?? "v4l2-" + card.filter { $0.isLetter || $0.isNumber }, protocolVersion: "v4l2")
        phase = .polling
        let capabilities = Capabilities(feedbackHz: UInt16(max(1, settings.pollHz.rounded())), imuHz: 0, features: [], buttons: [],
                                        customButtons: 0, axes: axes, batteries: [])
        return [.ready(identity!, capabilities)]
    }

    /// Whether the camera reports where it is on every axis (its absolute controls are volatile),
    /// or only echoes targets or nothing (then where it is between commands is estimated).
    private var measured: Bool { drives.allSatisfy(\.measured) }

    private mutating func feedback(_ values: [(UInt32, Int32)], at time: Double) -> [DriverReport] {
        var axes: [AxisFeedback] = []
        for drive in drives {
            let read = drive.absolute.flatMap { a in values.first { $0.0 == a.id }.map { Double($0.1) } }
            let now: Double = if let read, heading[drive.axis] == nil {
                // Before anything was sent: where it is, or the echo of a target it reached long ago.
                read
            } else if let read, let absolute = drive.absolute, drive.measured {
                // The camera says where it is to its step (1° on most): the estimate places it
                // within that step, finer than the read, and the read bounds the estimate's drift.
                min(read + Double(absolute.step) / 2, max(read - Double(absolute.step) / 2, estimate(drive.axis, at: time) ?? read))
            } else {
                estimate(drive.axis, at: time) ?? 0
            }
            let velocity = velocity(drive, to: now, at: time)
            pose[drive.axis] = (now, time)
            axes.append(AxisFeedback(axis: drive.axis, position: Float(drive.sign * now / Self.arcSecondsPerRadian),
                                     velocity: Float(drive.sign * velocity / Self.arcSecondsPerRadian)))
        }
        if let zoom {
            let read = zoom.absolute.flatMap { a in values.first { $0.0 == a.id }.map { Double($0.1) } }
            // A zoom that echoes its target reading other than dockd's last was set by someone
            // else (v4l2-ctl, the vendor's app): that is where it heads now.
            if let read, !zoom.measured, let told = heading[.zoom], read != told.value { heading[.zoom] = (read, time) }
            let now: Double = if let read, heading[.zoom] == nil || zoom.measured { read } else { estimate(.zoom, at: time) ?? read ?? zoom.range.lowerBound }
            let unitsPerSecond: Double
            if let last = pose[.zoom], time - last.time >= 0.5 / settings.pollHz {
                unitsPerSecond = (now - last.value) / (time - last.time)
                rate[.zoom] = unitsPerSecond
            } else {
                unitsPerSecond = rate[.zoom] ?? 0
            }
            pose[.zoom] = (now, time)
            let span = zoom.range.upperBound - zoom.range.lowerBound
            axes.append(AxisFeedback(axis: .zoom, position: Float(zoom.magnification(now)),
                                     velocity: Float(unitsPerSecond / span * (zoom.maxZoom - 1))))
        }
        if phase == .polling {
            phase = .ready
            // Every connect leaves the camera still: hold it where it is.
            for drive in drives { pending[drive.axis] = drive.steering == .speed ? 0 : pose[drive.axis]?.value ?? 0 }
            if let zoom, !zoom.steersByPosition { pending[.zoom] = 0 }
            stopQueued = true
            stopAwaited = true
        }
        return [.feedback(Feedback(timeUs: UInt64(max(0, time) * 1e6), axes: axes))]
    }

    /// How fast an axis moves: the speed it was told to hold, if steered by speed; else the change
    /// since the last pose, over no less than half a poll period (two reads a few ms apart, each on
    /// the camera's 1° step, would make a leap of a step look like a rate of rad/s).
    private mutating func velocity(_ drive: V4L2AxisDrive, to now: Double, at time: Double) -> Double {
        if drive.steering == .speed {
            let told = heading[drive.axis]?.value ?? 0
            return tuning.maxSpeed * Self.arcSecondsPerRadian * told / Double(max(1, drive.control.maximum))
        }
        guard let last = pose[drive.axis], time - last.time >= 0.5 / settings.pollHz else { return rate[drive.axis] ?? 0 }
        let value = (now - last.value) / (time - last.time)
        rate[drive.axis] = value
        return value
    }

    /// Where an axis is by what it was told: moving at `max_speed` from where it was toward its
    /// target, or on at the speed it holds, within its range.
    private func estimate(_ axis: Axis, at time: Double) -> Double? {
        guard let last = pose[axis] else { return nil }
        if axis == .zoom { return zoom?.estimate(from: last, told: heading[.zoom], at: time) }
        guard let drive = drives.first(where: { $0.axis == axis }), let told = heading[axis] else { return last.value }
        let topRate = tuning.maxSpeed * Self.arcSecondsPerRadian
        let elapsed = max(0, time - max(last.time, told.time))
        if drive.steering == .speed {
            let rate = topRate * told.value / Double(max(1, drive.control.maximum))
            return min(drive.range.upperBound, max(drive.range.lowerBound, last.value + rate * elapsed))
        }
        let step = topRate * elapsed, distance = told.value - last.value
        return abs(distance) <= step ? told.value : last.value + (distance > 0 ? step : -step)
    }

    // MARK: - Commands

    public mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        guard phase == .ready else { return [] }
        switch command {
        case .position(_, let targets):
            stopQueued = false
            stopLast = false
            pendingMotion = .position
            ratePaths = [:]
            for target in targets {
                if target.axis == .zoom, let zoom, zoom.steersByPosition {
                    pending[.zoom] = Double(zoom.units(magnification: Double(target.position)))
                }
                guard let drive = drive(target.axis), drive.steering != .speed else { continue }
                pending[drive.axis] = drive.sign * Double(target.position) * Self.arcSecondsPerRadian
            }
        case .velocity(let rates):
            // A rate takes over from a queued stop, as a target does: the stop's hold is no longer
            // what is pending (left queued, it let every set go before a due read, as stops do).
            stopQueued = false
            stopLast = false
            pendingMotion = .velocity
            for rate in rates {
                if rate.axis == .zoom, let zoom { askZoom(zoom, rate: Double(rate.value), at: time) }
                guard let drive = drive(rate.axis) else { continue }
                let cameraRate = drive.sign * Double(rate.value)
                if drive.steering == .speed {
                    let top = Double(drive.control.maximum)
                    pending[drive.axis] = min(top, max(-top, (cameraRate / tuning.maxSpeed * top).rounded()))
                } else if let now = estimate(drive.axis, at: time) {
                    pending[drive.axis] = target(drive.axis, rate: cameraRate * Self.arcSecondsPerRadian, from: now, at: time)
                }
            }
        case .stop:
            if stopLast && (stopQueued || !stopAwaited) { break }
            stopLast = true
            ratePaths = [:]
            for drive in drives {
                pending[drive.axis] = drive.steering == .speed ? 0 : estimate(drive.axis, at: time) ?? 0
            }
            if let zoom, heading[.zoom] != nil {
                pending[.zoom] = zoom.steersByPosition ? (estimate(.zoom, at: time) ?? zoom.range.lowerBound) : 0
            }
            stopQueued = true
            stopAwaited = true
        default:
            break  // LIMITS: the camera keeps its own range, dockd's are the controller's; no LED, no MOTORS
        }
        return pump(at: time)
    }

    private func drive(_ axis: Axis) -> V4L2AxisDrive? { drives.first { $0.axis == axis } }

    /// A rate (arc-seconds/s) as a target ahead on the rate's path (`RateTargetPath`): one command
    /// interval ahead, where the path will be at the next renewal, so that the camera, which goes
    /// to each target at its own speed, leaps no further than the rate takes it in an interval.
    /// (Three intervals ahead, vptz at 60°/s leapt 0.09 rad at the start of a 0.3 rad/s move,
    /// between two reads of its pose: the aim at a frame's capture was that far off, the still
    /// subject seemed to move, the tracker fed its phantom rate forward and the camera hunted or
    /// ran off, more so the later the reads.) The path is kept across a pause of up to two
    /// intervals and a poll.
    private mutating func target(_ axis: Axis, rate: Double, from now: Double, at time: Double) -> Double {
        let step = Double(max(1, drive(axis)?.control.step ?? 1))
        return ratePaths[axis, default: RateTargetPath()].target(rate: rate, from: now, lead: tuning.commandInterval, leastReach: step / 2 + 1,
                                                                  pause: 2 * tuning.commandInterval + 1 / settings.pollHz, at: time)
    }

    /// A zoom rate (magnification/s): a speed for ZOOM_CONTINUOUS; for ZOOM_ABSOLUTE a target
    /// ahead of where the zoom is, as for the pan/tilt (one command interval for a zoom that gets
    /// there at once, which would otherwise run ahead of the rate).
    private mutating func askZoom(_ zoom: V4L2ZoomDrive, rate: Double, at time: Double) {
        guard zoom.steersByPosition else { pending[.zoom] = Double(zoom.speed(rate)); return }
        let now = estimate(.zoom, at: time) ?? zoom.range.lowerBound
        let horizon = zoom.fullRangeSeconds > 0 ? 2 * tuning.commandInterval + 1 / settings.pollHz : tuning.commandInterval
        let span = zoom.range.upperBound - zoom.range.lowerBound
        pending[.zoom] = now + rate / (zoom.maxZoom - 1) * span * horizon
    }

    public mutating func tick(at time: Double) -> DriverOutput {
        if let flight = inFlight, time - flight.sentAt > Self.answerTimeout {
            return DriverOutput(reports: [.fatal("the camera did not answer in \(Self.answerTimeout) s")])
        }
        // A camera with nothing to read: the pose is the estimate, reported at the poll rate.
        if phase != .querying, inFlight == nil, pollIDs.isEmpty, time >= nextPoll {
            nextPoll = time + 1 / settings.pollHz
            let reports = feedback([], at: time)
            return DriverOutput(bytes: pump(at: time), reports: reports)
        }
        return DriverOutput(bytes: pump(at: time))
    }

    public var nextDeadline: Double? {
        // A request in flight: nothing is due but its answer's timeout, judged with `>` (the
        // answer itself comes as bytes).
        if let flight = inFlight { return flight.sentAt + Self.answerTimeout + 1e-6 }
        guard phase != .querying else { return nil }
        return pending.isEmpty ? nextPoll : min(nextPoll, lastSet + tuning.commandInterval)
    }

    /// The next request when none is in flight: a due set first (but not twice over a due read), else a due poll.
    private mutating func pump(at time: Double) -> [UInt8] {
        guard inFlight == nil, phase != .querying else { return [] }
        let readDue = time >= nextPoll && !pollIDs.isEmpty
        // A stop never waits for a read.
        if !pending.isEmpty && time >= lastSet + tuning.commandInterval && (stopQueued || !(readDue && readPassedOver)) {
            let set = dueSet(at: time)
            if !set.values.isEmpty {
                lastSet = time
                readPassedOver = readDue
                return send(.set(set.values, spacing: tuning.commandInterval), at: time, set: set.headings, carries: stopQueued ? .stop : pendingMotion)
            }
        }
        // The camera's own tracking off, once it holds still: one try (a camera that refuses it
        // says so). Where the profile says how, it is read first, and the adapter puts it back as
        // it was when the link closes (dockd exits, lets go of the camera, or reconnects).
        if let xu = trackingOff, phase == .ready, pending.isEmpty, !stopQueued, let guid = xu.guidBytes, let data = xu.offBytes {
            if xu.restore != nil && trackingRead == nil {
                trackingRead = []
                return send(.extensionUnitRead(guid: guid, unit: xu.unit, selector: xu.selector), at: time)
            }
            trackingOff = nil
            let restore = trackingRead.flatMap { xu.restoreBytes(read: $0) }
            return send(.extensionUnit(guid: guid, unit: xu.unit, selector: xu.selector, data: data, restore: restore), at: time)
        }
        guard readDue else { return [] }
        nextPoll = time + 1 / settings.pollHz
        readPassedOver = false
        return send(.get(pollIDs), at: time)
    }

    /// The pending values as one set (taken off `pending`): a target on the camera's step, a step
    /// from where it is, or a speed; none that would change nothing, but for a stop. An absolute or
    /// speed axis not pending goes with the other at what it was last told, so that the camera gets
    /// both halves of its pan/tilt control from dockd.
    private mutating func dueSet(at time: Double) -> (values: [(UInt32, Int32)], headings: [(axis: Axis, heading: Double)]) {
        var values: [(UInt32, Int32)] = [], headings: [(axis: Axis, heading: Double)] = []
        for drive in drives {
            guard let value = pending.removeValue(forKey: drive.axis) else { continue }
            switch drive.steering {
            case .absolute:
                let target = drive.quantized(value)
                values.append((drive.id, target)); headings.append((drive.axis, Double(target)))
            case .relative:
                // A step from where the camera is now; a zero step ends a step in progress.
                let now = estimate(drive.axis, at: time) ?? 0
                let step = drive.quantized(value - now)
                if step != 0 || stopQueued { values.append((drive.id, step)); headings.append((drive.axis, now + Double(step))) }
            case .speed:
                let speed = Int32(min(Double(drive.control.maximum), max(Double(drive.control.minimum), value)))
                if Double(speed) != heading[drive.axis]?.value || stopQueued {
                    values.append((drive.id, speed)); headings.append((drive.axis, Double(speed)))
                }
            }
        }
        for drive in drives where drive.steering != .relative && !headings.contains(where: { $0.axis == drive.axis }) {
            guard let told = heading[drive.axis], let other = headings.first, drives.first(where: { $0.axis == other.axis })?.steering == drive.steering else { continue }
            values.append((drive.id, Int32(told.value))); headings.append((drive.axis, told.value))
        }
        // The zoom after the pan/tilt: with them when both are due, one request.
        if let zoom, let value = pending.removeValue(forKey: .zoom) {
            let set: Int32 = zoom.steersByPosition ? zoom.units(magnification: zoom.magnification(value)) : Int32(value)
            if Double(set) != heading[.zoom]?.value || stopQueued {
                values.append((zoom.control.id, set)); headings.append((.zoom, Double(set)))
            }
        }
        return (values, headings)
    }

    /// What a poll reads: the absolute pan/tilt where the camera has them; else another control
    /// it lets read (its speeds, its zoom), so that a camera steered blind still answers at the
    /// poll rate and an unplug or a wedged camera shows as one (the engine's link watchdog).
    private var pollIDs: [UInt32] {
        let absolute = drives.compactMap(\.absolute?.id) + (zoom?.absolute.map { [$0.id] } ?? [])
        guard absolute.isEmpty else { return absolute }
        let others: [V4L2Wire.Control] = [.panSpeed, .tiltSpeed, .zoomAbsolute]
        return others.compactMap { controls[$0.rawValue] }.filter { !$0.isWriteOnly && !$0.isDisabled }.map(\.id)
    }

    private mutating func send(_ request: V4L2Wire.Request, at time: Double, set: [(axis: Axis, heading: Double)] = [],
                               carries: MessageType? = nil) -> [UInt8] {
        inFlight = (request, time, set, carries)
        return V4L2Wire.encode(request)
    }

    private static func errnoName(_ code: Int32) -> String {
        switch code {
        case 1: "EPERM"
        case 5: "EIO"
        case 13: "EACCES"
        case 16: "EBUSY"
        case 22: "EINVAL"
        case 34: "ERANGE"
        case 110: "ETIMEDOUT"
        default: "errno \(code)"
        }
    }
}
