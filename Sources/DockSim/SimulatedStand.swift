import DockProtocol

/// A complete simulated stand: the firmware's protocol handling, the motors' physics, buttons,
/// batteries and the IMU. Pure and deterministic: it takes bytes and a time (microseconds on the
/// stand's clock) and returns the bytes the stand sends. Time only moves when the caller says so,
/// so tests and benchmarks run it faster than real time; dock-sim drives it from a real clock.
public struct SimulatedStand: Sendable {
    public let configuration: StandConfiguration
    private var axes: [AxisState]
    private var random: SeededRandom
    private var decoder = FrameDecoder()
    private var sequencer = FrameSequencer()
    private var base: BaseMotion
    private var output: [UInt8] = []

    private var now: UInt64 = 0
    private var nextFeedback: UInt64 = 0
    private var nextImu: UInt64 = 0
    private var lastSent: UInt64 = 0

    // Session with the host.
    public private(set) var sessionActive = false
    /// The host said 1.1 or later in its HELLO: it takes a zoom axis.
    private var hostKnowsZoom = true
    public private(set) var heartbeatTimeoutMs: UInt16
    private var lastHeard: UInt64 = 0
    public private(set) var heartbeatLapsed = false
    public private(set) var led = LedCommand(mode: .off)

    // The world around the stand.
    public private(set) var docked = true
    public private(set) var batteryLevels: [Double]
    public private(set) var charging = false
    /// The last BATTERY sent per battery, and when (PROTOCOL.md §4 BATTERY: on a change of 0.01 or
    /// of charge/flags, and at least every 10 s).
    private var reportedBattery: [(state: BatteryState, at: UInt64)?] = []
    private var pendingEvents: [(time: UInt64, event: StandEvent)] = []
    private var corruptFraction = 0.0
    private var corruptUntil: UInt64 = 0
    private var silentUntil: UInt64 = 0
    private var slow: (delay: UInt64, until: UInt64)?
    /// Bytes sent while slow, with when they reach the host; later bytes queue behind them.
    private var delayed: [(due: UInt64, bytes: [UInt8])] = []
    /// The stand's clock minus the simulation's, µs: non-zero after a `clockjump`.
    private var clockOffset: Int64 = 0
    private var lying: (kind: SimAction.Lie, until: UInt64)?

    /// Frames the stand decoded from the host, by kind, and errors; tests read these.
    public var hostCounters: DecoderCounters { decoder.counters }
    /// Every message the stand received and accepted, most recent last (bounded).
    public private(set) var received: [Message] = []

    public init(configuration: StandConfiguration = StandConfiguration(), seed: UInt64 = 1) {
        self.configuration = configuration
        self.axes = configuration.axes.map { AxisState(model: $0) }
        self.random = SeededRandom(seed: seed)
        self.base = BaseMotion(handheld: configuration.handheld)
        self.heartbeatTimeoutMs = configuration.defaultHeartbeatTimeoutMs
        self.batteryLevels = configuration.batteries.map { _ in 0.8 }
    }

    // MARK: - What the outside world sees (the scene simulator and tests read these)

    public struct AxisTruth: Sendable, Equatable {
        public var motorPosition: Double
        public var outputPosition: Double
        public var velocity: Double
        public var acceleration: Double
    }

    /// The true state of an axis (not what the encoder reports).
    public func truth(_ axis: Axis) -> AxisTruth? {
        axes.first { $0.model.axis == axis }.map {
            AxisTruth(motorPosition: $0.motorPosition, outputPosition: $0.outputPosition, velocity: $0.velocity, acceleration: $0.acceleration)
        }
    }

    /// The limits in force on an axis: its own, narrowed by the host's LIMITS until the next HELLO.
    public func limitsInForce(_ axis: Axis) -> (min: Double, max: Double, maxSpeed: Double)? {
        axes.first { $0.model.axis == axis }.map { ($0.limitMin, $0.limitMax, $0.limitSpeed) }
    }

    /// The base's attitude in the world (yaw, pitch, roll), rad: zero unless hand-held.
    public func baseAttitude(atMicros t: UInt64) -> (Double, Double, Double) { base.attitude(at: Double(t) / 1e6).angles }

    public var time: UInt64 { now }

    // MARK: - Input

    /// The host's bytes arrive at `time`. Returns what the stand sends in reply.
    public mutating func receive(_ bytes: [UInt8], atMicros time: UInt64) -> [UInt8] {
        // Keep what the stand sent while catching up: dropping it would lose frames (seq gaps).
        run(toMicros: time)
        for event in decoder.events(bytes) {
            switch event {
            case .frame(let frame): handle(frame)
            case .unusable(let header, let error): refuseUnusable(header, error)
            case .broken: break
            }
        }
        return takeOutput()
    }

    /// Applies an outside action now. Returns what the stand sends because of it.
    public mutating func apply(_ action: SimAction, atMicros time: UInt64) -> [UInt8] {
        run(toMicros: time)
        switch action {
        case .press(let kind):
            queueEvent(StandEvent(timeUs: now, kind: kind, value: 1))
            queueEvent(StandEvent(timeUs: now + 100_000, kind: kind, value: 0))
        case .customButton(let id, let pressed):
            queueEvent(StandEvent(timeUs: now, kind: .customButton, value: pressed ? 1 : 0, button: id))
        case .zoom(let factor):
            queueEvent(StandEvent(timeUs: now, kind: .zoom, factor: Float(factor)))
        case .docked(let isDocked):
            docked = isDocked
            queueEvent(StandEvent(timeUs: now, kind: .docked, value: isDocked ? 1 : 0))
        case .battery(let level):
            for i in batteryLevels.indices { batteryLevels[i] = level }
        case .charger(let on):
            charging = on
        case .corrupt(let fraction, let seconds):
            corruptFraction = fraction
            corruptUntil = now + UInt64(seconds * 1e6)
        case .stall(let axis, let seconds):
            if let i = axes.firstIndex(where: { $0.model.axis == axis }) {
                axes[i].stalledUntil = Double(now) / 1e6 + seconds
                send(.fault(Fault(timeUs: stamp(now), severity: .error, code: .stall, axis: axis, text: "\(axis) stalled")))
            }
        case .silent(let seconds):
            silentUntil = now + UInt64(seconds * 1e6)
        case .slow(let delayMs, let seconds):
            slow = (UInt64(delayMs * 1000), now + UInt64(seconds * 1e6))
        case .clockJump(let seconds):
            clockOffset += Int64(seconds * 1e6)
        case .unplug:
            break
        case .log(let text):
            send(.fault(Fault(timeUs: stamp(now), severity: .info, code: .log, text: text)))
        case .lie(let kind, let seconds):
            lying = (kind, now + UInt64(seconds * 1e6))
        }
        flushEvents()
        return takeOutput()
    }

    /// The link went away (unplugged, power cycled): the motors stop and nothing more is sent until
    /// the next HELLO, as on hardware that restarts.
    public mutating func endSession(atMicros time: UInt64) {
        run(toMicros: time)
        sessionActive = false
        for i in axes.indices { axes[i].command = .stopping }
        output.removeAll()
        delayed.removeAll()
    }

    // MARK: - Time

    /// Runs the physics up to `time` and returns what the stand sent meanwhile (feedback, IMU,
    /// battery, heartbeat, faults).
    public mutating func advance(toMicros time: UInt64) -> [UInt8] {
        run(toMicros: time)
        return takeOutput()
    }

    /// Steps the physics up to `time`, leaving what the stand sent in `output`.
    private mutating func run(toMicros time: UInt64) {
        let step = configuration.physicsStepMicros
        while now + step <= time {
            now += step
            let seconds = Double(now) / 1e6
            for i in axes.indices { axes[i].step(dt: Double(step) / 1e6, time: seconds) }
            drainBatteries(dt: Double(step) / 1e6)
            periodicOutput()
        }
    }

    private mutating func periodicOutput() {
        flushEvents()
        if sessionActive {
            if !heartbeatLapsed && now - lastHeard > UInt64(heartbeatTimeoutMs) * 1000 {
                heartbeatLapsed = true
                for i in axes.indices { axes[i].command = .stopping }
                send(.fault(Fault(timeUs: stamp(now), severity: .warning, code: .heartbeatLost,
                                  text: "no valid frame from the host for \(heartbeatTimeoutMs) ms: motors stopped")))
            }
            if now >= nextFeedback {
                nextFeedback = Self.nextTick(after: nextFeedback, now: now, hz: configuration.feedbackHz)
                send(.feedback(feedback()))
            }
            if configuration.imuHz > 0 && now >= nextImu {
                nextImu = Self.nextTick(after: nextImu, now: now, hz: configuration.imuHz)
                send(.imu(imuSample()))
            }
            reportBatteries(force: false)
        }
        // In every state, silence longer than the stand heartbeat interval is filled (PROTOCOL.md §3).
        if now - lastSent >= Self.heartbeatMicros { send(.heartbeat(uptimeMs: UInt32(truncatingIfNeeded: now / 1000))) }
    }

    private static let heartbeatMicros = UInt64(ProtocolTiming.standHeartbeatInterval * 1e6)

    /// Schedules from the previous due time, not from `now`, so a period that is not a multiple of
    /// the physics step still averages the advertised rate (1 ms steps at 333 Hz would otherwise
    /// give 250 Hz). Falls back to `now` after a long gap instead of bursting to catch up.
    private static func nextTick(after due: UInt64, now: UInt64, hz: UInt16) -> UInt64 {
        let period = 1_000_000 / UInt64(max(1, hz))
        let next = due + period
        return next > now ? next : now + period
    }

    // MARK: - Protocol handling

    private mutating func handle(_ frame: Frame) {
        lastHeard = now
        // Heartbeat lost lasts until an actuation command (or a HELLO): other frames keep the link
        // but move nothing and raise no second FAULT (PROTOCOL.md §2.1).
        switch frame.message {
        case .velocity, .position: heartbeatLapsed = false
        default: break
        }
        if received.count >= 256 { received.removeFirst(128) }
        received.append(frame.message)

        if case .hello(let hello) = frame.message {
            startSession(hello, frame: frame)
            return
        }
        // ACK and NACK are never answered, whatever their flags say (PROTOCOL.md §3).
        if case .ack = frame.message { return }
        if case .nack = frame.message { return }
        guard sessionActive else {
            if frame.ackRequested { nack(frame, .notReady, "no HELLO yet") }
            return
        }
        let result = execute(frame.message)
        guard frame.ackRequested else { return }
        switch result {
        case .success: send(.ack(Ack(seq: frame.seq, type: frame.message.type.rawValue)))
        case .failure(let refusal): nack(frame, refusal.code, refusal.detail)
        }
    }

    /// A frame with a good CRC that this version cannot use still gets its answer when it asked.
    private mutating func refuseUnusable(_ header: FrameHeader, _ error: FrameError) {
        guard header.ackRequested, header.type != MessageType.ack.rawValue, header.type != MessageType.nack.rawValue else { return }
        let (code, detail): (NackCode, String) = error == .unknownType
            ? (.unsupported, "type 0x\(String(header.type, radix: 16)) is unknown to protocol \(ProtocolVersion.text)")
            : (.malformed, "type 0x\(String(header.type, radix: 16)): payload malformed")
        send(.nack(Nack(seq: header.seq, type: header.type, code: code, detail: detail)))
    }

    private struct Refusal: Error {
        var code: NackCode
        var detail: String
    }

    private mutating func startSession(_ hello: Hello, frame: Frame) {
        guard hello.major == ProtocolVersion.major else {
            nack(frame, .versionMismatch, "stand speaks \(ProtocolVersion.text), host \(hello.major).\(hello.minor)")
            return
        }
        sessionActive = true
        hostKnowsZoom = hello.minor >= 1
        heartbeatLapsed = false
        heartbeatTimeoutMs = ProtocolTiming.clampedHeartbeatTimeoutMs(hello.heartbeatTimeoutMs, standDefault: configuration.defaultHeartbeatTimeoutMs)
        led = LedCommand(mode: .off)
        for i in axes.indices {
            axes[i].resetLimits()
            axes[i].enabled = true
            axes[i].command = .stopping
        }
        send(.helloReply(HelloReply(heartbeatTimeoutMs: heartbeatTimeoutMs, model: configuration.model,
                                    firmware: configuration.firmware, hardware: configuration.hardware,
                                    serial: configuration.serial)))
        send(.capabilities(offeredCapabilities))
        reportedBattery = []
        reportBatteries(force: true)
        send(.event(StandEvent(timeUs: stamp(now), kind: .docked, value: docked ? 1 : 0)))
        nextFeedback = now
        nextImu = now
    }

    private mutating func execute(_ message: Message) -> Result<Void, Refusal> {
        switch message {
        case .heartbeat, .ack, .nack:  // ACK and NACK are handled before: never answered
            return .success(())
        case .velocity(let values):
            guard let indices = indices(of: values.map(\.axis)) else { return .failure(unsupportedAxis) }
            // Check every axis before moving any: a refused command must not act in part.
            guard values.allSatisfy(\.value.isFinite) else { return .failure(Refusal(code: .outOfRange, detail: "velocity must be finite")) }
            for (i, v) in zip(indices, values) { axes[i].command = .velocity(Double(v.value)) }
            return .success(())
        case .position(let duration, let targets):
            guard let indices = indices(of: targets.map(\.axis)) else { return .failure(unsupportedAxis) }
            guard duration.isFinite, duration >= 0 else { return .failure(Refusal(code: .outOfRange, detail: "duration must be ≥ 0")) }
            for (i, t) in zip(indices, targets) {
                let p = Double(t.position)
                guard p.isFinite, t.velocity.isFinite, p >= lowerLimit(i) - 1e-6, p <= upperLimit(i) + 1e-6 else {
                    return .failure(Refusal(code: .outOfRange, detail: "\(axes[i].model.axis) target \(t.position) outside \(lowerLimit(i))…\(upperLimit(i))"))
                }
            }
            let start = Double(now) / 1e6
            for (i, t) in zip(indices, targets) {
                let p0 = axes[i].motorPosition, p1 = Double(t.position)
                let time = max(Double(duration), axes[i].minimumDuration(distance: p1 - p0))
                axes[i].command = .trajectory(start: start, duration: time, p0: p0, v0: axes[i].velocity, p1: p1, v1: Double(t.velocity))
            }
            return .success(())
        case .stop:
            for i in axes.indices { axes[i].command = .stopping }
            return .success(())
        case .limits(let limits):
            guard let indices = indices(of: limits.map(\.axis)) else { return .failure(unsupportedAxis) }
            // All or nothing: every axis is checked before any changes (PROTOCOL.md §4 LIMITS).
            for (i, l) in zip(indices, limits) {
                let m = axes[i].model
                // A continuous axis has no range: its min and max are neither checked nor applied.
                let rangeOK = (m.continuous && !configuration.checksContinuousRanges)
                    || (l.min.isFinite && l.max.isFinite && l.min < l.max && Double(l.min) >= m.min - 1e-6 && Double(l.max) <= m.max + 1e-6)
                guard rangeOK, l.maxSpeed.isFinite, l.maxSpeed > 0, Double(l.maxSpeed) <= m.maxSpeed + 1e-6,
                      l.maxAccel.isFinite, l.maxAccel > 0, Double(l.maxAccel) <= m.maxAccel + 1e-6 else {
                    return .failure(Refusal(code: .outOfRange, detail: "\(m.axis) limits outside the stand's own"))
                }
            }
            for (i, l) in zip(indices, limits) {
                if !axes[i].model.continuous { axes[i].limitMin = Double(l.min); axes[i].limitMax = Double(l.max) }
                axes[i].limitSpeed = Double(l.maxSpeed); axes[i].limitAccel = Double(l.maxAccel)
            }
            return .success(())
        case .led(let command):
            guard LedMode(rawValue: command.mode) != nil else { return .failure(Refusal(code: .unsupported, detail: "LED mode \(command.mode)")) }
            led = command
            return .success(())
        case .motors(let enabled):
            for i in axes.indices { axes[i].enabled = enabled.contains(AxisMask([axes[i].model.axis])) }
            return .success(())
        case .request(let kind):
            switch kind {
            case .helloReply:
                send(.helloReply(HelloReply(heartbeatTimeoutMs: heartbeatTimeoutMs, model: configuration.model,
                                            firmware: configuration.firmware, hardware: configuration.hardware,
                                            serial: configuration.serial)))
            case .capabilities: send(.capabilities(offeredCapabilities))
            case .batteries: reportBatteries(force: true)
            case .docked: send(.event(StandEvent(timeUs: stamp(now), kind: .docked, value: docked ? 1 : 0)))
            }
            return .success(())
        case .hello, .helloReply, .capabilities, .feedback, .imu, .event, .battery, .fault:
            return .failure(Refusal(code: .unsupported, detail: "a stand does not take \(message.type)"))
        }
    }

    private var unsupportedAxis: Refusal { Refusal(code: .unsupported, detail: "axis not on this stand") }

    private func indices(of wanted: [Axis]) -> [Int]? {
        var result: [Int] = []
        for axis in wanted {
            guard let i = axes.firstIndex(where: { $0.model.axis == axis }) else { return nil }
            result.append(i)
        }
        return result
    }

    // A continuous axis takes any unwrapped multi-turn position (PROTOCOL.md §4: its min/max are
    // ignored), and its motion ignores them too (AxisState.step), so POSITION must not refuse 7 rad.
    private func lowerLimit(_ i: Int) -> Double {
        axes[i].model.continuous ? -.infinity : max(axes[i].model.min, axes[i].limitMin)
    }
    private func upperLimit(_ i: Int) -> Double {
        axes[i].model.continuous ? .infinity : min(axes[i].model.max, axes[i].limitMax)
    }

    private mutating func nack(_ frame: Frame, _ code: NackCode, _ detail: String) {
        send(.nack(Nack(seq: frame.seq, type: frame.message.type.rawValue, code: code, detail: detail)))
    }

    /// The axes a host of protocol 1.0 cannot take (axis 3 is malformed to it): PROTOCOL.md §2.
    private var offeredCapabilities: Capabilities {
        var capabilities = configuration.capabilities
        if !hostKnowsZoom { capabilities.axes.removeAll { $0.axis == .zoom } }
        return capabilities
    }

    // MARK: - Sensors

    private mutating func feedback() -> Feedback {
        let seconds = Double(now) / 1e6
        let axesFeedback = axes.filter { hostKnowsZoom || $0.model.axis != .zoom }.map { axis -> AxisFeedback in
            let m = axis.model
            let count = 2 * Double.pi / Double(m.countsPerRev)
            let noisy = axis.motorPosition + m.positionNoise * random.gaussian()
            let quantized = (noisy / count).rounded() * count
            var status = axis.status
            if axis.stalled(at: seconds) { status.insert(.stalled) }
            let effort = axis.stalled(at: seconds) ? 1.0 : min(1, abs(axis.acceleration) / m.maxAccel + 0.05 * abs(axis.velocity) / m.maxSpeed)
            return AxisFeedback(axis: m.axis, position: Float(quantized), velocity: Float(axis.velocity + 0.002 * random.gaussian()),
                                effort: Float(effort), status: status)
        }
        guard let lie = lying, now < lie.until else { return Feedback(timeUs: stamp(now), axes: axesFeedback) }
        return Feedback(timeUs: stamp(now), axes: axesFeedback.map { a in
            var a = a
            switch lie.kind {
            case .nan: a.position = .nan
            case .range: a.position += 20
            case .speed: a.velocity = 500
            }
            return a
        })
    }

    private mutating func imuSample() -> ImuSample {
        let t = Double(now) / 1e6
        let motion = base.attitude(at: t)
        let c = configuration
        func noisy(_ v: Double, _ sigma: Double, bias: Double = 0) -> Float { Float(v + bias + sigma * random.gaussian()) }
        // In PROTOCOL.md's base frame (x forward, y left, z up, right-handed): the base's pitch is
        // positive up, the stand's convention, which is a negative rotation about y. Gravity seen
        // in the tilted base frame (small angles) plus the walking bob.
        let g = 9.81 + base.verticalAcceleration(at: t)
        return ImuSample(timeUs: stamp(now),
                         gyro: (x: noisy(motion.rates.2, c.gyroNoise, bias: c.gyroBias), y: noisy(-motion.rates.1, c.gyroNoise, bias: -c.gyroBias),
                                z: noisy(motion.rates.0, c.gyroNoise, bias: c.gyroBias)),
                         accel: (x: noisy(g * motion.angles.1, c.accelNoise), y: noisy(g * motion.angles.2, c.accelNoise), z: noisy(g, c.accelNoise)))
    }

    // MARK: - Batteries and events

    private mutating func drainBatteries(dt: Double) {
        let motion = axes.reduce(0) { $0 + abs($1.velocity) } * dt
        for i in batteryLevels.indices {
            let delta = charging ? configuration.chargePerSecond * dt : -(configuration.idleDrainPerSecond * dt + configuration.motionDrainPerRadian * motion)
            batteryLevels[i] = min(1, max(0, batteryLevels[i] + delta))
        }
    }

    private func batteryState(_ i: Int) -> BatteryState {
        // The level as measured: the 0.01 step is counted from the last report, not from rounding
        // boundaries, so a level that hovers at a boundary does not send a report each time.
        let level = min(1, max(0, batteryLevels[i]))
        return BatteryState(index: UInt8(i), level: Float(level), charge: charging ? .charging : .notCharging, low: level < 0.15)
    }

    /// BATTERY for each battery whose level moved by `batteryLevelStep` since its last report, whose
    /// charge or low flag changed, or that was last reported `batteryReportInterval` ago; `force`: all.
    private mutating func reportBatteries(force: Bool) {
        if reportedBattery.count != batteryLevels.count { reportedBattery = batteryLevels.map { _ in nil } }
        let interval = UInt64(ProtocolTiming.batteryReportInterval * 1e6)
        for i in batteryLevels.indices {
            let state = batteryState(i)
            if !force, let last = reportedBattery[i], now - last.at < interval, last.state.charge == state.charge,
               last.state.low == state.low, abs(last.state.level - state.level) < ProtocolTiming.batteryLevelStep - 1e-6 {
                continue
            }
            send(.battery(state))
            reportedBattery[i] = (state, now)
        }
    }

    private mutating func queueEvent(_ event: StandEvent) {
        pendingEvents.append((event.timeUs, event))
    }

    private mutating func flushEvents() {
        guard !pendingEvents.isEmpty else { return }
        // Events reach the host only while a session is up, as on hardware that waits for HELLO.
        let due = pendingEvents.filter { $0.time <= now }
        pendingEvents.removeAll { $0.time <= now }
        guard sessionActive else { return }
        for item in due {
            var event = item.event
            event.timeUs = stamp(item.time)
            send(.event(event))
        }
    }

    // MARK: - Output

    private mutating func send(_ message: Message) {
        lastSent = now
        guard now >= silentUntil else { return }
        var bytes = FrameEncoder.encode(sequencer.frame(message))
        if now < corruptUntil && corruptFraction > 0 {
            for i in bytes.indices where random.unit() < corruptFraction {
                bytes[i] = UInt8(truncatingIfNeeded: random.next())
            }
        }
        if let slow, now < slow.until {
            delayed.append((now + slow.delay, bytes))
        } else if !delayed.isEmpty {
            delayed.append((now, bytes))  // behind what is still in flight: a link keeps order
        } else {
            output.append(contentsOf: bytes)
        }
    }

    /// What the stand sent, plus the delayed bytes now due.
    private mutating func takeOutput() -> [UInt8] {
        defer { output.removeAll(keepingCapacity: true) }
        guard !delayed.isEmpty else { return output }
        var due: [UInt8] = []
        while let first = delayed.first, first.due <= now {
            due.append(contentsOf: first.bytes)
            delayed.removeFirst()
        }
        return due + output
    }

    /// A reading of the stand's own clock at simulation time `t` (it never goes below zero).
    private func stamp(_ t: UInt64) -> UInt64 {
        UInt64(max(0, Int64(t) + clockOffset))
    }
}
