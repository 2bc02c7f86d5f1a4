import DockProtocol

/// A UVC PTZ webcam (OBSBOT, Insta360 Link, Logitech PTZ Pro…) through its V4L2 camera-class
/// controls, as a stand: PAN_ABSOLUTE and TILT_ABSOLUTE (arc-seconds; pan positive right, tilt
/// positive up) are its axes (yaw = −pan, pitch = tilt, in radians). The camera moves itself to an
/// absolute target, so an orientation is one target per axis (`closesPositionLoop`) and a rate is
/// steered as a target a little ahead of where it is, renewed at the command interval. Where it
/// points is read back from the absolute controls when the camera updates them (volatile) and
/// estimated from the targets and `max_speed` otherwise.
///
/// Pure, like every driver: it speaks `V4L2Wire` lines, and DockIO's `VideoDeviceLink` runs the
/// ioctls on a thread of its own. One request is in flight at a time; sets are coalesced to the
/// newest target and sent at most once per `commandInterval` (a camera sent faster can wedge).
public struct V4L2CameraDriver: StandDriver {
    public struct Settings: Sendable, Equatable {
        /// The camera's top rate, rad/s (UVC does not report one).
        public var maxSpeed = 1.0
        public var pollHz = 10.0
        /// The least time between two sets of one control, s.
        public var commandInterval = 0.1
        public var name: String?
        public init() {}
    }

    public let name = "v4l2"
    public let settings: Settings
    public private(set) var counters = DriverCounters()

    private enum Phase { case querying, polling, ready }
    private var phase = Phase.querying
    private var controls: [UInt32: V4L2Wire.ControlInfo] = [:]
    private var lineBuffer: [UInt8] = []
    private var inFlight: (request: V4L2Wire.Request, sentAt: Double)?
    /// The newest target of each axis not yet sent (arc-seconds, the camera's units).
    private var pendingTarget: [V4L2Wire.Control: Int32] = [:]
    private var lastSet: [V4L2Wire.Control: Double] = [:]
    /// The last target sent and when, per axis: the estimate's goal.
    private var sentTarget: [V4L2Wire.Control: (value: Double, time: Double)] = [:]
    /// Where each axis is (arc-seconds) and when that was known.
    private var pose: [V4L2Wire.Control: (value: Double, time: Double)] = [:]
    private var nextPoll = 0.0
    private var identity: StandIdentity?
    /// A STOP (a hold where the camera is) still to be confirmed.
    private var stopPending = false

    /// The longest a request may wait for its answer before the link is given up, s.
    static let answerTimeout = 3.0
    private static let arcSecondsPerRadian = 180 * 3600 / Double.pi
    private static let axes: [(control: V4L2Wire.Control, axis: Axis)] = [(.panAbsolute, .yaw), (.tiltAbsolute, .pitch)]

    public init(settings: Settings) { self.settings = settings }

    public var closesPositionLoop: Bool { true }
    public var stopConfirmed: Bool { !stopPending }

    public mutating func start(at time: Double) -> [UInt8] {
        phase = .querying
        controls = [:]
        lineBuffer = []
        pendingTarget = [:]
        pose = [:]
        sentTarget = [:]
        stopPending = false
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
        case .values(let values):
            let request = inFlight?.request
            // The link's round trip is a read's: a set may take the camera most of a second to act.
            if case .get? = request, let sent = inFlight?.sentAt { counters.roundTrip.sample(time - sent) }
            inFlight = nil
            if case .set = request {
                if stopPending && pendingTarget.isEmpty { stopPending = false }
                for (id, value) in values {
                    if let control = V4L2Wire.Control(rawValue: id) { sentTarget[control] = (Double(value), time) }
                }
                return []
            }
            return feedback(values, at: time)
        case .failure(let errno, let text):
            let request = inFlight?.request
            inFlight = nil
            if errno == 19 {  // ENODEV: the camera was unplugged
                return [.fatal("the camera is gone: \(text)")]
            }
            if phase == .querying { return [.fatal("the camera's controls cannot be listed: \(text)")] }
            switch request {
            case .set?:
                counters.refused += 1
                let type: MessageType = stopPending ? .stop : .position
                stopPending = false
                return [.refused(command: type.rawValue, reason: "\(Self.errnoName(errno)): \(text)")]
            default:
                counters.commandsFailed += 1
                return [.rejected("reading the pose failed: \(Self.errnoName(errno)): \(text)")]
            }
        }
    }

    /// The controls are known: the axes it has, or why it cannot be steered.
    private mutating func ready(card: String) -> [DriverReport] {
        let axes = Self.axes.compactMap { entry -> AxisCapability? in
            guard let c = controls[entry.control.rawValue], !c.isDisabled, !c.isReadOnly, c.maximum > c.minimum else { return nil }
            let low = Double(c.minimum) / Self.arcSecondsPerRadian, high = Double(c.maximum) / Self.arcSecondsPerRadian
            // Yaw grows to the left, pan to the right.
            let (minimum, maximum) = entry.axis == .yaw ? (-high, -low) : (low, high)
            let counts = UInt32(min(Double(UInt32.max), 360 * 3600 / Double(max(1, c.step))))
            return AxisCapability(axis: entry.axis, continuous: false, min: Float(minimum), max: Float(maximum),
                                  maxSpeed: Float(settings.maxSpeed), maxAccel: Float(4 * settings.maxSpeed), countsPerRev: counts)
        }
        guard !axes.isEmpty else {
            return [.fatal("\(card) has no PAN_ABSOLUTE or TILT_ABSOLUTE control: dockd steers only cameras with absolute pan/tilt so far")]
        }
        identity = StandIdentity(model: card, firmware: "", hardware: measured ? "pose read back" : "pose estimated",
                                 serial: settings.name ?? "v4l2-" + card.filter { $0.isLetter || $0.isNumber }, protocolVersion: "v4l2")
        phase = .polling
        let capabilities = Capabilities(feedbackHz: UInt16(max(1, settings.pollHz.rounded())), imuHz: 0, features: [], buttons: [],
                                        customButtons: 0, axes: axes, batteries: [])
        return [.ready(identity!, capabilities)]
    }

    /// Whether the camera reports where it is (its absolute controls are volatile) or only echoes
    /// the last target (then where it is between targets is estimated).
    private var measured: Bool { Self.axes.allSatisfy { controls[$0.control.rawValue].map(\.isVolatile) ?? true } }

    private mutating func feedback(_ values: [(UInt32, Int32)], at time: Double) -> [DriverReport] {
        var reports: [DriverReport] = []
        var axes: [AxisFeedback] = []
        for entry in Self.axes {
            guard let (_, raw) = values.first(where: { $0.0 == entry.control.rawValue }) else { continue }
            let read = Double(raw)
            let now = measured ? read : estimate(entry.control, at: time, echoed: read)
            let velocity = pose[entry.control].map { time > $0.time ? (now - $0.value) / (time - $0.time) : 0 } ?? 0
            pose[entry.control] = (now, time)
            let sign = entry.axis == .yaw ? -1.0 : 1.0
            axes.append(AxisFeedback(axis: entry.axis, position: Float(sign * now / Self.arcSecondsPerRadian),
                                     velocity: Float(sign * velocity / Self.arcSecondsPerRadian)))
        }
        if phase == .polling {
            phase = .ready
            // Every connect leaves the camera still: hold it where it is.
            for (control, value) in pose { pendingTarget[control] = Int32(value.value.rounded()) }
            stopPending = !pose.isEmpty
        }
        reports.append(.feedback(Feedback(timeUs: UInt64(max(0, time) * 1e6), axes: axes)))
        return reports
    }

    /// Where an axis whose control only echoes its target is: moving from where it was toward the
    /// last target at `max_speed`.
    private func estimate(_ control: V4L2Wire.Control, at time: Double, echoed: Double) -> Double {
        guard let last = pose[control], let target = sentTarget[control] else { return echoed }
        // It has moved toward this target since it was set (or since the last estimate, if later).
        let step = settings.maxSpeed * Self.arcSecondsPerRadian * max(0, time - max(last.time, target.time))
        let distance = target.value - last.value
        return abs(distance) <= step ? target.value : last.value + (distance > 0 ? step : -step)
    }

    // MARK: - Commands

    public mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        guard phase == .ready else { return [] }
        switch command {
        case .position(_, let targets):
            stopPending = false
            for target in targets { setTarget(target.axis, radians: Double(target.position)) }
        case .velocity(let rates):
            // A rate as a target ahead of where it is: far enough to keep moving until the next
            // renewal (two command intervals and a poll), near enough to stop soon after zero.
            let horizon = 2 * settings.commandInterval + 1 / settings.pollHz
            for rate in rates {
                guard let position = position(of: rate.axis) else { continue }
                setTarget(rate.axis, radians: position + Double(rate.value) * horizon)
            }
        case .stop:
            for entry in Self.axes { if let position = position(of: entry.axis) { setTarget(entry.axis, radians: position) } }
            stopPending = true
        default:
            break  // LIMITS: the camera keeps its own range, dockd's are the controller's; no LED, no MOTORS
        }
        return pump(at: time)
    }

    private func position(of axis: Axis) -> Double? {
        guard let entry = Self.axes.first(where: { $0.axis == axis }), let value = pose[entry.control]?.value else { return nil }
        return (axis == .yaw ? -value : value) / Self.arcSecondsPerRadian
    }

    private mutating func setTarget(_ axis: Axis, radians: Double) {
        guard let entry = Self.axes.first(where: { $0.axis == axis }), let c = controls[entry.control.rawValue] else { return }
        var value = (axis == .yaw ? -radians : radians) * Self.arcSecondsPerRadian
        let step = Double(max(1, c.step))
        value = (value / step).rounded() * step
        pendingTarget[entry.control] = Int32(min(Double(c.maximum), max(Double(c.minimum), value)))
    }

    public mutating func tick(at time: Double) -> DriverOutput {
        if let flight = inFlight, time - flight.sentAt > Self.answerTimeout {
            return DriverOutput(reports: [.fatal("the camera did not answer in \(Self.answerTimeout) s")])
        }
        return DriverOutput(bytes: pump(at: time))
    }

    public var nextDeadline: Double? {
        guard phase != .querying, inFlight == nil else { return nil }
        let sets = pendingTarget.keys.map { (lastSet[$0] ?? -.infinity) + settings.commandInterval }
        return ([nextPoll] + sets).min()
    }

    /// The next request when none is in flight: a due set first, else a due poll.
    private mutating func pump(at time: Double) -> [UInt8] {
        guard inFlight == nil, phase != .querying else { return [] }
        for control in pendingTarget.keys.sorted(by: { $0.rawValue < $1.rawValue })
        where time >= (lastSet[control] ?? -.infinity) + settings.commandInterval {
            let value = pendingTarget.removeValue(forKey: control)!
            lastSet[control] = time
            return send(.set(control.rawValue, value), at: time)
        }
        guard time >= nextPoll else { return [] }
        nextPoll = time + 1 / settings.pollHz
        let ids = Self.axes.map(\.control.rawValue).filter { controls[$0] != nil }
        return ids.isEmpty ? [] : send(.get(ids), at: time)
    }

    private mutating func send(_ request: V4L2Wire.Request, at time: Double) -> [UInt8] {
        inFlight = (request, time)
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
