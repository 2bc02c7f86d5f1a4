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
    /// messages is 58 ms, the rest is the unit's own delay.
    static let answerWait = 0.5
    /// Without a position answer for this long, a unit that answered has stopped: reconnect, so
    /// that the next connect asks again whether it answers.
    static let answerSilence = 2.0
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
    /// The speeds last sent (pan > 0 right, tilt > 0 up).
    private var steps = (pan: 0, tilt: 0)
    private var nextPoll = 0.0
    private var lastAnswer = 0.0
    private var asksTiltNext = false

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
        asksTiltNext = false
        let stop = PelcoD.stop(address: settings.address).bytes
        guard settings.queries != .off else { phase = .opened; return stop }
        phase = .detecting(until: time + Self.answerWait)
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
        lastAnswer = time
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
            guard wanted != steps else { return [] }
            steps = wanted
            estimate.told(.rate(x: -rate(steps.pan), y: rate(steps.tilt), until: .infinity), sent: time, at: time)
            return PelcoD.drive(address: settings.address, pan: steps.pan, tilt: steps.tilt).bytes
        case .stop:
            steps = (0, 0)
            estimate.told(.still, sent: time, at: time)
            return PelcoD.stop(address: settings.address).bytes
        default:
            return []  // positions are closed by the host with rates; LIMITS, LED, MOTORS: none here
        }
    }

    /// The speed step nearest a rate (rad/s), within the protocol's.
    private func step(_ rate: Double) -> Int {
        max(-PelcoD.topSpeed, min(PelcoD.topSpeed, Int((rate / settings.maxSpeed * Double(PelcoD.topSpeed)).rounded())))
    }

    private func rate(_ step: Int) -> Double { settings.maxSpeed * Double(step) / Double(PelcoD.topSpeed) }

    mutating func tick(at time: Double) -> DriverOutput {
        switch phase {
        case .opened:
            phase = .ready(measured: false)
            return DriverOutput(reports: ready(measured: false, at: time))
        case .detecting(let until):
            guard time >= until else { return DriverOutput() }
            guard settings.queries == .auto else {
                return DriverOutput(reports: [.fatal("no answer to the pan position query (position_queries = on)")])
            }
            phase = .ready(measured: false)
            return DriverOutput(reports: ready(measured: false, at: time))
        case .ready(let measured):
            guard time >= nextPoll else { return DriverOutput() }
            nextPoll = time + 1 / settings.pollHz
            if measured && time - lastAnswer > Self.answerSilence {
                return DriverOutput(reports: [.reconnect("the unit stopped answering its position queries")])
            }
            var out = DriverOutput(reports: [feedback(at: time)])
            if measured {
                out.bytes = PelcoD.query(asksTiltNext ? .queryTilt : .queryPan, address: settings.address).bytes
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
        case .detecting(let until): until
        case .ready: nextPoll
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
        lastAnswer = time
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
