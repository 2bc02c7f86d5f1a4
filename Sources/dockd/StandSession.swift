import DockCore
import DockDrivers
import DockIO
import DockProtocol
import DockTracking
import Logging
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// One stand, from the daemon's side: owns its link, reconnects with backoff, runs the protocol
/// session (handshake, heartbeats, acknowledgements) and the motion controller, and publishes what
/// the stand reports. All of it is isolated to this actor.
actor StandSession {
    enum LinkState: String, Sendable { case connecting, handshaking, connected, disconnected }

    nonisolated let endpoint: StandEndpoint
    private let hub: EventHub
    private let logger: Logger
    private let group: any EventLoopGroup
    private let clock: DaemonClock
    private let settings: SessionSettings

    private(set) var linkState: LinkState = .disconnected
    private(set) var identity: StandIdentity?
    private(set) var capabilities: Capabilities?
    private(set) var lastFeedback: Feedback?
    private(set) var batteries: [UInt8: BatteryState] = [:]
    private(set) var docked: Bool?
    private(set) var lastError: String?
    private(set) var counters = SessionCounters()
    private(set) var systemTracking = true
    /// The client that controls this stand (DockKit's "the app that turned tracking off"); what it
    /// changed reverts when it disconnects.
    private(set) var lease: Lease?
    private var writer: NIOAsyncChannelOutboundWriter<ByteBuffer>?
    private var link: (any Channel)?
    private var driver: any StandDriver
    private var motion: MotionController?
    private var tracking: StandTracking
    /// Client motion (velocity until its deadman, orientation, animation) pauses tracking until then.
    private var clientMotionUntil = -Double.infinity
    private var lastTrackingPublished = -Double.infinity
    private var ledState: LedMode?
    private var lastHeard = 0.0
    private var lastControlTick = 0.0
    private var lastProgressPublished = -Double.infinity
    private var lastInvalidReport = -Double.infinity
    private var linkPace = LinkPace.onTime

    init(endpoint: StandEndpoint, driver: any StandDriver, hub: EventHub, group: any EventLoopGroup, clock: DaemonClock,
         settings: SessionSettings, logger: Logger) {
        self.endpoint = endpoint; self.driver = driver; self.hub = hub; self.group = group; self.clock = clock
        self.settings = settings
        self.tracking = StandTracking(camera: settings.camera, seed: settings.trackingSeed, control: settings.trackingControl)
        var logger = logger
        logger[metadataKey: "stand"] = "\(endpoint)"
        self.logger = logger
    }

    private nonisolated var livenessName: String { "the control loop of \(endpoint)" }

    /// Blocks this actor, and the thread it runs on, for `seconds`: the watchdog's test stall.
    func stallForTesting(seconds: Double) {
        usleep(UInt32(min(seconds, 60) * 1e6))
    }

    /// The stable id: the serial number from the stand's HELLO_REPLY, never the device path.
    var standID: String? { identity?.serial }

    // MARK: - Link lifecycle

    /// Keeps the stand connected until the task is cancelled: connect, run, and after a loss
    /// reconnect with exponential backoff (0.25 s doubling to 8 s, PROTOCOL.md §5).
    func run() async {
        var backoff = 0.25
        while !Task.isCancelled {
            linkState = .connecting
            do {
                let channel = try await StandTransport.connect(endpoint, group: group)
                try await runLink(channel)
            } catch is CancellationError {
                break
            } catch {
                lastError = "\(error)"
            }
            if counters.handshakes > 0 && linkState == .connected { backoff = 0.25 }
            await linkLost()
            if Task.isCancelled { break }
            logger.info("reconnecting in \(backoff) s", metadata: ["reason": "\(lastError ?? "link closed")"])
            try? await Task.sleep(for: .seconds(backoff))
            backoff = min(8, backoff * 2)
            counters.reconnects += 1
        }
        linkState = .disconnected
    }

    private func runLink(_ channel: StandChannel) async throws {
        try await channel.executeThenClose { inbound, outbound in
            await self.attach(outbound, channel: channel.channel)
            let keepAlive = Task { await self.keepAlive() }
            defer { keepAlive.cancel() }
            for try await buffer in inbound {
                await self.received(buffer)
            }
            self.noteClosed("the stand closed the link (EOF or hangup)")
        }
    }

    private func attach(_ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel) async {
        writer = outbound
        link = channel
        let now = clock.now()
        lastHeard = now
        linkState = .handshaking
        await write(driver.start(at: now))
    }

    private func noteClosed(_ reason: String) {
        if lastError == nil || linkState == .connected { lastError = reason }
    }

    private func linkLost() async {
        settings.liveness.forget(livenessName)
        let wasConnected = linkState == .connected
        writer = nil
        link = nil
        linkState = .disconnected
        motion = nil
        if wasConnected {
            logger.warning("stand disconnected", metadata: ["reason": "\(lastError ?? "unknown")"])
            await hub.publish(topic: "stands", method: "stand.disconnected",
                              params: ["stand": JSONValue(standID ?? "\(endpoint)"), "reason": JSONValue(lastError ?? "link closed")],
                              time: clock.now())
        }
    }

    /// Closes the link from our side with a reason (silence, refused handshake).
    private func drop(_ reason: String) {
        lastError = reason
        logger.error("\(reason)")
        link?.close(promise: nil)
    }

    /// The driver's duties (handshake retries, heartbeats, resends, polls), the silence watchdog and
    /// a controller tick when feedback stalls, every 20 ms while the link is up.
    private func keepAlive() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))
            await tickKeepAlive()
        }
    }

    private func tickKeepAlive() async {
        guard link != nil else { return }
        let now = clock.now()
        settings.liveness.beat(livenessName, at: now)
        if now - lastHeard > settings.linkTimeout {
            drop("no valid frame for \(Int(settings.linkTimeout * 1000)) ms: link lost")
            return
        }
        let output = driver.tick(at: now)
        await write(output.bytes)
        for report in output.reports { await handle(report, now: now) }
        if linkState == .connected && now - lastControlTick > 0.05 {
            await runController(now: now)
        }
    }

    // MARK: - Sending

    /// A command to the stand, through the driver (which numbers, frames and acknowledges it).
    func send(_ message: Message) async {
        await write(driver.send(message, at: clock.now()))
    }

    private func write(_ bytes: [UInt8]) async {
        guard let writer, !bytes.isEmpty else { return }
        do {
            try await writer.write(ByteBuffer(bytes: bytes))
        } catch {
            lastError = "write failed: \(error)"
        }
    }

    // MARK: - Receiving

    private func received(_ buffer: ByteBuffer) async {
        let now = clock.now()
        let reports = driver.receive(Array(buffer.readableBytesView), at: now)
        for report in reports {
            if case .garbage(let error) = report {
                logger.debug("dropped bytes from the stand", metadata: ["error": "\(error.rawValue)"])
                continue
            }
            lastHeard = now
            await handle(report, now: now)
        }
    }

    private func handle(_ report: DriverReport, now: Double) async {
        if case .feedback(let feedback) = report, let lie = implausible(feedback) {
            // Never steer by a sample the stand cannot have measured: without fresh feedback the
            // controller's watchdog ends any motion and commands zero velocity.
            counters.invalidFeedback += 1
            if now - lastInvalidReport >= 1 {
                lastInvalidReport = now
                logger.error("rejected implausible feedback from the stand: \(lie)")
                await hub.publish(topic: "logs", method: "stand.fault",
                                  params: ["stand": JSONValue(standID ?? ""), "code": 0, "severity": 2,
                                           "text": JSONValue("rejected implausible feedback: \(lie)")], time: now)
            }
            return
        }
        switch report {
        case .ready(let id, let caps):
            identity = id
            capabilities = caps
            guard linkState == .handshaking else { return }
            motion = MotionController(capabilities: caps, configuration: settings.motion)
        case .feedback(let feedback) where linkState == .handshaking && motion != nil:
            // Connected once the stand reports where it is: only then can it be steered.
            lastFeedback = feedback
            motion?.feedback(feedback, at: now)
            linkState = .connected
            lastError = nil
            counters.handshakes += 1
            logger.info("stand connected", metadata: ["serial": "\(identity?.serial ?? "?")", "model": "\(identity?.model ?? "?")",
                                                      "firmware": "\(identity?.firmware ?? "?")", "driver": "\(driver.name)"])
            await hub.publish(topic: "stands", method: "stand.connected", params: describe(), time: now)
            ledState = nil
            await applyLed()
        case .feedback(let feedback):
            lastFeedback = feedback
            counters.feedbackFrames += 1
            await controlTick(feedback: feedback, now: now)
        case .imu(let sample):
            tracking.recordImu(sample, time: now)
        case .event(let event):
            await standEvent(event, now: now)
        case .battery(let state):
            batteries[state.index] = state
            await hub.publish(topic: "battery", method: "battery.state", params: batteryJSON(state), time: now)
        case .fault(let fault):
            counters.faults += 1
            logger.warning("stand fault", metadata: ["code": "\(fault.code)", "severity": "\(fault.severity)", "text": "\(fault.text)"])
            await hub.publish(topic: "logs", method: "stand.fault",
                              params: ["stand": JSONValue(standID ?? ""), "code": JSONValue(fault.code),
                                       "severity": JSONValue(fault.severity), "text": JSONValue(fault.text)], time: now)
        case .refused(let command, let reason):
            logger.warning("the stand refused a command", metadata: ["type": "\(command)", "reason": "\(reason)"])
            await hub.publish(topic: "logs", method: "stand.fault",
                              params: ["stand": JSONValue(standID ?? ""), "code": 0, "severity": 2,
                                       "text": JSONValue("command 0x\(String(command, radix: 16)) refused: \(reason)")], time: now)
        case .garbage:
            break
        case .rejected(let reason):
            // Placeholder until the stand engine counts and publishes it (issue 11): logged only.
            logger.warning("rejected a report from the stand", metadata: ["reason": "\(reason)"])
        case .fatal(let reason):
            drop(reason)
        }
    }

    /// Why a FEEDBACK frame cannot be true, or nil: a non-finite value, a limited axis far outside its
    /// range, a speed far beyond the axis's maximum.
    private func implausible(_ feedback: Feedback) -> String? {
        for a in feedback.axes {
            guard a.position.isFinite, a.velocity.isFinite else { return "\(a.axis) reported \(a.position) rad, \(a.velocity) rad/s" }
            guard let c = capabilities?.axis(a.axis) else { continue }
            if !c.continuous && (a.position < c.min - 0.2 || a.position > c.max + 0.2) {
                return "\(a.axis) at \(a.position) rad, outside its range \(c.min)…\(c.max)"
            }
            if abs(a.velocity) > 3 * c.maxSpeed + 0.5 {
                return "\(a.axis) at \(a.velocity) rad/s, its maximum is \(c.maxSpeed)"
            }
        }
        return nil
    }

    // MARK: - Control loop: one step per FEEDBACK frame

    private func controlTick(feedback: Feedback, now: Double) async {
        motion?.feedback(feedback, at: now)
        let yaw = feedback.axis(.yaw).map { Double($0.position) } ?? 0
        let pitch = feedback.axis(.pitch).map { Double($0.position) } ?? 0
        tracking.recordFeedback(time: now, yaw: yaw, pitch: pitch)
        await steerByTracking(yaw: yaw, pitch: pitch, now: now)
        await runController(now: now)
        await hub.publish(topic: "motion", method: "motion.state", params: motionJSON(feedback, now: now), time: now)
    }

    /// One controller step: send what it asks, publish its progress. Runs on every FEEDBACK, right
    /// after a command (so it acts without waiting for the next FEEDBACK), and from the keep-alive
    /// timer when feedback stalls, so the deadman and the feedback watchdog still act.
    private func runController(now: Double) async {
        guard var controller = motion else { return }
        await noteRoundTrip(now: now)
        controller.setRoundTrip(driver.counters.roundTrip.smoothed ?? 0)
        let output = controller.tick(at: now)
        motion = controller
        lastControlTick = now
        for message in output.messages { await send(message) }
        for progress in output.progress { await publishProgress(progress, now: now) }
    }

    /// How late the stand answers, as reported: on time, later than the protocol's 50 ms (a
    /// congested radio, busy firmware), or too late for the controller to steer across.
    enum LinkPace: Comparable { case onTime, late, tooLateToSteer }

    /// Reports each change of the stand's pace; the controller predicts across the delay, or stops.
    private func noteRoundTrip(now: Double) async {
        guard let roundTrip = driver.counters.roundTrip.smoothed else { return }
        // Hysteresis (a fifth below each threshold) so a round trip at the edge does not flap.
        func pace(margin: Double) -> LinkPace {
            roundTrip > settings.motion.maxRoundTrip * margin ? .tooLateToSteer : roundTrip > 0.05 * margin ? .late : .onTime
        }
        let next = pace(margin: 1) > linkPace ? pace(margin: 1) : pace(margin: 0.8) < linkPace ? pace(margin: 0.8) : linkPace
        guard next != linkPace else { return }
        linkPace = next
        let ms = Int((roundTrip * 1000).rounded())
        let text = switch next {
        case .onTime: "the stand answers on time again: round trip \(ms) ms"
        case .late: "the stand answers late: round trip \(ms) ms (the protocol promises ACKs within 50 ms; a busy host adds to it); motion predicts across it"
        case .tooLateToSteer: "the stand answers late: round trip \(ms) ms, too late to steer: motion stops and is refused until it recovers"
        }
        if next == .onTime { logger.notice("\(text)") } else { logger.warning("\(text)") }
        await hub.publish(topic: "logs", method: "stand.fault",
                          params: ["stand": JSONValue(standID ?? ""), "code": 0, "severity": JSONValue(next == .onTime ? 0 : next == .late ? 1 : 2),
                                   "text": JSONValue(text)], time: now)
    }

    // MARK: - System tracking

    /// While observations stream in and tracking is on (or the lease holder feeds its own), the
    /// tracking controller drives the motors in velocity mode, unless a client's motion is running.
    private func steerByTracking(yaw: Double, pitch: Double, now: Double) async {
        guard systemTracking || lease != nil, var controller = motion, now >= clientMotionUntil else { return }
        switch controller.state.activity {
        case .orientation, .animation: return
        case .idle, .velocity: break
        }
        var positions: [Axis: Double] = [:]
        if capabilities?.axis(.yaw) != nil { positions[.yaw] = yaw }
        if capabilities?.axis(.pitch) != nil { positions[.pitch] = pitch }
        guard let rates = tracking.command(positions: positions, at: now) else { return }
        try? controller.setVelocity(rates, at: now)
        motion = controller
        if now - lastTrackingPublished >= 0.1 {
            lastTrackingPublished = now
            await hub.publish(topic: "tracking", method: "tracking.state", params: tracking.stateJSON(stand: standID ?? "", time: now), time: now)
        }
        await applyLed()
    }

    /// Observations from a camera-side client: checked for rate, tracked, and acted on at the next tick.
    func observe(_ detections: [Detection], captureTime: Double?, camera: CameraModel?, client: Int, pid: Int32?) async throws(RPCError) -> JSONValue {
        guard linkState == .connected else { throw .notConnected(standID) }
        // With system tracking on, observations come from the system source (any client); with it
        // off, only the client that turned it off feeds its own (custom inference).
        if !systemTracking { try await acquire(client: client, pid: pid, force: false) }
        let now = clock.now()
        try tracking.checkRate(arrival: now)
        if let camera { tracking.setCamera(camera) }
        let capture = min(now, captureTime ?? now - settings.defaultCaptureLatency)
        tracking.observe(detections, captureTime: capture, now: now)
        return ["subjects": JSONValue(tracking.lastStep?.selection.ranked.count ?? 0), "in_frame": JSONValue(tracking.inFrame)]
    }

    func trackingState() -> JSONValue {
        tracking.stateJSON(stand: standID ?? "", time: clock.now())
    }

    func setFraming(_ mode: FramingMode, client: Int, pid: Int32?, force: Bool) async throws(RPCError) {
        try await acquire(client: client, pid: pid, force: force)
        tracking.setFraming(mode)
    }

    func setRegionOfInterest(_ rect: NormalizedRect, client: Int, pid: Int32?, force: Bool) async throws(RPCError) {
        try await acquire(client: client, pid: pid, force: force)
        tracking.setRegionOfInterest(rect)
    }

    func select(ids: [String], client: Int, pid: Int32?, force: Bool) async throws(RPCError) {
        try await acquire(client: client, pid: pid, force: force)
        try tracking.select(ids: ids)
    }

    func select(atX x: Double, y: Double, client: Int, pid: Int32?, force: Bool) async throws(RPCError) -> String {
        try await acquire(client: client, pid: pid, force: force)
        return try tracking.select(atX: x, y: y)
    }

    func setCamera(_ camera: CameraModel) { tracking.setCamera(camera) }

    // MARK: - Events

    private func standEvent(_ event: StandEvent, now: Double) async {
        guard let kind = event.knownKind else { return }
        var params: JSONValue = ["stand": JSONValue(standID ?? ""), "kind": JSONValue(kind.description)]
        switch kind {
        case .docked:
            docked = event.value == 1
            params = ["stand": JSONValue(standID ?? ""), "kind": event.value == 1 ? "docked" : "undocked"]
        case .trackingButton:
            params = ["stand": JSONValue(standID ?? ""), "kind": "tracking_button", "pressed": JSONValue(event.value == 1)]
            if event.value == 1 {
                systemTracking.toggle()
                await applyLed()
                await hub.publish(topic: "events", method: "tracking.changed",
                                  params: ["stand": JSONValue(standID ?? ""), "enabled": JSONValue(systemTracking), "source": "button"], time: now)
            }
        case .shutter, .flip:
            params = ["stand": JSONValue(standID ?? ""), "kind": JSONValue(kind.description), "pressed": JSONValue(event.value == 1)]
            if kind == .flip && event.value == 1 && systemTracking { await flipCamera(now: now) }
        case .zoom:
            params = ["stand": JSONValue(standID ?? ""), "kind": "zoom", "factor": JSONValue(event.factor)]
            tracking.applyZoom(Double(event.factor))
        case .customButton:
            params = ["stand": JSONValue(standID ?? ""), "kind": "button", "id": JSONValue(event.button), "pressed": JSONValue(event.value == 1)]
        }
        await hub.publish(topic: "events", method: "stand.event", params: params, time: now)
    }

    /// Camera flip (front ↔ back): the stand turns half a turn in yaw and tracking starts afresh on
    /// what the other camera sees.
    private func flipCamera(now: Double) async {
        guard capabilities?.axis(.yaw)?.continuous == true, var controller = motion else { return }
        tracking.forgetSubjects()
        if (try? controller.setOrientation([.yaw: Double.pi], relative: true, duration: nil, at: now)) != nil {
            motion = controller
            await runController(now: now)
        }
    }

    /// LED policy: off when not tracking, on when tracking, blinking while the subject is in frame.
    /// Sent only when it changes.
    private func applyLed() async {
        guard capabilities?.features.contains(.led) == true else { return }
        let mode: LedMode = !systemTracking ? .off : (tracking.isActive(at: clock.now()) && tracking.inFrame ? .blink : .on)
        guard mode != ledState else { return }
        ledState = mode
        await send(.led(LedCommand(mode: mode, onMs: 250, offMs: 250)))
    }

    func setSystemTracking(_ enabled: Bool, source: String = "api") async {
        systemTracking = enabled
        await applyLed()
        await hub.publish(topic: "events", method: "tracking.changed",
                          params: ["stand": JSONValue(standID ?? ""), "enabled": JSONValue(enabled), "source": JSONValue(source)], time: clock.now())
    }

    // MARK: - Control lease

    struct Lease: Sendable, Equatable {
        var client: Int
        var pid: Int32?
    }

    /// Takes (or keeps) control for `client`. Another client's lease is taken over only with `force`.
    func acquire(client: Int, pid: Int32?, force: Bool) async throws(RPCError) {
        if let held = lease, held.client != client {
            guard force else {
                let who = held.pid.map { "process \($0)" } ?? "another client"
                throw .busy("stand \(standID ?? "\(endpoint)") is controlled by \(who); pass \"force\": true to take over")
            }
            await hub.publish(topic: "events", method: "lease.changed",
                              params: ["stand": JSONValue(standID ?? ""), "client": JSONValue(client), "taken_from": JSONValue(held.client)],
                              time: clock.now())
        }
        lease = Lease(client: client, pid: pid)
    }

    /// The client is gone: if it held the lease, everything it changed reverts — motion stops, the
    /// stand's own limits return, system tracking resumes.
    func release(client: Int) async {
        guard lease?.client == client else { return }
        lease = nil
        if var controller = motion {
            controller.stop(at: clock.now())
            controller.resetLimits()  // queues LIMITS with the stand's own values
            motion = controller
            await runController(now: clock.now())
        }
        tracking.resetClientSettings()
        if !systemTracking { await setSystemTracking(true, source: "lease released") }
        logger.info("client \(client) released its lease: changes reverted")
    }

    // MARK: - Motion commands from clients

    private func withController<T>(_ body: (inout MotionController, Double) throws(MotionError) -> T) async throws(RPCError) -> T {
        guard linkState == .connected, var controller = motion else { throw .notConnected(standID) }
        let now = clock.now()
        let result: T
        do {
            result = try body(&controller, now)
        } catch {
            throw RPCError(motion: error)
        }
        motion = controller
        await runController(now: now)
        return result
    }

    func velocity(_ rates: [Axis: Double]) async throws(RPCError) {
        clientMotionUntil = clock.now() + settings.motion.deadman
        try await withController { c, now throws(MotionError) in try c.setVelocity(rates, at: now) }
    }

    func orient(_ target: [Axis: Double], relative: Bool, duration: Double?) async throws(RPCError) -> MotionID {
        try await withController { c, now throws(MotionError) in try c.setOrientation(target, relative: relative, duration: duration, at: now) }
    }

    func play(_ animation: Animation) async throws(RPCError) -> MotionID {
        try await withController { c, now throws(MotionError) in try c.play(animation, at: now) }
    }

    func setLimits(_ limits: [Axis: LimitRequest]) async throws(RPCError) {
        try await withController { c, _ throws(MotionError) in try c.setLimits(limits) }
    }

    func cancel(_ id: MotionID) async throws(RPCError) {
        let found = try await withController { c, now throws(MotionError) in c.cancel(id, at: now) }
        if !found { throw .invalidParameter("no running motion \(id.rawValue)") }
    }

    func stop() async {
        guard var controller = motion else {
            await send(.stop)
            return
        }
        controller.stop(at: clock.now())
        motion = controller
        await runController(now: clock.now())
    }

    /// On daemon shutdown: the stand is told to stop before the link closes.
    func shutdown() async {
        guard linkState == .connected else { return }
        await stop()
        try? await Task.sleep(for: .milliseconds(30))
    }

    /// Running progress goes out at most 10 times a second; final states always.
    private func publishProgress(_ progress: MotionProgress, now: Double) async {
        if progress.state == .running {
            guard now - lastProgressPublished >= 0.1 else { return }
            lastProgressPublished = now
        }
        await hub.publish(topic: "motion", method: "motion.progress",
                          params: ["stand": JSONValue(standID ?? ""), "id": JSONValue(progress.id.rawValue),
                                   "fraction": JSONValue(progress.fraction), "state": JSONValue(progress.state.name),
                                   "reason": progress.state.reason.map { JSONValue.string($0) } ?? .null], time: now)
    }

    // MARK: - Descriptions for the API

    func describe() -> JSONValue {
        var result: [String: JSONValue] = [
            "id": JSONValue(standID ?? ""), "endpoint": JSONValue("\(endpoint)"), "state": JSONValue(linkState.rawValue),
            "system_tracking": JSONValue(systemTracking), "driver": JSONValue(driver.name),
            "docked": docked.map { JSONValue.bool($0) } ?? .null,
            "last_error": lastError.map { JSONValue.string($0) } ?? .null,
        ]
        if let id = identity {
            result["identity"] = ["serial": JSONValue(id.serial), "model": JSONValue(id.model), "firmware": JSONValue(id.firmware),
                                  "hardware": JSONValue(id.hardware), "protocol": JSONValue(id.protocolVersion)]
        }
        if let caps = capabilities { result["capabilities"] = capabilitiesJSON(caps) }
        return .object(result)
    }

    func counterJSON() -> JSONValue {
        let link = driver.counters
        let d = link.decoder
        return ["frames": JSONValue(d.frames), "bytes": JSONValue(d.bytes), "sequence_gaps": JSONValue(d.sequenceGaps),
                "errors": .object(Dictionary(uniqueKeysWithValues: FrameError.allCases.map { ($0.rawValue, JSONValue(d.errors[$0] ?? 0)) })),
                "reconnects": JSONValue(counters.reconnects), "handshakes": JSONValue(counters.handshakes),
                "nacks": JSONValue(link.refused), "faults": JSONValue(counters.faults), "feedback_frames": JSONValue(counters.feedbackFrames),
                "retries": JSONValue(link.retries), "commands_failed": JSONValue(link.commandsFailed),
                "invalid_feedback": JSONValue(counters.invalidFeedback),
                "round_trip_ms": link.roundTrip.smoothed.map { JSONValue(($0 * 1e4).rounded() / 10) } ?? .null,
                "round_trip_max_ms": JSONValue((link.roundTrip.largest * 1e4).rounded() / 10)]
    }

    func batteryList() -> JSONValue { .array(batteries.keys.sorted().compactMap { batteries[$0].map(batteryJSON) }) }

    func motionSnapshot() -> JSONValue? { lastFeedback.map { motionJSON($0, now: clock.now()) } }

    private func batteryJSON(_ state: BatteryState) -> JSONValue {
        let names = capabilities?.batteries ?? []
        let name = Int(state.index) < names.count ? names[Int(state.index)] : "battery \(state.index)"
        return ["stand": JSONValue(standID ?? ""), "name": JSONValue(name), "level": JSONValue(state.level),
                "charge": JSONValue(state.charge.description), "low": JSONValue(state.low)]
    }

    private func motionJSON(_ feedback: Feedback, now: Double) -> JSONValue {
        var positions: [String: JSONValue] = [:], velocities: [String: JSONValue] = [:]
        for a in feedback.axes {
            positions[a.axis.description] = JSONValue(a.position)
            velocities[a.axis.description] = JSONValue(a.velocity)
        }
        return ["stand": JSONValue(standID ?? ""), "time": JSONValue(now), "stand_time_us": JSONValue(feedback.timeUs),
                "positions": .object(positions), "velocities": .object(velocities)]
    }
}

/// What the session counts; the link's own counters (frames, errors, resends) are the driver's.
struct SessionCounters: Sendable {
    var reconnects = 0
    var handshakes = 0
    var faults = 0
    var feedbackFrames = 0
    var invalidFeedback = 0
}

/// What the daemon's configuration sets for every stand session.
struct SessionSettings: Sendable {
    var heartbeatTimeoutMs: UInt16 = 500
    var linkTimeout = 1.0
    /// The controller's feedback watchdog is 10 periods here rather than the protocol's 3: on a busy
    /// host dockd's own scheduling can delay a FEEDBACK by tens of milliseconds.
    var motion: MotionConfiguration = {
        var m = MotionConfiguration()
        m.feedbackTimeoutPeriods = 10
        return m
    }()
    var camera = CameraModel(horizontalFieldOfView: 70 * .pi / 180, verticalFieldOfView: 43 * .pi / 180)
    var trackingSeed: UInt64 = 1
    var trackingControl = TrackingControlConfiguration.tuned
    /// Assumed age of a frame whose observations come without a capture timestamp, s.
    var defaultCaptureLatency = 0.05
    /// Where each connected stand's control loop beats for the systemd watchdog.
    var liveness = Liveness()
}

func capabilitiesJSON(_ caps: Capabilities) -> JSONValue {
    var buttons: [JSONValue] = []
    let names: [(Buttons, String)] = [(.tracking, "tracking"), (.shutter, "shutter"), (.flip, "flip"), (.zoom, "zoom"), (.custom, "custom")]
    for (bit, name) in names where caps.buttons.contains(bit) { buttons.append(JSONValue(name)) }
    return [
        "feedback_hz": JSONValue(caps.feedbackHz), "imu_hz": JSONValue(caps.imuHz),
        "imu": JSONValue(caps.features.contains(.imu)), "led": JSONValue(caps.features.contains(.led)),
        "led_color": JSONValue(caps.features.contains(.ledColor)), "docked_sensor": JSONValue(caps.features.contains(.dockedSensor)),
        "buttons": .array(buttons), "custom_buttons": JSONValue(caps.customButtons),
        "batteries": .array(caps.batteries.map { JSONValue.string($0) }),
        "axes": .array(caps.axes.map { a in
            ["axis": JSONValue(a.axis.description), "continuous": JSONValue(a.continuous),
             "min": a.continuous ? .null : JSONValue(a.min), "max": a.continuous ? .null : JSONValue(a.max),
             "max_speed": JSONValue(a.maxSpeed), "max_accel": JSONValue(a.maxAccel), "counts_per_rev": JSONValue(a.countsPerRev)]
        }),
    ]
}
