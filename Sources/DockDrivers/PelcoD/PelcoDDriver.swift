import DockProtocol

/// A pan/tilt head on an RS-485 bus speaking Pelco-D (PelcoDCodec.swift): steered by rates, as
/// variable speeds 0–0x3F on each axis, which the unit keeps until told otherwise. The protocol
/// acknowledges nothing and names no speed in degrees, so the rate a speed makes is `maxSpeed`'s
/// share (an estimate per unit). Where the unit answers the extended position queries (0x51/0x53),
/// its pose is read at the poll rate; between reads, and on units without them, it is estimated
/// from the speeds sent (PoseEstimate, as the ONVIF driver dead-reckons).
struct PelcoDDriver: StandDriver {
    /// Whether the unit is asked where it is: `auto` asks once at connect and keeps asking if it
    /// answers; `on` requires answers; `off` never asks (some units take 0x51 for something else).
    enum PositionQueries: String, CaseIterable, Sendable { case auto, on, off }

    struct Settings: Sendable {
        var address: UInt8 = 1
        var queries = PositionQueries.auto
        /// The rate of speed 0x3F, rad/s (the same on both axes).
        var maxSpeed = 0.6
        /// Feedback reports a second, and (with queries) position requests: each a pan or a tilt.
        var pollHz = 10.0
    }

    /// How long the first query's answer is waited for: a 2400-baud round trip of two seven-byte
    /// messages is 58 ms, the rest is the unit's own delay. The query goes `detectionQueries`
    /// times in that time, so that one answer lost to noise does not make a unit that answers
    /// one driven on an estimate.
    static let answerWait = 0.5
    static let detectionQueries = 3
    /// The least time between two drive messages: at 2400 baud a message takes 29 ms, and with a
    /// query and its answer at 10 Hz the half-duplex pair carries 21 bytes a tenth of a second
    /// (88 ms); a drive sent at every control step (up to 20 a second) would queue in the tty
    /// behind the speeds it replaces. The newest speeds wait; a stop never does.
    static let driveInterval = 0.1
    /// The speeds in force are sent again this often: the protocol acknowledges nothing, and a
    /// stop lost to noise on the pair would leave the head turning for good.
    static let refreshInterval = 1.0
    static let centidegreesPerRadian = 18_000 / Double.pi

    let name = "pelco-d"
    let settings: Settings
    private(set) var counters = DriverCounters()
    private var decoder = PelcoD.Decoder()
    private enum Phase: Sendable, Equatable {
        case opened
        case detecting(until: Double)
        case ready(measured: Bool)
    }
    private var phase = Phase.opened
    /// yaw (x) and pitch (y) in radians: dockd's yaw grows to the left, its pitch upwards.
    private var estimate: PoseEstimate
    /// The speeds last sent (pan > 0 right, tilt > 0 up), and when.
    private var steps = (pan: 0, tilt: 0)
    private var lastDrive = -Double.infinity
    /// Speeds asked for and not yet sent (`driveInterval`).
    private var pendingSteps: (pan: Int, tilt: Int)?
    private var nextPoll = 0.0
    private var asksTiltNext = false
    /// The detection queries still to send, and when the next goes.
    private var detectionQueriesLeft = 0
    /// The unit has answered a position query on some connect: with `auto`, it is then required
    /// to again (a connect it does not answer is a cut pair or a busy unit, not a unit without
    /// queries), so that a head read back is never taken over by a dead-reckoned pose from (0, 0).
    private var hasAnswered = false

    init(settings: Settings) {
        self.settings = settings
        estimate = Self.freshEstimate(settings, at: 0)
    }

    private static func freshEstimate(_ settings: Settings, at time: Double) -> PoseEstimate {
        PoseEstimate(topSpeed: (settings.maxSpeed, settings.maxSpeed), at: (0, 0), time: time,
                          range: PanTiltRange(x: -Double.pi...Double.pi, y: -Double.pi / 2...Double.pi / 2))
    }

    /// Every connect stops the head; then the unit is asked where it pans, unless told not to.
    mutating func start(at time: Double) -> [UInt8] {
        decoder = PelcoD.Decoder()
        estimate = Self.freshEstimate(settings, at: time)
        steps = (0, 0)
        pendingSteps = nil
        lastDrive = time
        asksTiltNext = false
        let stop = PelcoD.stop(address: settings.address).bytes
        guard settings.queries != .off else { phase = .opened; return stop }
        phase = .detecting(until: time + Self.answerWait)
        detectionQueriesLeft = Self.detectionQueries - 1
        nextPoll = time + Self.answerWait / Double(Self.detectionQueries)
        return stop + PelcoD.query(.queryPan, address: settings.address).bytes
    }

    mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport] {
        var reports: [DriverReport] = []
        for result in decoder.feed(bytes) {
            switch result {
            case .failure(let error):
                counters.decoder.errors[error, default: 0] += 1
                reports.append(.garbage(error))
            case .success(let message) where message.address != settings.address:
                continue  // another unit on the bus
            case .success(let message):
                reports += answer(message, at: time)
            }
        }
        return reports
    }

    private mutating func answer(_ message: PelcoD.Message, at time: Double) -> [DriverReport] {
        guard message.command2 == PelcoD.Extended.panPosition.rawValue || message.command2 == PelcoD.Extended.tiltPosition.rawValue else {
            counters.decoder.errors[.unknownType, default: 0] += 1
            return [.garbage(.unknownType)]
        }
        counters.decoder.frames += 1
        hasAnswered = true
        let now = estimate.pose(at: time), angle = Self.radians(centidegrees: message.word)
        if message.command2 == PelcoD.Extended.panPosition.rawValue {
            estimate.read(x: -angle, y: now.y, at: time)  // pan grows to the right
        } else {
            estimate.read(x: now.x, y: -angle, at: time)  // tilt grows downwards
        }
        guard case .detecting = phase else { return [] }
        phase = .ready(measured: true)
        return ready(measured: true, at: time)
    }

    /// Hundredths of a degree, 0–35999, as a signed angle: past half a turn is the other way.
    static func radians(centidegrees: Int) -> Double {
        let wrapped = centidegrees % 36_000
        return Double(wrapped > 18_000 ? wrapped - 36_000 : wrapped) / centidegreesPerRadian
    }

    mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        switch command {
        case .velocity(let rates):
            let yaw = Double(rates.first { $0.axis == .yaw }?.value ?? 0), pitch = Double(rates.first { $0.axis == .pitch }?.value ?? 0)
            let wanted = (pan: -step(yaw), tilt: step(pitch))
            guard wanted != (pendingSteps ?? steps) else { return [] }
            pendingSteps = wanted
            return drive(at: time)
        case .stop:
            pendingSteps = nil
            return drive((0, 0), at: time)
        default:
            return []  // positions are closed by the host with rates; LIMITS, LED, MOTORS: none here
        }
    }

    /// The speed step nearest a rate (rad/s), within the protocol's.
    private func step(_ rate: Double) -> Int {
        max(-PelcoD.topSpeed, min(PelcoD.topSpeed, Int((rate / settings.maxSpeed * Double(PelcoD.topSpeed)).rounded())))
    }

    private func rate(_ step: Int) -> Double { settings.maxSpeed * Double(step) / Double(PelcoD.topSpeed) }

    /// The pending speeds, once `driveInterval` has passed since the last drive.
    private mutating func drive(at time: Double) -> [UInt8] {
        guard let wanted = pendingSteps, time >= lastDrive + Self.driveInterval else { return [] }
        pendingSteps = nil
        return drive(wanted, at: time)
    }

    private mutating func drive(_ wanted: (pan: Int, tilt: Int), at time: Double) -> [UInt8] {
        steps = wanted
        lastDrive = time
        estimate.told(wanted == (0, 0) ? .still : .rate(x: -rate(wanted.pan), y: rate(wanted.tilt), until: .infinity), sent: time, at: time)
        return PelcoD.drive(address: settings.address, pan: wanted.pan, tilt: wanted.tilt).bytes
    }

    /// The speeds in force again, every `refreshInterval` without a drive.
    private mutating func refresh(at time: Double) -> [UInt8] {
        guard pendingSteps == nil, time >= lastDrive + Self.refreshInterval else { return [] }
        return drive(steps, at: time)
    }

    mutating func tick(at time: Double) -> DriverOutput {
        switch phase {
        case .opened:
            phase = .ready(measured: false)
            return DriverOutput(reports: ready(measured: false, at: time))
        case .detecting(let until):
            if time < until {
                guard detectionQueriesLeft > 0, time >= nextPoll else { return DriverOutput() }
                detectionQueriesLeft -= 1
                nextPoll = time + Self.answerWait / Double(Self.detectionQueries)
                return DriverOutput(bytes: PelcoD.query(.queryPan, address: settings.address).bytes)
            }
            guard settings.queries == .auto, !hasAnswered else {
                let why = hasAnswered ? "the unit answered its position queries before" : "position_queries = on"
                return DriverOutput(reports: [.fatal("no answer to the pan position query (\(why))")])
            }
            phase = .ready(measured: false)
            return DriverOutput(reports: ready(measured: false, at: time))
        case .ready(let measured):
            var out = DriverOutput(bytes: drive(at: time) + refresh(at: time))
            guard time >= nextPoll else { return out }
            nextPoll = time + 1 / settings.pollHz
            out.reports = [feedback(at: time)]
            if measured {
                out.bytes += PelcoD.query(asksTiltNext ? .queryTilt : .queryPan, address: settings.address).bytes
                asksTiltNext.toggle()
            }
            return out
        }
    }

    /// Answering no position query, the unit says nothing at all.
    var standIsMute: Bool { phase == .ready(measured: false) || phase == .opened }

    var nextDeadline: Double? {
        switch phase {
        case .opened: nil
        case .detecting(let until): detectionQueriesLeft > 0 ? min(until, nextPoll) : until
        case .ready: min(nextPoll, pendingSteps == nil ? lastDrive + Self.refreshInterval : lastDrive + Self.driveInterval)
        }
    }

    /// The unit says nothing of itself: what it can do is what the settings say.
    private mutating func ready(measured: Bool, at time: Double) -> [DriverReport] {
        let speed = Float(settings.maxSpeed)
        let axes = [AxisCapability(axis: .yaw, continuous: false, min: -.pi, max: .pi, maxSpeed: speed, maxAccel: 4 * speed, countsPerRev: 0),
                    AxisCapability(axis: .pitch, continuous: false, min: -.pi / 2, max: .pi / 2, maxSpeed: speed, maxAccel: 4 * speed, countsPerRev: 0)]
        let capabilities = Capabilities(feedbackHz: UInt16(settings.pollHz.rounded()), imuHz: 0, features: [], buttons: [], customButtons: 0,
                                        axes: axes, batteries: [])
        let identity = StandIdentity(model: "Pelco-D unit", firmware: "",
                                     hardware: measured ? "pose read back (position queries)" : "pose estimated from the speeds sent",
                                     serial: "pelco-d-\(settings.address)", protocolVersion: "pelco-d")
        nextPoll = time
        return [.ready(identity, capabilities), feedback(at: time)]
    }

    private func feedback(at time: Double) -> DriverReport {
        let pose = estimate.pose(at: time), rate = estimate.rate(at: time)
        return .feedback(Feedback(timeUs: UInt64(max(0, time) * 1e6), axes: [
            AxisFeedback(axis: .yaw, position: Float(pose.x), velocity: Float(rate.x)),
            AxisFeedback(axis: .pitch, position: Float(pose.y), velocity: Float(rate.y)),
        ]))
    }
}
