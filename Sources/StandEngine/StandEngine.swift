import DockCore
import DockDrivers
import DockProtocol
import DockTracking

/// Everything dockd decides about one stand, as a pure state machine: `(event, now) → effects`.
/// The link's bytes, client commands and timer ticks go in with the time they happened; bytes to
/// write, notifications, replies and log lines come out. No I/O, no clock reads, no awaits: the
/// daemon's shell only moves bytes and time, and tests and benchmarks run this same engine in
/// virtual time against the simulated stand.
///
/// What lives here: the motion controller (held in the `StandConnection`) and its control tick,
/// tracking's and a sweep's steps, what reverts when a lease ends, the plausibility checks on what
/// the stand reports, and what is re-sent after a reconnect. Parts of their own, each a pure
/// reducer: the link's life (`LinkSupervisor`: handshake, silence, pace); whether a command may act
/// (`CommandGate`: the lease, a stop that holds, refused drives, and the one queue of replies
/// awaiting the stand's acknowledgement); who steers (`Steering`: a client's motion or tracking,
/// the LED, the phase published); what the stand said of itself (`StandStatus`).
public struct StandEngine: Sendable {
    public enum Event: Sendable {
        /// The transport is open: the driver starts its handshake.
        case linkOpened
        case received([UInt8])
        /// The transport closed (EOF, hangup, error, or the `closeLink` the engine asked for).
        case linkClosed(reason: String)
        /// The transport could not be opened (no such device, refused, busy).
        case connectFailed(reason: String)
        /// The timer: call once `nextTick` has come (an earlier call does no harm).
        case tick
        /// `token` comes back with the reply (nil: a JSON-RPC notification, no reply wanted).
        case command(EngineCommand, from: ClientRef, force: Bool, token: Int?)
        /// A client disconnected: if it held the lease, what it changed reverts.
        case clientGone(Int)
        /// The daemon is stopping: the motors stop; `stopConfirmed` tells when the stand has it.
        case shutdown
        /// The configuration was reloaded: its camera and lost-subject behaviour apply from now on.
        case configure(camera: CameraModel, lostBehaviour: LostSubjectBehaviour, lostHold: Double)
        /// New defaults (an administrator's `defaults.set`): in force at once while no client holds
        /// the lease, and what a lease's end returns to.
        case defaults(StandDefaults)
    }

    /// The controller steps from the timer once no FEEDBACK has stepped it for this long (a feedback
    /// stream that stalls or comes slower) while the stand moves: the deadman, the feedback watchdog
    /// and a trajectory still act, s.
    public static let controlGap = 0.05
    /// How often a driver that names no deadline (`StandDriver.nextDeadline` nil: its polls and
    /// timeouts are judged at every tick) is ticked, s.
    public static let driverTickInterval = 0.02
    /// How far past a limit judged with `>` (the link's silence, the control gap) its tick is due.
    private static let pastLimit = 1e-6

    public let settings: EngineSettings
    /// The name used before the stand has said who it is (its endpoint).
    public let fallbackName: String
    public var linkState: LinkState { link.state }
    /// What the stand has said about itself: who it is, what it can do, where it last was.
    private var status = StandStatus()
    public var identity: StandIdentity? { status.identity }
    public var capabilities: Capabilities? { status.capabilities }
    public var lastFeedback: (feedback: Feedback, time: Double)? { status.lastFeedback }
    public var docked: Bool? { status.docked }
    public var lastError: String? { link.lastError }
    /// The stand last refused dockd's protocol version (or spoke another): until it says otherwise
    /// the host asks again only after `ProtocolTiming.incompatibleRetry`.
    public private(set) var incompatible = false
    /// The link last closed was closed by the driver to decide again what the stand is
    /// (`DriverReport.reconnect`) after its handshake: the host keeps backing off.
    public private(set) var closedToDecideAgain = false
    public var systemTracking: Bool { steering.systemTracking }
    /// What the stand does while no client holds the lease.
    public private(set) var defaults: StandDefaults
    public private(set) var counters = EngineCounters()
    /// The latest fault reported about the stand (by it or by dockd), with its time.
    public var lastFault: (report: FaultReport, time: Double)? { status.lastFault }
    /// Whether a command may act now (the lease, a stop, refused drives), and the replies that
    /// wait for the stand's acknowledgement.
    private var gate = CommandGate()
    private var driver: any StandDriver
    /// The stand from its READY until the link closes: the controller that steers it lives here.
    /// Changed in place (`connection!.motion.…` behind a nil check): a controller copied out and
    /// stored back would copy its buffers at every change.
    private var connection: StandConnection?
    public private(set) var tracking: TrackingLoop
    /// Who steers, a client or tracking, and what the LED and the phase say.
    private var steering: Steering
    private var lastTrackingPublished = -Double.infinity
    /// A client's lost-subject policy (nil: the configuration's `lost_behaviour`).
    private var lostWatch: LostSubjectWatch?
    private var lastControlTick = -Double.infinity
    private var lastProgressPublished = -Double.infinity
    /// The link's life: handshake, silence, pace.
    private var link: LinkSupervisor

    public init(driver: any StandDriver, settings: EngineSettings, fallbackName: String) {
        self.driver = driver
        self.settings = settings
        self.fallbackName = fallbackName
        link = LinkSupervisor(timeout: settings.linkTimeout, maxRoundTrip: settings.motion.maxRoundTrip)
        defaults = settings.defaults
        steering = Steering(systemTracking: settings.defaults.systemTracking)
        tracking = TrackingLoop(camera: settings.camera, seed: settings.trackingSeed, settings: settings.tracking)
        tracking.resetClientSettings(to: settings.defaults)
    }

    /// The stable id: the serial number the stand reported, never the device path.
    public var standID: String? { identity?.serial }
    private var name: String { standID ?? fallbackName }

    /// The driver has the last STOP confirmed by the stand (ACK, completion, or at rest).
    public var stopConfirmed: Bool { linkState != .connected || driver.stopConfirmed }

    /// When the engine next needs `.tick` (host seconds; at or before now: at once), nil while the
    /// link is closed. Nothing is due between FEEDBACKs of a stand at rest but the driver's deadlines
    /// (its heartbeat, an answer, a resend; every `driverTickInterval` for a driver that names none)
    /// and the link's silence limit; while the stand moves, also the control step a stalled feedback
    /// stream leaves undone and the feedback watchdog; and the bounded wait of a STOP or LIMITS reply.
    public var nextTick: Double? {
        guard linkState != .disconnected else { return nil }
        var due = min(link.silenceDue + Self.pastLimit, driver.nextDeadline ?? link.lastTick + Self.driverTickInterval)
        if moving {
            due = min(due, lastControlTick + Self.controlGap + Self.pastLimit)
            if let watchdog = pendingFeedbackWatchdog { due = min(due, watchdog) }
        }
        return min(due, gate.nextDeadline ?? due)
    }

    /// The controller has a motion or velocity to carry on (at rest it sends nothing, and every
    /// command runs its step at once).
    private var moving: Bool {
        guard linkState == .connected, let connection else { return false }
        return !connection.motion.isIdle
    }

    /// The time the feedback watchdog is due, until a control step has run at or after it: the
    /// silence is then judged when due (PROTOCOL.md §5), not at the next control step.
    private var pendingFeedbackWatchdog: Double? {
        guard linkState == .connected, let due = connection?.motion.feedbackWatchdogTime.map({ $0 + Self.pastLimit }), due > lastControlTick else { return nil }
        return due
    }

    // MARK: - Events

    public mutating func handle(_ event: Event, at now: Double) -> EngineOutput {
        var out = EngineOutput()
        switch event {
        case .linkOpened: linkOpened(at: now, &out)
        case .received(let bytes): received(bytes, at: now, &out)
        case .linkClosed(let reason): linkClosed(reason, at: now, &out)
        case .connectFailed(let reason): out.append(link.handle(.connectFailed(reason: reason), at: now))
        case .tick: tick(at: now, &out)
        case .command(let command, let client, let force, let token): run(command, from: client, force: force, token: token, at: now, &out)
        case .clientGone(let client): release(client, reason: "client \(client) disconnected", at: now, &out)
        case .shutdown: shutdown(at: now, &out)
        case .configure(let camera, let lostBehaviour, let lostHold):
            tracking.configure(camera: camera, lostBehaviour: lostBehaviour, lostHold: lostHold)
        case .defaults(let new):
            defaults = new
            if gate.lease.holder == nil { applyDefaults(source: "defaults", at: now, &out) }
        }
        // What the stand has acknowledged answers waiting replies only: no consequence beside them.
        _ = gate.handle(.state(stopConfirmed: driver.stopConfirmed, limitsAcknowledged: !driver.awaitsAcknowledgement(of: .limits),
                               connected: linkState == .connected, stand: standID ?? fallbackName), at: now, &out)
        publishPhase(at: now, &out)
        status.notePublished(out, at: now)
        return out
    }

    // MARK: - Link lifecycle

    private mutating func linkOpened(at now: Double, _ out: inout EngineOutput) {
        counters.linksOpened += 1
        out.append(link.handle(.opened(framesDecoded: driver.counters.decoder.frames), at: now))
        out.write(driver.start(at: now))
    }

    private mutating func linkClosed(_ reason: String, at now: Double, _ out: inout EngineOutput) {
        // Once shut down (dockd stopping, or letting the stand go), the close is dockd's own.
        out.append(link.handle(.closed(reason: reason, byDockd: gate.shuttingDown), at: now))
        connection = nil
        gate.linkClosed()
        // Nothing waiting will be acknowledged now: each reply is answered at once.
        _ = gate.handle(.state(stopConfirmed: false, limitsAcknowledged: false, connected: false, stand: name), at: now, &out)
    }

    private mutating func tick(at now: Double, _ out: inout EngineOutput) {
        guard linkState != .disconnected else { return }
        // A mute stand is never heard: the link is up for as long as it is open.
        if driver.standIsMute { out.append(link.handle(.report, at: now)) }
        let supervised = link.handle(.tick, at: now)
        out.append(supervised)
        if supervised.closeLink != nil { return }
        let output = driver.tick(at: now)
        out.write(output.bytes)
        for report in output.reports { handle(report, at: now, &out) }
        status.noteSpeedScale(driver.counters.speedScale, &out)
        let watchdogDue = pendingFeedbackWatchdog.map { now >= $0 } ?? false
        if linkState == .connected && (now - lastControlTick > Self.controlGap || watchdogDue) {
            runController(at: now, &out)
        }
    }

    private mutating func received(_ bytes: [UInt8], at now: Double, _ out: inout EngineOutput) {
        let reports = driver.receive(bytes, at: now)
        // Any valid frame is a sign of life, whether or not it carries a report (a heartbeat, an
        // ACK, a frame during the handshake).
        out.append(link.handle(.framesDecoded(driver.counters.decoder.frames), at: now))
        for report in reports {
            if case .garbage(let error) = report {
                out.log(.debug, "dropped bytes from the stand", ["error": error.rawValue])
                continue
            }
            out.append(link.handle(.report, at: now))
            handle(report, at: now, &out)
        }
    }

    private mutating func handle(_ report: DriverReport, at now: Double, _ out: inout EngineOutput) {
        switch report {
        case .ready(let id, let caps):
            status.identity = id
            status.capabilities = caps
            incompatible = false
            guard linkState == .handshaking else { return }
            var controller = MotionController(capabilities: caps, configuration: settings.motion,
                                              standClosesPositionLoop: driver.closesPositionLoop, positionIsPolled: driver.positionIsPolled, fineApproach: driver.wantsFineApproach)
            restoreLimits(into: &controller, &out)
            connection = StandConnection(motion: controller)
            tracking.setContinuousAxes(Set(caps.axes.filter(\.continuous).map(\.axis)))
        case .feedback(let feedback):
            if let lie = FeedbackCheck.implausible(feedback, capabilities: status.capabilities) {
                // Never steer by a sample the stand cannot have measured: without fresh feedback the
                // controller's watchdog ends any motion and commands zero velocity.
                counters.implausibleReports += 1
                status.implausible("rejected implausible feedback: \(lie)", at: now, &out)
                return
            }
            if linkState == .handshaking, connection != nil {
                connected(feedback, at: now, &out)
            } else if linkState == .connected {
                status.lastFeedback = (feedback, now)
                counters.feedbackFrames += 1
                controlTick(feedback: feedback, at: now, &out)
            }
        case .imu(let sample):
            tracking.recordImu(sample, time: now)
        case .event(let event):
            standEvent(event, at: now, &out)
        case .battery(let state):
            status.battery(state, &out)
        case .fault(let fault):
            counters.faults += 1
            out.log(.warning, "stand fault", ["code": "\(fault.code)", "severity": "\(fault.severity)", "text": fault.text])
            out.notifications.append(.fault(FaultReport(source: .stand, code: Int(fault.code), severity: Int(fault.severity), text: fault.text)))
        case .refused(let command, let reason):
            refused(command: command, reason: reason, at: now, &out)
        case .cameraPreset(let request, let result):
            if case .failure(let refusal) = result { out.log(.warning, "the camera refused a preset request", ["request": "\(request)", "reason": refusal.description]) }
            _ = gate.handle(.cameraPreset(request, result), at: now, &out)
        case .rejected(let problem):
            counters.implausibleReports += 1
            status.implausible("rejected an impossible report: \(problem)", at: now, &out)
        case .garbage:
            break
        case .fatal(let reason):
            out.append(link.handle(.drop(reason: reason), at: now))
        case .reconnect(let reason):
            closedToDecideAgain = true
            out.append(link.handle(.drop(reason: reason), at: now))
        case .incompatible(let reason):
            incompatible = true
            out.append(link.handle(.drop(reason: "\(reason); asking again in \(Int(ProtocolTiming.incompatibleRetry)) s or when it is plugged in again"), at: now))
        }
    }

    /// Connected once the stand reports where it is: only then can it be steered.
    private mutating func connected(_ feedback: Feedback, at now: Double, _ out: inout EngineOutput) {
        status.lastFeedback = (feedback, now)
        connection?.motion.feedback(feedback, at: now)
        out.append(link.handle(.handshakeDone, at: now))
        counters.handshakes += 1
        closedToDecideAgain = false
        out.log(.info, "stand connected", ["serial": identity?.serial ?? "?", "model": identity?.model ?? "?",
                                          "firmware": identity?.firmware ?? "?", "driver": driver.name])
        out.notifications.append(.connected(description))
        out.append(steering.handle(.connected, at: now))
        applyLed(at: now, &out)
    }

    /// A stand forgets host limits at a new HELLO: the lease holder's are applied again.
    private func restoreLimits(into controller: inout MotionController, _ out: inout EngineOutput) {
        guard !gate.lease.limits.isEmpty else { return }
        do {
            try controller.setLimits(gate.lease.limits)
        } catch {
            out.log(.warning, "the lease holder's limits no longer fit the stand: \(error)")
        }
    }

    // MARK: - Control loop

    private mutating func controlTick(feedback: Feedback, at now: Double, _ out: inout EngineOutput) {
        connection?.motion.feedback(feedback, at: now)
        // Tracking's aim: the FEEDBACK carried across the link's round trip (a camera polled over
        // a slow link reports where it was, not where it is; on time, the two are the same).
        let predicted = connection?.motion.predictedAngles(at: now) ?? AxisValues()
        let yaw = predicted[.yaw] ?? feedback.axis(.yaw).map { Double($0.position) } ?? 0
        let pitch = predicted[.pitch] ?? feedback.axis(.pitch).map { Double($0.position) } ?? 0
        let zoom = predicted[.zoom] ?? feedback.axis(.zoom).map { Double($0.position) } ?? 1
        tracking.recordFeedback(time: now, yaw: yaw, pitch: pitch, zoom: zoom)
        if connection?.panPlanner != nil {
            steerByPan(yaw: yaw, pitch: pitch, at: now, &out)
        } else {
            steerByTracking(yaw: yaw, pitch: pitch, at: now, &out)
        }
        runController(at: now, &out)
        out.notifications.append(.motionState(StandStatus.motionReport(feedback, at: now, roundTrip: driver.counters.roundTrip.smoothed)))
    }

    /// One controller step: send what it asks, publish its progress. Runs on every FEEDBACK, right
    /// after a command or an observation (so it acts without waiting for the next FEEDBACK), and
    /// from the timer when feedback stalls, so the deadman and the feedback watchdog still act.
    private mutating func runController(at now: Double, _ out: inout EngineOutput) {
        guard connection != nil else { return }
        // Read once: `driver.counters` copies all the driver's counters, dictionaries included.
        let roundTrip = driver.counters.roundTrip.smoothed
        if let roundTrip { out.append(link.handle(.roundTrip(roundTrip), at: now)) }
        connection!.motion.setRoundTrip(roundTrip ?? 0)
        let alreadyWrong = connection!.motion.wrongDirection != nil
        let output = connection!.motion.tick(at: now)
        lastControlTick = now
        if !alreadyWrong, let reason = connection!.motion.wrongDirection {
            out.log(.critical, reason)
            out.notifications.append(.fault(FaultReport(source: .dockd, code: DaemonFault.wrongDirection.rawValue, severity: 3, text: reason)))
        }
        for message in output.messages { out.write(driver.send(message, at: now)) }
        for progress in output.progress { publishProgress(progress, at: now, &out) }
    }

    /// Running progress goes out at most 10 times a second; final states always.
    private mutating func publishProgress(_ progress: MotionProgress, at now: Double, _ out: inout EngineOutput) {
        if progress.state == .running {
            guard now - lastProgressPublished >= 0.1 else { return }
            lastProgressPublished = now
        } else if case .failed(let reason) = progress.state {
            out.log(.warning, "\(progress.id) failed: \(reason)")
        }
        out.notifications.append(.motionProgress(progress))
    }

    // MARK: - Refusals

    /// A command the stand refused (NACK, or unacknowledged after every resend). Refused drives
    /// stop the motion and hold motion back for a while, so a stand that cannot move is not sent
    /// dozens of drives a second, and the next caller hears why.
    private mutating func refused(command: UInt8, reason: String, at now: Double, _ out: inout EngineOutput) {
        let type = MessageType(rawValue: command)
        let label = type.map { "\($0)".uppercased() } ?? "0x\(String(command, radix: 16))"
        out.log(.warning, "the stand refused a command", ["type": label, "reason": reason])
        out.notifications.append(.fault(FaultReport(source: .dockd, code: DaemonFault.commandRefused.rawValue, severity: 2,
                                                    text: "the stand refused \(label): \(reason)")))
        switch gate.handle(.refused(type, reason: reason), at: now, &out) {
        case .nothingMore:
            break
        case .limitsInForce(let limits):
            connection?.motion.resetLimits(informStand: false)
            try? connection?.motion.setLimits(limits, informStand: false)
        case .motionHeldBack(let reason):
            guard connection != nil else { return }
            connection!.motion.abort(reason: reason, at: now)
            runController(at: now, &out)
        }
    }

    // MARK: - System tracking

    /// While observations stream in and tracking is on (or the lease holder feeds its own), the
    /// tracking controller drives the motors in velocity mode, unless a client's motion runs, a
    /// stop holds, or the stand refuses drives.
    private mutating func steerByTracking(yaw: Double, pitch: Double, at now: Double, _ out: inout EngineOutput) {
        guard steering.trackingMayDrive(leaseHeld: gate.lease.holder != nil, at: now), let activity = connection?.motion.activity,
              !gate.holdsMotionBack(at: now) else { return }
        switch activity {
        case .orientation, .animation: return
        case .idle, .velocity: break
        }
        if steering.takeOver() { tracking.startAfresh(at: now) }
        let positions = status.steeredPositions(yaw: yaw, pitch: pitch)
        // Zoom only on a stand that declares it (the controller has limits for its axes only),
        // within the limits in force: a client's included.
        let zoomLimits = connection?.motion.limits(of: .zoom)
        // The loop's delay: a command shows in a FEEDBACK a round trip later, and a FEEDBACK is
        // steered by for a period until the next (a V4L2 or ONVIF camera's polls: 0.1 s). With the
        // round trip alone, a webcam 40 ms away each way hunted by ±2° about a still subject.
        // The declared period, not the interval measured: a camera's reads, taking turns with its
        // sets, come 0.15–0.3 s apart, and a gain cut for that left it creeping short of the subject.
        let loopDelay = (driver.counters.roundTrip.smoothed ?? 0) + (connection?.motion.period ?? 0)
        guard var rates = tracking.command(positions: positions, zoom: zoomLimits, loopDelay: loopDelay, at: now)
        else { return }
        if var watch = lostWatch {
            let limits = Dictionary(uniqueKeysWithValues: positions.keys.compactMap { axis in
                connection?.motion.limits(of: axis).map { (axis, $0.min...$0.max) }
            })
            if let policyRates = watch.rates(lastSeen: tracking.lastSeen, positions: positions, limits: limits, continuousAxes: status.continuousAxes, at: now) {
                // The policy steers pan and tilt; the shot's zoom (wide while the subject is lost) stays.
                rates.merge(policyRates) { _, policy in policy }
            }
            lostWatch = watch
        }
        if rates.values.allSatisfy({ $0 == 0 }) {
            // Framed and still: nothing to send (a still subject gets a still camera, and no
            // command stream), after one zero VELOCITY if it was moving.
            connection?.motion.endVelocity()
        } else {
            try? connection?.motion.setVelocity(rates, at: now)
        }
        applyLed(at: now, &out)
    }

    // MARK: - Sweeps and tours

    /// A sweep or tour steers the motors in velocity mode, as tracking would, while no stop holds
    /// and the stand takes drives; once it ends the stand comes to rest and tracking starts afresh
    /// where it points.
    private mutating func steerByPan(yaw: Double, pitch: Double, at now: Double, _ out: inout EngineOutput) {
        guard let activity = connection?.motion.activity, connection?.panPlanner != nil, !gate.holdsMotionBack(at: now) else { return }
        switch activity {
        case .orientation, .animation: return
        case .idle, .velocity: break
        }
        let positions = status.steeredPositions(yaw: yaw, pitch: pitch), continuous = status.continuousAxes
        if let rates = connection!.panPlanner!.rates(positions: positions, continuousAxes: continuous, at: now) {
            try? connection!.motion.setVelocity(rates, at: now)
        } else {
            out.log(.info, "\(connection!.panPlanner!.pan.phase.rawValue) ended")
            connection!.panPlanner = nil
            out.append(steering.handle(.clientTurned, at: now))
            connection!.motion.endVelocity()
        }
    }

    /// The person at the stand starts the configured sweep, or ends the sweep or tour running. The
    /// button needs no lease (as the tracking button), but a stop holds it back as any motion.
    private mutating func toggleButtonSweep(_ sweep: Sweep, at now: Double, _ out: inout EngineOutput) {
        if connection?.panPlanner != nil {
            endPan(at: now, &out)
            runController(at: now, &out)
            return
        }
        guard !gate.holdsMotionBack(at: now) else {
            out.log(.notice, "the custom button's sweep is held back: the stand is stopped or refuses drives")
            return
        }
        do {
            try startPan(.sweep(sweep), at: now, &out)
        } catch {
            out.log(.warning, "the custom button's sweep did not start: \(error)")
        }
    }

    /// Ends a sweep or tour (a client's motion, a stop, the lease's end take over from it).
    private mutating func endPan(at now: Double, _ out: inout EngineOutput) {
        guard connection?.panPlanner != nil else { return }
        connection?.panPlanner = nil
        out.append(steering.handle(.clientTurned, at: now))
        connection?.motion.endVelocity()
    }

    /// What the stand does about its subject now (`tracking.state`'s `phase`).
    public func phase(at now: Double) -> TrackingPhase {
        // A stop ends a sweep or tour (`stop(by:)`); drives the stand refuses only pause one.
        if let planner = connection?.panPlanner { return planner.pan.phase }
        // Neither tracking nor a policy steers then (`steerByTracking`), whatever moved the stand
        // before: the policy's phase would be stale, and a client's turn is not taken over.
        if gate.holdsMotionBack(at: now) { return .stopped }
        // A client's turn or a sweep ended: tracking starts afresh (at its next step) where the stand points.
        guard tracking.isActive(at: now), !steering.clientTurned else { return .tracking }
        if let watch = lostWatch { return watch.phase }
        if let seen = tracking.lastSeen, now - seen.time > LostSubjectPolicy.unseen { return .lostConfigured }
        return .tracking
    }

    /// The lost-subject policy a client set (nil: the configuration's `lost_behaviour`).
    public var lostPolicy: LostSubjectPolicy? { lostWatch?.policy }
    /// The sweep or tour running, and the tour's stop now.
    public var runningPan: (pan: Pan, stop: Int?)? { connection?.panPlanner.map { ($0.pan, $0.stopIndex) } }

    private mutating func publishPhase(at now: Double, _ out: inout EngineOutput) {
        if let changed = steering.publish(phase(at: now)) { out.notifications.append(changed) }
    }

    /// LED policy: off when not tracking, on when tracking, blinking while the subject is in frame.
    /// Sent only when it changes.
    private mutating func applyLed(at now: Double, _ out: inout EngineOutput) {
        guard linkState == .connected, capabilities?.features.contains(.led) == true else { return }
        guard let mode = steering.led(trackingActive: tracking.isActive(at: now), inFrame: tracking.inFrame) else { return }
        out.write(driver.send(.led(LedCommand(mode: mode, onMs: 250, offMs: 250)), at: now))
    }

    private mutating func setSystemTracking(_ enabled: Bool, source: String, at now: Double, _ out: inout EngineOutput) {
        out.append(steering.handle(.systemTracking(enabled, source: source), at: now))
        applyLed(at: now, &out)
    }

    // MARK: - Stand events

    private mutating func standEvent(_ event: StandEvent, at now: Double, _ out: inout EngineOutput) {
        guard let kind = event.knownKind else { return }
        let pressed = event.value == 1
        let report: EventReport.Kind
        switch kind {
        case .docked:
            status.docked = pressed
            report = .docked(pressed)
        case .trackingButton:
            report = .trackingButton(pressed: pressed)
            if pressed { setSystemTracking(!systemTracking, source: "button", at: now, &out) }
        case .shutter:
            report = .shutter(pressed: pressed)
        case .flip:
            report = .flip(pressed: pressed)
            if pressed && systemTracking { flipCamera(at: now, &out) }
        case .zoom:
            report = .zoom(factor: Double(event.factor))
            tracking.applyZoom(Double(event.factor))
        case .customButton:
            report = .button(id: Int(event.button), pressed: pressed)
            if pressed, let configured = settings.buttonSweep, configured.button == Int(event.button) { toggleButtonSweep(configured.sweep, at: now, &out) }
        }
        out.notifications.append(.event(EventReport(kind: report)))
    }

    /// Camera flip (front ↔ back): the stand turns half a turn in yaw and tracking starts afresh on
    /// what the other camera sees.
    private mutating func flipCamera(at now: Double, _ out: inout EngineOutput) {
        guard capabilities?.axis(.yaw)?.continuous == true, connection != nil else { return }
        tracking.forgetSubjects()
        if (try? connection!.motion.setOrientation([.yaw: Double.pi], relative: true, duration: nil, at: now)) != nil {
            runController(at: now, &out)
        }
    }

    // MARK: - Commands

    private mutating func run(_ command: EngineCommand, from client: ClientRef, force: Bool, token: Int?, at now: Double,
                              _ out: inout EngineOutput) {
        do throws(EngineError) {
            try gate.admit(command, from: client, force: force, stand: name, at: now, &out)
            if command.startsMotion { endPan(at: now, &out) }  // a client's motion, or a new sweep or tour, takes over
            if case .stop = command {
                stop(by: client, token: token, at: now, &out)
                return
            }
            if case .limits(let requests) = command {
                try setLimits(requests, token: token, at: now, &out)
                return
            }
            if case .cameraPreset(let request) = command {
                guard linkState == .connected else { throw .notConnected(stand: name) }
                guard driver.cameraPresets != nil else { throw .notSupported("the \(driver.name) driver keeps no presets in this camera") }
                gate.cameraPresetSent(request, token: token, deadline: now + settings.cameraPresetTimeout)
                out.write(driver.cameraPreset(request, at: now))
                return
            }
            out.reply(token, .success(try execute(command, from: client, at: now, &out)))
        } catch {
            out.reply(token, .failure(error))
        }
    }

    private mutating func execute(_ command: EngineCommand, from client: ClientRef, at now: Double,
                                  _ out: inout EngineOutput) throws(EngineError) -> CommandResult {
        switch command {
        case .setTracking(let enabled):
            setSystemTracking(enabled, source: "api", at: now, &out)
            return .tracking(enabled: enabled)
        case .velocity(let rates):
            try withController(at: now, &out) { c, now throws(MotionError) in try c.setVelocity(rates, at: now) }
            out.append(steering.handle(.clientVelocity(deadman: settings.motion.deadman), at: now))
            return .ok
        case .orient(let target, let relative, let duration, let tolerance):
            let id = try withController(at: now, &out) { c, now throws(MotionError) in
                try c.setOrientation(target, relative: relative, duration: duration, tolerance: tolerance, at: now)
            }
            out.append(steering.handle(.clientTurned, at: now))
            return .motion(id)
        case .play(let animation):
            return .motion(try withController(at: now, &out) { c, now throws(MotionError) in try c.play(animation, at: now) })
        case .limits:
            return .ok  // handled by `run`
        case .cancel(let id):
            let found = try withController(at: now, &out) { c, now throws(MotionError) in c.cancel(id, at: now) }
            guard found else { throw .invalidParameter("no running motion \(id.rawValue)") }
            return .ok
        case .resume:
            if try gate.resume(client, stand: name) {
                out.notifications.append(.stopChanged(stopped: false, by: client))
                out.log(.notice, "client \(client.id) resumed motion")
            }
            return .ok
        case .observe(let frame):
            return try observe(frame, from: client, at: now, &out)
        case .framing(let mode, let shot):
            if let mode { tracking.setFraming(mode) }
            if let shot { tracking.setShot(shot) }
            return .ok
        case .regionOfInterest(let rect):
            tracking.setRegionOfInterest(rect)
            return .ok
        case .select(let ids):
            try tracking.select(ids: ids)
            return .selected(ids)
        case .selectAt(let x, let y):
            return .selected([try tracking.select(atX: x, y: y)])
        case .camera(let camera):
            tracking.setCamera(camera)
            return .ok
        case .releaseLease:
            release(client.id, reason: "client \(client.id) released its lease", at: now, &out)
            return .ok
        case .stop, .cameraPreset:
            return .ok  // handled by `run`
        case .lostPolicy(let policy):
            lostWatch = LostSubjectWatch(policy: policy)
            return .ok
        case .pan(let pan):
            try startPan(pan, at: now, &out)
            return .ok
        case .endPan:
            endPan(at: now, &out)
            runController(at: now, &out)
            return .ok
        }
    }

    private mutating func startPan(_ pan: Pan, at now: Double, _ out: inout EngineOutput) throws(EngineError) {
        guard linkState == .connected, connection != nil, let feedback = lastFeedback?.feedback else { throw .notConnected(stand: standID ?? fallbackName) }
        if case .sweep = pan, capabilities?.axis(.yaw) == nil { throw .notSupported("a sweep turns the yaw axis, which this stand lacks") }
        for target in pan.targets {
            guard let limits = connection?.motion.limits(of: target.axis), !limits.continuous else { continue }
            guard target.angle >= limits.min - 1e-6, target.angle <= limits.max + 1e-6 else {
                throw .invalidParameter("\(target.axis) \(target.angle) rad is outside its limits \(limits.min)…\(limits.max) rad: the stand could never get there")
            }
        }
        connection?.panPlanner = PanPlanner(pan)
        let yaw = feedback.axis(.yaw).map { Double($0.position) } ?? 0
        let pitch = feedback.axis(.pitch).map { Double($0.position) } ?? 0
        steerByPan(yaw: yaw, pitch: pitch, at: now, &out)
        runController(at: now, &out)
    }

    private mutating func withController<T>(at now: Double, _ out: inout EngineOutput,
                                            _ body: (inout MotionController, Double) throws(MotionError) -> T) throws(EngineError) -> T {
        guard linkState == .connected, connection != nil else { throw .notConnected(stand: standID ?? fallbackName) }
        let result: T
        do {
            result = try body(&connection!.motion, now)
        } catch {
            throw EngineError(motion: error)
        }
        runController(at: now, &out)
        return result
    }

    /// Observations from a camera-side client: checked for rate, tracked, and acted on at once.
    private mutating func observe(_ frame: ObservedFrame, from client: ClientRef, at now: Double,
                                  _ out: inout EngineOutput) throws(EngineError) -> CommandResult {
        guard linkState == .connected else { throw .notConnected(stand: standID ?? fallbackName) }
        // With system tracking on, observations come from the system source (any client); with it
        // off, only the client that turned it off feeds its own (custom inference).
        if !systemTracking { try gate.admitObservations(from: client, stand: name) }
        let capture = min(now, frame.captureTime ?? now - settings.defaultCaptureLatency)
        // The camera's rate is its frames' capture times where the client gives them: on a loaded
        // machine frames reach dockd in bunches and late, and judged by arrival a steady 15 fps
        // camera was refused both ways. A frame without one is judged at its assumed capture time,
        // so that a camera stamping some frames and not others steps back by the difference of
        // latencies, not by the whole of its own.
        try tracking.checkRate(frameTime: capture)
        if let camera = frame.camera { tracking.setCamera(camera) }
        tracking.observe(frame.detections, captureTime: capture, now: now)
        // The tracking-state stream goes out about 10 times a second while observations come,
        // whether or not tracking drives the motors now (a stop, a client's motion).
        if now - lastTrackingPublished >= 0.1 {
            lastTrackingPublished = now
            out.notifications.append(.trackingState(trackingReport(at: now)))
        }
        if let feedback = lastFeedback {
            let yaw = feedback.feedback.axis(.yaw).map { Double($0.position) } ?? 0
            let pitch = feedback.feedback.axis(.pitch).map { Double($0.position) } ?? 0
            steerByTracking(yaw: yaw, pitch: pitch, at: now, &out)
            runController(at: now, &out)
        }
        return .observed(subjects: tracking.lastStep?.selection.ranked.count ?? 0, inFrame: tracking.inFrame)
    }

    /// Everything stops now and stays stopped until the issuer or the lease holder says otherwise.
    /// The reply waits for the stand to acknowledge the STOP (bounded).
    private mutating func stop(by client: ClientRef, token: Int?, at now: Double, _ out: inout EngineOutput) {
        let connected = linkState == .connected && connection != nil
        gate.stop(by: client, token: token, deadline: connected ? now + settings.stopConfirmationTimeout : nil)
        endPan(at: now, &out)
        out.notifications.append(.stopChanged(stopped: true, by: client))
        out.log(.notice, "client \(client.id) stopped the stand")
        guard connected else {
            out.reply(token, .success(.stopped(confirmed: false)))
            return
        }
        connection!.motion.stop(at: now)
        runController(at: now, &out)
    }

    /// New limits: the reply waits (bounded) for the stand's acknowledgement of the LIMITS, so a
    /// caller is never told "ok" for limits the stand refused.
    private mutating func setLimits(_ requests: [Axis: LimitRequest], token: Int?, at now: Double, _ out: inout EngineOutput) throws(EngineError) {
        try withController(at: now, &out) { c, _ throws(MotionError) in try c.setLimits(requests) }
        let deadline = driver.awaitsAcknowledgement(of: .limits) ? now + settings.acknowledgementTimeout : nil
        gate.limitsSent(requests, token: token, deadline: deadline, &out)
    }

    /// The client is gone or gave its lease back: if it held the lease, everything it changed
    /// reverts — motion stops, the stand's own limits return, system tracking resumes.
    private mutating func release(_ client: Int, reason: String, at now: Double, _ out: inout EngineOutput) {
        guard gate.release(client) else { return }
        lostWatch = nil
        endPan(at: now, &out)
        if connection != nil {
            connection!.motion.stop(at: now)
            connection!.motion.resetLimits()  // queues a LIMITS with the stand's own values per narrowed axis
            runController(at: now, &out)
        }
        applyDefaults(source: "lease released", at: now, &out)
        out.log(.info, "\(reason): its changes reverted")
    }

    /// The stand's defaults in force: framing, ROI, system tracking on or off.
    private mutating func applyDefaults(source: String, at now: Double, _ out: inout EngineOutput) {
        tracking.resetClientSettings(to: defaults)
        if systemTracking != defaults.systemTracking { setSystemTracking(defaults.systemTracking, source: source, at: now, &out) }
    }

    private mutating func shutdown(at now: Double, _ out: inout EngineOutput) {
        gate.shutDown()
        guard linkState == .connected, connection != nil else { return }
        connection?.panPlanner = nil
        connection!.motion.stop(at: now)
        runController(at: now, &out)
    }

    // MARK: - Reports

    public var description: StandDescription {
        StandDescription(id: standID ?? "", state: linkState, systemTracking: systemTracking, driver: driver.name, docked: docked,
                         lastError: lastError, identity: identity, capabilities: capabilities)
    }

    public var driverCounters: DriverCounters { driver.counters }
    /// Whether the driver waits for the stand's answer to something it sent (`LinkSession`).
    public var awaitsAnswer: Bool { driver.awaitsAnswer }

    /// How the camera keeps presets of its own (nil: it keeps none dockd uses).
    public var cameraPresets: CameraPresetStorage? { driver.cameraPresets }

    public var batteryReports: [BatteryReport] { status.batteryReports }

    public var motionSnapshot: MotionReport? {
        lastFeedback.map { StandStatus.motionReport($0.feedback, at: $0.time, roundTrip: driver.counters.roundTrip.smoothed) }
    }

    public func trackingReport(at now: Double) -> TrackingReport {
        var report = tracking.report(time: now)
        report.phase = phase(at: now)
        return report
    }

    /// The controller's state (running motion, measured positions), nil while not connected.
    public var motionState: MotionState? { connection?.motion.state }

    /// What `motionState?.activity` says, without building the state's dictionaries (the host asks
    /// after every event whether the stand is at rest).
    public var motionActivity: MotionState.Activity? { connection?.motion.activity }

    /// The limits in force per axis, nil while not connected.
    public var effectiveLimits: [EffectiveAxisLimits]? { connection.map { c in c.motion.axes.compactMap { c.motion.limits(of: $0) } } }

    public var leaseHolder: ClientRef? { gate.lease.holder }
    public var stoppedBy: ClientRef? { gate.lease.stop?.by }
}

/// What the engine counts; the link's own counters (frames, errors, resends) are the driver's.
public struct EngineCounters: Sendable, Equatable {
    public var linksOpened = 0
    public var handshakes = 0
    public var faults = 0
    public var feedbackFrames = 0
    /// FEEDBACK and BATTERY reports refused as impossible.
    public var implausibleReports = 0
}
