import DockProtocol

/// A pan/tilt head of two Feetech STS/SMS serial bus servos (an STS3215 per axis) on one
/// half-duplex bus (FeetechCodec.swift). The servos take position targets with a speed and close
/// that loop themselves; dockd steers by rates, so a rate is a goal `lead` seconds ahead of where
/// the servo was last read, at the rate's speed, renewed every `renewInterval` while the rate is in
/// force: the servo turns at the rate, and one left without renewals (dockd gone) stops within
/// `lead`. The bus carries one request at a time: present position and speed are read from one
/// servo, then the other, at `pollHz` in all; goals go by SYNC WRITE (no answer) only while no read
/// is awaited, so nothing is sent over a servo's answer.
struct FeetechServoDriver: StandDriver {
    /// One servo and how its steps map to dockd's axis.
    struct Servo: Sendable, Equatable {
        var id: UInt8
        /// +1: the servo's steps grow with dockd's angle (yaw to the left, pitch upwards); −1: against it.
        var sign: Double
        /// The step where the axis is at 0 rad.
        var centre: Int
        /// The axis's range, rad (dockd's signs).
        var range: ClosedRange<Double>
    }

    struct Settings: Sendable, Equatable {
        var pan = Servo(id: 1, sign: 1, centre: 2048, range: -3...3)
        var tilt = Servo(id: 2, sign: 1, centre: 2048, range: -1.5...1.5)
        /// Steps a turn (STS3215: 4096, LeRobot's MODEL_RESOLUTION).
        var countsPerRev = 4096
        /// The fastest rate dockd asks, rad/s.
        var maxSpeed = 2.0
        /// Reads a second, both servos together (each is read at half of it).
        var pollHz = 50.0
    }

    /// How long a servo's answer is awaited: at 1 Mbaud a read and its answer take 0.2 ms; a USB
    /// adapter's latency timer is the rest (the vendor SDK allows for 16 ms each way, its
    /// LATENCY_TIMER).
    static let answerTimeout = 0.1
    /// Reads a servo may miss in a row during the connect before it is taken for absent.
    static let connectAttempts = 3
    /// How far ahead a rate's goal is set, and how often it is renewed.
    static let lead = 0.3
    static let renewInterval = 0.1
    /// Reads a servo may miss in a row once ready before the link is taken for broken (a servo
    /// unplugged from the bus, its power lost): about half a second of silence at `answerTimeout`.
    static let readyMisses = 5

    let name = "feetech"
    let settings: Settings
    private(set) var counters = DriverCounters()
    private var decoder = Feetech.Decoder()
    private var ready = false
    /// The read awaiting its answer: which servo (0 pan, 1 tilt), when it was sent, until when.
    private var inFlight: (servo: Int, sent: Double, deadline: Double)?
    /// When work that needs a tick at once (writes, a refusal) last became due.
    private var dueSince = 0.0
    /// Reads missed in a row, per servo.
    private var misses = [0, 0]
    /// The last read of each servo: steps, steps/s, when.
    private var measured: [(steps: Int, speed: Int, time: Double)?] = [nil, nil]
    /// The rates in force, rad/s, dockd's signs (pan, tilt).
    private var rates = (pan: 0.0, tilt: 0.0)
    /// The newest goals waiting for the bus to be free (no answer awaited): a newer one replaces them.
    private var pendingGoals: [UInt8] = []
    /// Torque on waits too, to go after the connect's hold (torque on before it would turn the
    /// servos to whatever goal they kept).
    private var torquePending = false
    private var lastRenew = -Double.infinity
    private var nextPoll = 0.0
    private var nextServo = 0
    /// The error byte each servo sent last: a refusal is reported when it changes to non-zero.
    private var lastError: [UInt8] = [0, 0]
    /// Motion asked while a servo reports an error: refused at the next tick.
    private var motionRefused: String?
    /// When the last stop went on the wire, until both servos read still after it.
    private var stopSentAt: Double?
    private var stopQueued = false

    init(settings: Settings) { self.settings = settings }

    private var servos: [Servo] { [settings.pan, settings.tilt] }
    private var stepsPerRadian: Double { Double(settings.countsPerRev) / (2 * .pi) }

    /// Every connect forgets what was asked before, reads both servos, then stops them where they
    /// are (goal = present position, torque on) before reporting ready.
    mutating func start(at time: Double) -> [UInt8] {
        decoder = Feetech.Decoder()
        ready = false
        measured = [nil, nil]
        misses = [0, 0]
        lastError = [0, 0]
        rates = (0, 0)
        pendingGoals = []
        torquePending = false
        motionRefused = nil
        stopSentAt = nil
        stopQueued = false
        nextServo = 0
        nextPoll = time
        return poll(at: time)
    }

    mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport] {
        var reports: [DriverReport] = []
        for result in decoder.feed(bytes) {
            switch result {
            case .failure(let error):
                counters.decoder.errors[error, default: 0] += 1
                reports.append(.garbage(error))
            case .success(let status):
                reports += answer(status, at: time)
            }
        }
        return reports
    }

    private mutating func answer(_ status: Feetech.Status, at time: Double) -> [DriverReport] {
        // An answer to nothing asked (late, another servo's): not ours to read.
        guard let asked = inFlight, servos[asked.servo].id == status.id else { return [] }
        inFlight = nil
        dueSince = time
        counters.roundTrip.sample(time - asked.sent)
        guard status.parameters.count == 4 else {
            counters.decoder.errors[.malformed, default: 0] += 1
            return [.garbage(.malformed)]
        }
        counters.decoder.frames += 1
        misses[asked.servo] = 0
        let p = status.parameters
        measured[asked.servo] = (Int(p[0]) | Int(p[1]) << 8, Feetech.signMagnitude(p[2], p[3]), time)
        var reports: [DriverReport] = []
        if status.error != 0, status.error != lastError[asked.servo] {
            counters.refused += 1
            reports.append(.refused(command: MessageType.velocity.rawValue, reason: servoTrouble(asked.servo, status.error)))
        }
        lastError[asked.servo] = status.error
        if let sent = stopSentAt, measured.allSatisfy({ $0.map { $0.time > sent && $0.speed == 0 } ?? false }) { stopSentAt = nil }
        guard ready else {
            guard measured.allSatisfy({ $0 != nil }) else { return reports }
            ready = true
            pendingGoals = hold(at: time)
            torquePending = true
            return reports + [readyReport(), feedback(at: time)]
        }
        return reports + [feedback(at: time)]
    }

    private func servoTrouble(_ index: Int, _ error: UInt8) -> String {
        "servo \(servos[index].id) (\(index == 0 ? "pan" : "tilt")) reports \(Feetech.errorText(error))"
    }

    mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        guard ready else { return [] }
        dueSince = time
        switch command {
        case .velocity(let values):
            rates = (Double(values.first { $0.axis == .yaw }?.value ?? 0), Double(values.first { $0.axis == .pitch }?.value ?? 0))
            (stopSentAt, stopQueued) = (nil, false)
            if rates != (0, 0), let troubled = lastError.firstIndex(where: { $0 != 0 }) {
                // Refused, so not sent: the servos are held where they are instead.
                motionRefused = servoTrouble(troubled, lastError[troubled])
                rates = (0, 0)
            }
            pendingGoals = goals(at: time)
            lastRenew = time
        case .stop:
            rates = (0, 0)
            pendingGoals = []
            stopQueued = true  // the hold is worked out when it goes (`flush`), where the servo is then
        default:
            return []  // positions are closed by the host with rates; LIMITS, LED, MOTORS: none here
        }
        return flush(at: time)
    }

    /// The writes waiting, if no answer is awaited (they are answered by none).
    private mutating func flush(at time: Double) -> [UInt8] {
        guard inFlight == nil else { return [] }
        defer { (pendingGoals, torquePending) = ([], false) }
        if stopQueued { (stopQueued, stopSentAt, pendingGoals) = (false, time, hold(at: time)) }
        return pendingGoals + (torquePending ? Feetech.syncWrite(.torqueEnable, servos.map { ($0.id, [1]) }) : [])
    }

    /// Where servo `i` is now by its last read: the position read carried on by the speed read over
    /// the read's age (at most a read interval and an answer timeout), so that a servo read a
    /// moment ago is not sent back. nil: never read.
    private func carried(_ i: Int, at time: Double) -> Double? {
        guard let read = measured[i] else { return nil }
        let age = min(2 / settings.pollHz + Self.answerTimeout, max(0, time - read.time))
        return Double(read.steps) + Double(read.speed) * age
    }

    /// Both servos held where they are now (`carried`), within their one turn but not the axis's
    /// range: a hold moves nothing, also a servo found outside the range at connect. A stop is a
    /// goal, not goal speed 0: speed 0 is the servo's top speed, and torque off would let the tilt drop.
    private func hold(at time: Double) -> [UInt8] {
        Feetech.syncWrite(.goalPosition, servos.indices.map { i in
            let now = carried(i, at: time) ?? Double(servos[i].centre)
            return (servos[i].id, Feetech.goal(position: min(settings.countsPerRev - 1, max(0, Int(now.rounded()))), speed: topSpeedSteps))
        })
    }

    /// Each servo's goal for the rates in force: `lead` seconds of its rate ahead of where it is
    /// now (`carried`), reached at the rate's speed, within the axis's range; an axis at rate 0
    /// held where it is (held where it was read, a servo still turning was sent back).
    private func goals(at time: Double) -> [UInt8] {
        let axisRates = [rates.pan, rates.tilt]
        return Feetech.syncWrite(.goalPosition, servos.indices.map { i in
            let from = carried(i, at: time) ?? Double(servos[i].centre)
            let stepsPerSecond = min(Double(topSpeedSteps), abs(axisRates[i]) * stepsPerRadian)
            guard stepsPerSecond >= 1 else {
                return (servos[i].id, Feetech.goal(position: min(settings.countsPerRev - 1, max(0, Int(from.rounded()))), speed: topSpeedSteps))
            }
            let direction = (axisRates[i] > 0 ? 1.0 : -1.0) * servos[i].sign
            let goal = from + direction * stepsPerSecond * Self.lead
            return (servos[i].id, Feetech.goal(position: clamped(Int(goal.rounded()), i), speed: Int(stepsPerSecond.rounded())))
        })
    }

    private var topSpeedSteps: Int { max(1, Int((settings.maxSpeed * stepsPerRadian).rounded())) }

    /// The steps servo `i` may be sent to: its axis's range within its one turn.
    private func reach(_ i: Int) -> ClosedRange<Int> {
        let servo = servos[i]
        let ends = [servo.range.lowerBound, servo.range.upperBound].map { Double(servo.centre) + servo.sign * $0 * stepsPerRadian }
        // Both ends within the turn, also for a centre configured past it (each option is valid
        // alone): goals are never steps the servo does not have.
        let turn = 0...(settings.countsPerRev - 1)
        let low = Int(ends.min()!.rounded(.up)).clamped(to: turn), high = Int(ends.max()!.rounded(.down)).clamped(to: turn)
        return low...max(low, high)
    }

    /// A step within the axis's range and the servo's one turn.
    private func clamped(_ steps: Int, _ i: Int) -> Int { min(reach(i).upperBound, max(reach(i).lowerBound, steps)) }

    /// The axis's range as the servo can reach it, rad (dockd's signs): the configured range, cut
    /// to the servo's one turn (a centre near one end of the turn leaves less on that side).
    private func reachableRange(_ i: Int) -> (min: Float, max: Float) {
        let ends = [reach(i).lowerBound, reach(i).upperBound].map { servos[i].sign * Double($0 - servos[i].centre) / stepsPerRadian }
        return (Float(ends.min()!), Float(ends.max()!))
    }

    mutating func tick(at time: Double) -> DriverOutput {
        var out = DriverOutput()
        if let refused = motionRefused {
            motionRefused = nil
            counters.refused += 1
            out.reports.append(.refused(command: MessageType.velocity.rawValue, reason: refused))
        }
        if let asked = inFlight, time >= asked.deadline {
            inFlight = nil
            counters.retries += 1
            misses[asked.servo] += 1
            let silence = "servo \(servos[asked.servo].id) (\(asked.servo == 0 ? "pan" : "tilt")) does not answer on the bus"
            if !ready, misses[asked.servo] >= Self.connectAttempts {
                out.reports.append(.fatal(silence))
                return out
            }
            if ready, misses[asked.servo] >= Self.readyMisses {
                // Its feedback would repeat the last read: close the link, so the engine stops what
                // it can and the next connect finds the servo or says it is missing.
                out.reports.append(.reconnect(silence))
                return out
            }
        }
        guard inFlight == nil else { return out }
        if ready, rates != (0, 0), time >= lastRenew + Self.renewInterval {
            pendingGoals = goals(at: time)
            lastRenew = time
        }
        out.bytes += flush(at: time)
        if time >= nextPoll { out.bytes += poll(at: time) }
        return out
    }

    /// A read of the next servo's present position and speed.
    private mutating func poll(at time: Double) -> [UInt8] {
        let servo = nextServo
        nextServo = 1 - servo
        nextPoll = max(nextPoll + 1 / settings.pollHz, time)
        inFlight = (servo, time, time + Self.answerTimeout)
        return Feetech.read(id: servos[servo].id, .presentPosition, count: 4)
    }

    var nextDeadline: Double? {
        if let asked = inFlight { return asked.deadline }
        if !pendingGoals.isEmpty || torquePending || stopQueued || motionRefused != nil { return dueSince }
        return rates != (0, 0) ? min(nextPoll, lastRenew + Self.renewInterval) : nextPoll
    }

    var positionIsPolled: Bool { true }

    var stopConfirmed: Bool { stopSentAt == nil && !stopQueued }

    private func readyReport() -> DriverReport {
        let speed = Float(settings.maxSpeed)
        let (pan, tilt) = (reachableRange(0), reachableRange(1))
        let axes = [AxisCapability(axis: .yaw, continuous: false, min: pan.min, max: pan.max,
                                   maxSpeed: speed, maxAccel: 4 * speed, countsPerRev: UInt32(settings.countsPerRev)),
                    AxisCapability(axis: .pitch, continuous: false, min: tilt.min, max: tilt.max,
                                   maxSpeed: speed, maxAccel: 4 * speed, countsPerRev: UInt32(settings.countsPerRev))]
        let capabilities = Capabilities(feedbackHz: UInt16((settings.pollHz / 2).rounded()), imuHz: 0, features: [], buttons: [], customButtons: 0,
                                        axes: axes, batteries: [])
        let identity = StandIdentity(model: "Feetech STS/SMS servos", firmware: "", hardware: "pan servo \(settings.pan.id), tilt servo \(settings.tilt.id)",
                                     serial: "feetech-\(settings.pan.id)-\(settings.tilt.id)", protocolVersion: "feetech-sts")
        return .ready(identity, capabilities)
    }

    /// Both axes as last read, in rad and rad/s through each servo's sign and centre.
    private func feedback(at time: Double) -> DriverReport {
        let axes = zip([Axis.yaw, .pitch], servos.indices).map { axis, i in
            let read = measured[i] ?? (servos[i].centre, 0, time)
            return AxisFeedback(axis: axis, position: Float(servos[i].sign * Double(read.steps - servos[i].centre) / stepsPerRadian),
                                velocity: Float(servos[i].sign * Double(read.speed) / stepsPerRadian))
        }
        return .feedback(Feedback(timeUs: UInt64(max(0, time) * 1e6), axes: axes))
    }
}

private extension Int {
    func clamped(to range: ClosedRange<Int>) -> Int { Swift.min(range.upperBound, Swift.max(range.lowerBound, self)) }
}
