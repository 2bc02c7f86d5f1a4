import DockProtocol

/// The motion controller of one stand: turns client commands (velocity, orientation, animation,
/// limits, stop) into the VELOCITY / STOP / LIMITS messages the stand needs, closing the position
/// loop on the stand's FEEDBACK.
///
/// Pure and deterministic: no I/O, no clock. Every call that depends on time takes `at time:`, in
/// seconds of the host's monotonic clock (never the stand's `time_us`). The daemon calls
/// `feedback(_:at:)` and then `tick(at:)` for every FEEDBACK frame, and sends what `tick` returns.
/// Commands queue their messages and progress until the next `tick`; call `tick` right after
/// `stop` to send the STOP without waiting a period. The daemon should also tick on a timer (about
/// once a feedback period) so the dead man's switch and the feedback watchdog fire when the stand
/// goes quiet.
///
/// Closed loop while following a trajectory or animation, per axis and tick:
///
///     p_now = p_measured + v_measured · age        (age = t − host time of the FEEDBACK)
///     v     = v_ref(t + latency) + Kp · (p_ref(t) − p_now)
///
/// On a link with a measured round trip `rtt` (`setRoundTrip`), a FEEDBACK shows the stand as it was
/// up to `rtt` before it arrived, and a command acts up to `rtt` after it is sent. So, as a Smith
/// predictor does, the position adds what the velocities commanded in `[t_f − rtt, t_f]` will have
/// moved (t_f = host time of the FEEDBACK), and the reference is sampled `rtt/2` ahead (the link is
/// taken as symmetric). With `rtt` ≈ 0 this is the loop above. While following a path on a link
/// whose reads lag the commands (`readsLagCommands`), the position is carried past the FEEDBACK
/// by the velocities commanded up to the tick (the window
/// `[t_f − rtt, t]`), not by the measured velocity: a camera read every 0.1–0.3 s (ONVIF) is sent
/// several commands between two reads, and its measured velocity, a difference of two reads, lags
/// them; carried by it, the prediction ran 0.07 rad past the head and the loop rang (issue 24).
/// And `Kp` is at most 0.8 / the interval between FEEDBACKs as they really come: the loop corrects
/// once a FEEDBACK, and a gain that corrects more than the error in one interval overshoots; a
/// camera polled over a starved link, its FEEDBACKs 0.2–0.3 s apart, rang at 8/s.
///
/// then clamped by `VelocityShaper` to the speed limit, to a speed that can still stop at the
/// position limits, and to the acceleration limit relative to the previous command. Predicting the
/// sample to the tick makes the loop independent of when the daemon ticks relative to the FEEDBACK
/// (right after it, or on a timer up to a period later). Positions of a continuous yaw are unwrapped
/// multi-turn, as on the wire.
///
/// A trajectory completes once its time is up and every axis has settled: the predicted position and
/// the position it will coast to after the final zero VELOCITY are both within half of
/// `positionTolerance` of the target. Completing on the first sample inside the tolerance would stop
/// an axis that is still moving through the band at its edge, or carry it out of the band. Where the
/// position is carried by the commands (`readsLagCommands`), so is the coasting: at the velocity
/// commanded, not the measured one.
///
/// Fine approach (`fineApproach`, declared by a driver whose stand takes only velocities and a
/// stop, each acted on at an uneven delay, and reads its position back: an ONVIF camera's
/// ContinuousMove and Stop): an orientation settled within its tolerance does not complete there.
/// A correction lands off by its speed times the spread of the delay before it acts; at the
/// path's speeds that left 3e-4–4.5e-3 rad (issue 24). So it creeps on, the P-law's rate bounded
/// by `fineTopSpeed`, stops once predicted within half of `fineBand`, and completes on a read at
/// rest within `fineBand` (else creeps again), or where it is after `fineApproachTime`, within
/// its tolerance. The settle timeout then counts from the end of that time, so the approach never
/// fails an orientation.
public struct MotionController: Sendable {
    public let capabilities: Capabilities
    public let configuration: MotionConfiguration
    /// The stand's axes in wire order; the per-axis arrays below are indexed alike.
    public let axes: [Axis]

    private var limits: LimitsTable
    private var measuredPosition: [Double]
    private var measuredVelocity: [Double]
    private var measuredStatus: [AxisStatus]
    private var measured: [Bool]
    private var lastFeedbackTime: Double?
    /// The link's round trip, s (0 until measured).
    public private(set) var roundTrip = 0.0
    /// The velocities sent, with when, for the last `maxRoundTrip` plus a period (oldest first).
    private var sentVelocities: [(time: Double, velocity: [Double])] = []

    private enum Mode: Sendable {
        case idle
        /// Velocity mode: rates already clamped to the speed limits; stops at `deadline`.
        case velocity(rates: [Double], deadline: Double)
        case plan(MotionPlan)
    }
    private var mode: Mode = .idle
    /// A move the stand makes itself: the distance left at the start (the sum over the axes), the
    /// closest it has come, and since when it has not come closer.
    private var delegatedProgress: (first: Double, closest: Double, since: Double)?
    /// Per axis: since when (and at what speed) the axis has been moving against its command.
    private var movingAgainst: [(since: Double, speed: Double)?]
    /// Per axis: when the command last went each way (beyond the direction check's threshold).
    private var lastCommanded: [(forward: Double, backward: Double)]
    /// The mean time between FEEDBACKs as they arrive (α = 1/8), s; nil before the second. A stand
    /// polled across a slow link reports less often than it advertises: a VISCA camera polled with
    /// one inquiry in flight, its replies 200 ms late, every 200 ms rather than at its poll rate.
    private var feedbackInterval: Double?
    /// Set once an axis moved against its command (a reversed direction in the stand or its
    /// description): motion stops and stays refused on this controller.
    public private(set) var wrongDirection: String?
    /// The velocities last sent, the base of the acceleration limit.
    private var lastCommand: [Double]
    private var lastTickTime: Double?
    private var pending = ControlOutput()
    private var rateLimiter: CommandRateLimiter
    private var nextID: UInt64 = 1
    private let shaper: VelocityShaper
    /// Per axis: `limitDeadbandCounts` encoder counts in rad, at most a quarter of the tolerance.
    private let deadband: [Double]

    /// The stand moves to a position itself (POSITION, a camera's absolute positioning): an
    /// orientation is one `.position` message, judged complete from feedback, instead of a
    /// trajectory followed with velocities; the loop then does not wait on the link's round trip.
    public let standClosesPositionLoop: Bool
    /// The driver polls the position (`StandDriver.positionIsPolled`): its reads lag the commands.
    public let positionIsPolled: Bool
    /// Orientations end with a fine approach (`StandDriver.wantsFineApproach`; see the type's
    /// comment), where the reads lag the commands (`readsLagCommands`).
    public let fineApproach: Bool

    public init(capabilities: Capabilities, configuration: MotionConfiguration = .init(), standClosesPositionLoop: Bool = false,
                positionIsPolled: Bool = false, fineApproach: Bool = false) {
        self.capabilities = capabilities
        self.configuration = configuration
        self.standClosesPositionLoop = standClosesPositionLoop
        self.positionIsPolled = positionIsPolled
        self.fineApproach = fineApproach
        axes = Axis.allCases.filter { capabilities.axis($0) != nil }
        limits = LimitsTable(capabilities: capabilities, axes: axes)
        measuredPosition = axes.map { _ in 0 }
        measuredVelocity = axes.map { _ in 0 }
        measuredStatus = axes.map { _ in [] }
        measured = axes.map { _ in false }
        lastCommand = axes.map { _ in 0 }
        movingAgainst = axes.map { _ in nil }
        lastCommanded = axes.map { _ in (-.infinity, -.infinity) }
        rateLimiter = CommandRateLimiter(limit: configuration.commandsPerWindow, window: configuration.rateWindow)
        shaper = VelocityShaper(brakingMargin: configuration.planningMargin,
                                reaction: Self.reaction(configuration, period: 1 / Double(max(1, capabilities.feedbackHz))))
        deadband = axes.map { axis in
            let counts = Double(max(1, capabilities.axis(axis)!.countsPerRev))
            // Capped so that a target at a limit can still settle (to half the tolerance).
            return min(Self.limitDeadbandCounts * 2 * Double.pi / counts, configuration.positionTolerance / 4)
        }
    }

    // MARK: - State

    public var state: MotionState {
        var positions: [Axis: Double] = [:], velocities: [Axis: Double] = [:]
        for (i, axis) in axes.enumerated() where measured[i] {
            positions[axis] = measuredPosition[i]
            velocities[axis] = measuredVelocity[i]
        }
        return MotionState(activity: activity, positions: positions, velocities: velocities, feedbackTime: lastFeedbackTime)
    }

    /// What the controller is doing (what `state.activity` says, without building the state's
    /// dictionaries: tracking asks at every FEEDBACK).
    public var activity: MotionState.Activity {
        switch mode {
        case .idle: .idle
        case .velocity: .velocity
        case .plan(let plan): plan.activity
        }
    }

    /// Nothing to carry on: no motion and no velocity (what `state.activity` says, without building
    /// the state).
    public var isIdle: Bool {
        if case .idle = mode { return true }
        return false
    }

    /// Where the measured axes are at `time`, the link's round trip predicted across (see
    /// `predictedPositions`): on a stand that answers late, the aim tracking steers from.
    public func predictedAngles(at time: Double) -> AxisValues {
        let predicted = predictedPositions(at: time)
        var angles = AxisValues()
        for (i, axis) in axes.enumerated() where measured[i] { angles[axis] = predicted[i] }
        return angles
    }

    /// The limits in force on `axis` (the stand's own narrowed by `setLimits`).
    public func limits(of axis: Axis) -> EffectiveAxisLimits? {
        axes.firstIndex(of: axis).map { limits[$0] }
    }

    /// When the feedback watchdog fails a motion if no FEEDBACK has come by then (PROTOCOL.md §5:
    /// `feedbackTimeoutPeriods` periods after the last), nil before the first FEEDBACK.
    public var feedbackWatchdogTime: Double? { lastFeedbackTime.map { $0 + configuration.feedbackTimeoutPeriods * period } }

    /// The feedback period the stand declares, s (its CAPABILITIES' rate, at least 1 Hz).
    public var period: Double { 1 / Double(max(1, capabilities.feedbackHz)) }
    private var latency: Double { configuration.latencyCompensation ?? period }
    /// Seconds from a tick until the stand has reacted to its command: the command's latency and the
    /// motor's lag (the feedback's age is measured, not assumed). See `limitLookahead`.
    private static func reaction(_ configuration: MotionConfiguration, period: Double) -> Double {
        configuration.limitLookahead ?? 4 * period
    }
    /// How close to a position limit counts as at it: a few encoder counts, more than the position
    /// noise of an axis resting there.
    private static let limitDeadbandCounts = 3.0

    // MARK: - Input

    /// Caches the stand's measured state. `time` is when the host received it; the frame's own
    /// `time_us` is the stand's clock and is not compared with host times.
    public mutating func feedback(_ f: Feedback, at time: Double) {
        for sample in f.axes {
            guard let i = axes.firstIndex(of: sample.axis) else { continue }
            measuredPosition[i] = Double(sample.position)
            measuredVelocity[i] = Double(sample.velocity)
            measuredStatus[i] = sample.status
            measured[i] = true
        }
        if let last = lastFeedbackTime, time > last {
            feedbackInterval = feedbackInterval.map { 0.875 * $0 + 0.125 * (time - last) } ?? time - last
        }
        lastFeedbackTime = time
    }

    /// The link's measured round trip (s): motion is predicted across it; past
    /// `configuration.maxRoundTrip` motion stops and commands are refused.
    public mutating func setRoundTrip(_ seconds: Double) {
        roundTrip = seconds.isFinite ? max(0, seconds) : 0
    }

    // MARK: - Commands

    /// Velocity mode: the axes named move at `rates` (rad/s, clamped to the speed limits), the others
    /// stop. Lasts `configuration.deadman` seconds unless renewed by another call. Takes over from
    /// an orientation move or animation (which ends `.preempted`).
    public mutating func setVelocity(_ rates: [Axis: Double], at time: Double) throws(MotionError) {
        try requireFeedback()
        var clamped = axes.map { _ in 0.0 }
        for axis in rates.keys.sorted() {
            guard let i = axes.firstIndex(of: axis) else { throw .notSupported(axis) }
            let rate = rates[axis]!
            guard rate.isFinite else { throw .invalidParameter("\(axis) velocity must be finite") }
            clamped[i] = min(limits[i].maxSpeed, max(-limits[i].maxSpeed, rate))
        }
        preempt(at: time)
        mode = .velocity(rates: clamped, deadline: time + configuration.deadman)
    }

    /// Ends velocity mode now with one zero VELOCITY (nothing is sent after it while idle): a
    /// client or tracking that wants the stand still, rather than commanding zero until the dead
    /// man's switch. Does nothing in another mode.
    public mutating func endVelocity() {
        guard case .velocity = mode else { return }
        mode = .idle
        var out = pending
        sendZeroVelocity(into: &out)
        pending = out
    }

    /// Moves to an orientation on a minimum-jerk path, all axes arriving together; axes not named hold.
    /// `relative`: the values are added to the measured positions (multi-turn on a continuous yaw);
    /// otherwise they are positions. A target outside the limits throws `outOfRange` (as DockKit;
    /// nothing is clamped). `duration` nil or 0 = as fast as the limits allow (at `planningMargin`);
    /// a duration too short for the limits is lengthened. Pre-empts the running motion.
    /// `tolerance`: how close to the target the stand must come to rest (default
    /// `configuration.positionTolerance`); a tighter one takes the settling longer. A stand that
    /// positions itself lands where its own units allow, and is judged by the configured tolerance
    /// (with a tighter one a VISCA camera's recall, exact to its unit, failed as making no progress).
    public mutating func setOrientation(_ target: [Axis: Double], relative: Bool, duration: Double?, tolerance: Double? = nil,
                                        at time: Double) throws(MotionError) -> MotionID {
        try requireFeedback()
        guard !target.isEmpty else { throw .invalidParameter("no axis given") }
        if let duration, !(duration.isFinite && duration >= 0) {
            throw .invalidParameter("duration must be a finite number ≥ 0, not \(duration)")
        }
        var goal = measuredPosition
        for axis in target.keys.sorted() {
            guard let i = axes.firstIndex(of: axis) else { throw .notSupported(axis) }
            let value = target[axis]!
            guard value.isFinite else { throw .invalidParameter("\(axis) target must be finite") }
            goal[i] = relative ? measuredPosition[i] + value : value
            guard limits[i].contains(goal[i]) else {
                throw .outOfRange("\(axis) target \(goal[i].formatted3)\(axis.unitSuffix) is outside the limits \(limits[i].rangeText(of: axis))")
            }
        }
        try takeRateSlot(at: time)

        let margin = configuration.planningMargin
        var length = duration ?? 0
        for i in axes.indices {
            length = max(length, MinimumJerkMove.shortestDuration(
                distance: goal[i] - measuredPosition[i],
                maxSpeed: margin * limits[i].maxSpeed, maxAccel: margin * limits[i].maxAccel))
        }
        let paths = axes.indices.map { i in
            AxisPath.move(MinimumJerkMove(start: measuredPosition[i], end: goal[i], duration: length))
        }
        guard standClosesPositionLoop else { return begin(.orientation, duration: length, paths: paths, tolerance: tolerance, at: time) }
        let id = begin(.orientation, duration: length, paths: paths, at: time, delegated: true)
        pending.messages.append(.position(duration: Float(length), targets: axes.indices.map { PositionTarget(axis: axes[$0], position: Float(goal[$0])) }))
        return id
    }

    /// Plays a built-in or custom animation from the present pose (see `Animation`). A custom one
    /// that leaves the limits or needs more speed or acceleration than allowed is refused before
    /// anything moves. Pre-empts the running motion.
    public mutating func play(_ animation: Animation, at time: Double) throws(MotionError) -> MotionID {
        try requireFeedback()
        let planner = AnimationPlanner(axes: axes, limits: axes.indices.map { limits[$0] },
                                       start: measuredPosition, configuration: configuration)
        let splines = try planner.plan(animation)
        try takeRateSlot(at: time)
        return begin(.animation(name: animation.name), duration: splines[0].duration,
                     paths: splines.map(AxisPath.spline), at: time)
    }

    /// Narrows position range and speed per axis (DockKit rules: min ≥ max, a speed ≤ 0, anything
    /// beyond the stand's own limits or an axis it lacks is refused, and a refused call changes
    /// nothing). The stand is sent LIMITS so it enforces them too. A running motion continues within
    /// the new limits; one whose target is now outside them stops at the limit and fails on timeout.
    /// `informStand` false changes only dockd's table: what the stand kept after refusing a LIMITS.
    public mutating func setLimits(_ requests: [Axis: LimitRequest], informStand: Bool = true) throws(MotionError) {
        let changed = try limits.apply(requests)
        if informStand && !changed.isEmpty { pending.messages.append(limits.message(for: changed)) }
    }

    /// Back to the stand's own limits. The stand is sent one LIMITS per axis that was narrowed and
    /// none for the others: LIMITS is all or nothing, so an axis the stand refuses to take back
    /// (a stand that checks a continuous axis's range, which PROTOCOL.md 1.0 left to guess) cannot
    /// keep another axis narrowed. Returns the axes sent, in the order of their LIMITS.
    @discardableResult
    public mutating func resetLimits(informStand: Bool = true) -> [Axis] {
        let narrowed = limits.narrowedIndices
        limits.reset()
        guard informStand else { return [] }
        for i in narrowed { pending.messages.append(limits.message(for: [i])) }
        return narrowed.map { axes[$0] }
    }

    /// Everything stops now: STOP is sent (the stand brakes at its maximum acceleration and holds),
    /// a running motion ends `.cancelled`, velocity mode ends.
    public mutating func stop(at time: Double) {
        if case .plan(let plan) = mode {
            pending.progress.append(MotionProgress(id: plan.id, fraction: plan.fraction(at: time), state: .cancelled))
        }
        mode = .idle
        pending.messages.append(.stop)
        lastCommand = axes.map { _ in 0 }
    }

    /// Ends whatever runs with `reason` (a running motion fails with it) and sends STOP: the stand
    /// refused its drives, or moves against them.
    public mutating func abort(reason: String, at time: Double) {
        if case .plan(let plan) = mode {
            pending.progress.append(MotionProgress(id: plan.id, fraction: plan.fraction(at: time), state: .failed(reason)))
        }
        mode = .idle
        pending.messages.append(.stop)
        lastCommand = axes.map { _ in 0 }
    }

    /// Cancels `id` if it is the running motion: it ends `.cancelled` and the axes are sent zero
    /// velocity. Returns false (and does nothing) for any other id.
    @discardableResult
    public mutating func cancel(_ id: MotionID, at time: Double) -> Bool {
        guard case .plan(let plan) = mode, plan.id == id else { return false }
        var out = pending
        finish(plan, .cancelled, at: time, into: &out)
        pending = out
        return true
    }

    // MARK: - Tick

    /// Advances the controller to `time`: returns the messages to send and the progress to report.
    /// While moving it sends one VELOCITY for every axis per tick (the native driver writes one equal
    /// to the last only every 50 ms: PROTOCOL.md §3.3) and a `.running` progress for the active motion; when a motion or velocity mode
    /// ends it sends a single zero VELOCITY and the final progress; when idle, nothing.
    public mutating func tick(at time: Double) -> ControlOutput {
        var out = pending
        pending = ControlOutput()
        let dt = lastTickTime.map { min(max(0, time - $0), period) } ?? period
        lastTickTime = time
        if wrongDirection == nil, let reason = checkDirection(at: time) {
            wrongDirection = reason
            if case .plan(let plan) = mode { out.progress.append(MotionProgress(id: plan.id, fraction: plan.fraction(at: time), state: .failed(reason))) }
            mode = .idle
            out.messages.append(.stop)
            lastCommand = axes.map { _ in 0 }
            return out
        }

        switch mode {
        case .idle:
            break
        case .velocity(let rates, let deadline):
            if feedbackLoss(at: time) != nil || time >= deadline {
                mode = .idle
                sendZeroVelocity(into: &out)
            } else {
                send(rates, at: time, dt: dt, into: &out)
            }
        case .plan(let plan):
            if let reason = feedbackLoss(at: time) ?? axisTrouble() {
                finish(plan, .failed(reason), at: time, into: &out)
            } else {
                follow(plan, at: time, dt: dt, into: &out)
            }
        }
        return out
    }

    private mutating func follow(_ plan: MotionPlan, at time: Double, dt: Double, into out: inout ControlOutput) {
        var plan = plan
        if plan.delegated { return watch(plan, at: time, into: &out) }
        let elapsed = time - plan.start
        let position = predictedPositions(at: time, byCommands: readsLagCommands)
        let lead = roundTrip / 2
        let errors = axes.indices.map { plan.paths[$0].finalPosition - position[$0] }
        // Carried by the commands, the axes coast at the velocity commanded: a slow camera's
        // measured one, a difference of two reads, is off by the reads' timing (under load an
        // orientation 0.001 rad from its target failed, never judged settled within 1 s). A stand
        // streaming its FEEDBACK is judged on its measured velocity (`readsLagCommands`).
        let coasting = readsLagCommands ? lastCommand : measuredVelocity
        if elapsed >= plan.duration && settled(errors, coasting: coasting, tolerance: plan.tolerance) {
            guard approachesFinely(plan) else {
                finish(plan, .completed, at: time, into: &out)
                return
            }
            let step = fineStep(&plan, errors: errors, coasting: coasting, at: time)
            mode = .plan(plan)
            switch step {
            case .complete:
                finish(plan, .completed, at: time, into: &out)
                return
            case .stop, .hold:
                if step == .stop { sendZeroVelocity(into: &out) }
                out.progress.append(MotionProgress(id: plan.id, fraction: plan.fraction(at: time), state: .running))
                return
            case .creep:
                break
            }
        } else if plan.fineStopSince != nil {
            plan.fineStopSince = nil
            mode = .plan(plan)
        }
        let end = plan.fineApproachSince.map { $0 - plan.start + configuration.fineApproachTime } ?? plan.duration
        if elapsed > end + configuration.settleTimeout {
            let worst = axes.indices.max { abs(errors[$0]) < abs(errors[$1]) }!
            finish(plan, .failed("\(axes[worst]) still \(errors[worst].formatted3) rad from its target \(configuration.settleTimeout.formatted3) s after the end"),
                   at: time, into: &out)
            return
        }
        let creep = plan.fineApproachSince == nil ? Double.infinity : configuration.fineTopSpeed
        let wanted = axes.indices.map { i in
            let reference = plan.paths[i].sample(at: elapsed + lead)
            let feedForward = plan.paths[i].sample(at: elapsed + lead + latency).velocity
            let rate = feedForward + positionGain * (reference.position - position[i])
            return min(creep, max(-creep, rate))
        }
        send(wanted, at: time, dt: dt, into: &out)
        out.progress.append(MotionProgress(id: plan.id, fraction: plan.fraction(at: time), state: .running))
    }

    /// A move the stand makes itself: complete once the measured positions have settled at the
    /// target; failed (and the stand sent STOP) only once it has stopped getting closer: no
    /// progress for `stallWindow`. Its duration is the camera's to keep: one whose axis turns
    /// slower than its profile says arrives late, and stopping it when our plan ran out would
    /// leave it short (issue 21: 0.2 rad asked, 0.14 reached).
    private mutating func watch(_ plan: MotionPlan, at time: Double, into out: inout ControlOutput) {
        let errors = axes.indices.map { plan.paths[$0].finalPosition - measuredPosition[$0] }
        if settled(errors, coasting: measuredVelocity, tolerance: plan.tolerance) && axes.indices.allSatisfy({ abs(measuredVelocity[$0]) < configuration.positionTolerance }) {
            out.progress.append(MotionProgress(id: plan.id, fraction: 1, state: .completed))
            mode = .idle
            delegatedProgress = nil
            return
        }
        let remaining = errors.reduce(0) { $0 + abs($1) }
        var progress = delegatedProgress ?? (first: remaining, closest: remaining, since: time)
        if remaining < progress.closest - configuration.positionTolerance / 2 { progress.closest = remaining; progress.since = time }
        delegatedProgress = progress
        if time - progress.since > stallWindow {
            let worst = axes.indices.max { abs(errors[$0]) < abs(errors[$1]) }!
            finish(plan, .failed("\(axes[worst]) still \(errors[worst].formatted3) rad from its target: the stand stopped getting closer "
                                 + "(no progress for \(stallWindow.formatted3) s)"), at: time, into: &out)
            out.messages.append(.stop)
            return
        }
        let fraction = progress.first > 0 ? min(1, max(0, 1 - remaining / progress.first)) : 1
        out.progress.append(MotionProgress(id: plan.id, fraction: fraction, state: .running))
    }

    /// Whether the position is carried past a FEEDBACK by the velocities commanded since it, not by
    /// the measured velocity: where the driver polls the position (`positionIsPolled`; an ONVIF
    /// camera's reads 0.1–0.3 s apart, several commands between two) and the link's round trip is
    /// measured. Declared by the driver, not judged from the FEEDBACKs' timing: a smoothed interval
    /// near a threshold flipped the prediction between ticks of one move, and a native stand's
    /// batched reads look slow. A stand streaming its FEEDBACK keeps the measured velocity, bit for
    /// bit as before: a motor lagging its command passes through the settle band faster than the
    /// command says, and judged on the command would coast out of it.
    private var readsLagCommands: Bool {
        positionIsPolled && roundTrip > 0
    }

    private enum FineStep { case creep, stop, hold, complete }

    /// The fine approach's next step, on a tick where `plan` is settled within its tolerance:
    /// creep on; stop, the head predicted within half of `fineBand` (where the creep's speed, and
    /// the error of the prediction, a few times it, are small); hold stopped until a read at rest
    /// shows where the head is, then complete if it is within `fineBand` or creep on. Judged on a
    /// read at rest, the landing does not depend on when the camera acted on the commands, which
    /// left the creep's prediction 4.5e-4 rad off on a camera acting 30–250 ms late. Completes
    /// anyway `fineApproachTime` after the approach began.
    private func fineStep(_ plan: inout MotionPlan, errors: [Double], coasting: [Double], at time: Double) -> FineStep {
        let since = plan.fineApproachSince ?? time
        plan.fineApproachSince = since
        if time - since >= configuration.fineApproachTime { return .complete }
        if let stopped = plan.fineStopSince {
            guard readsAtRest(since: stopped) else { return .hold }
            if axes.indices.allSatisfy({ abs(errors[$0]) < configuration.fineBand }) { return .complete }
            plan.fineStopSince = nil
            return .creep
        }
        guard settled(errors, coasting: coasting, tolerance: configuration.fineBand) else { return .creep }
        plan.fineStopSince = time
        return .stop
    }

    /// Whether the last FEEDBACK shows the head at rest after the stop sent at `stopped`: it came
    /// late enough for the read to follow the stop (which may wait for the request in flight, a
    /// round trip, then act within another; the read takes a third), a feedback interval to spare,
    /// and the head moved less than `fineBand` a second.
    private func readsAtRest(since stopped: Double) -> Bool {
        guard let received = lastFeedbackTime,
              received >= stopped + 3 * min(roundTrip, configuration.maxRoundTrip) + max(period, feedbackInterval ?? period) else { return false }
        return axes.indices.allSatisfy { abs(measuredVelocity[$0]) < configuration.fineBand }
    }

    /// Whether `plan` ends with a fine approach: an orientation, on a stand that declares one
    /// (`fineApproach`) and whose reads lag the commands (the loop needs the commanded carrying to
    /// creep without overshooting).
    private func approachesFinely(_ plan: MotionPlan) -> Bool {
        fineApproach && readsLagCommands && plan.kind == .orientation
    }

    /// The position gain, 1/s: `configuration.positionGain`, but no more than corrects 0.8 of the
    /// error in one interval between FEEDBACKs as they really come (unchanged at 10 Hz and faster).
    private var positionGain: Double {
        let cycle = max(period, feedbackInterval ?? period)
        return min(configuration.positionGain, 0.8 / cycle)
    }

    /// How long a move the stand makes itself may show no progress before it fails: the settle
    /// timeout, plus the time a change takes to show in the feedback (a round trip, two feedback
    /// intervals as they really come).
    private var stallWindow: Double {
        configuration.settleTimeout + min(roundTrip, configuration.maxRoundTrip) + 2 * max(period, feedbackInterval ?? period)
    }

    // MARK: - Helpers

    /// The measured positions carried forward to `time` at the measured velocities: a FEEDBACK is
    /// `time − lastFeedbackTime` old when a tick uses it (nothing when the daemon ticks right after
    /// it, up to a period on a timer tick). Never extrapolated past the feedback timeout, after which
    /// the motion stops anyway. `byCommands` (`readsLagCommands`): carried by the velocities
    /// commanded since instead (see the type's comment).
    private func predictedPositions(at time: Double, byCommands: Bool = false) -> [Double] {
        let age = lastFeedbackTime.map { min(max(0, time - $0), configuration.feedbackTimeoutPeriods * period) } ?? 0
        var position = axes.indices.map { measuredPosition[$0] + (byCommands ? 0 : measuredVelocity[$0] * age) }
        guard roundTrip > 0, let received = lastFeedbackTime else { return position }
        // What the commands of the round trip before the FEEDBACK will have moved: each velocity
        // holds from when it was sent until the next one.
        let start = received - min(roundTrip, configuration.maxRoundTrip)
        let end = byCommands ? received + age : received
        for (k, sent) in sentVelocities.enumerated() {
            let until = k + 1 < sentVelocities.count ? sentVelocities[k + 1].time : time
            let overlap = min(until, end) - max(sent.time, start)
            guard overlap > 0 else { continue }
            for i in axes.indices { position[i] += sent.velocity[i] * overlap }
        }
        return position
    }

    private mutating func recordSent(at time: Double) {
        sentVelocities.append((time, lastCommand))
        // Keep the velocity in force at the start of the longest window `predictedPositions` reads.
        let horizon = time - configuration.maxRoundTrip - configuration.feedbackTimeoutPeriods * period
        while sentVelocities.count > 1 && sentVelocities[1].time <= horizon { sentVelocities.removeFirst() }
    }

    /// Settled at the target: every axis within half the tolerance now and where it will coast to
    /// once the final zero VELOCITY has acted (it keeps its speed, `coasting`, for about the
    /// reaction time). The other half of the tolerance is the margin for noise and that coasting,
    /// so the stand really comes to rest within `positionTolerance`.
    private func settled(_ errors: [Double], coasting: [Double], tolerance: Double) -> Bool {
        let band = tolerance / 2
        let coast = Self.reaction(configuration, period: period)
        return axes.indices.allSatisfy { i in
            abs(errors[i]) < band && abs(errors[i] - coasting[i] * coast) < band
        }
    }

    /// An axis that keeps speeding up the other way than it is commanded (or, in a move the stand
    /// makes itself, than its path goes) is wired or described with the wrong sign: driving it on
    /// would run it into its end stop. After the command reverses, it is judged only once the reversal
    /// can show in the feedback: it reaches the stand a round trip late, the axis takes its reaction
    /// time, and feedback shows it up to two feedback intervals later (as they really come; an
    /// estimated velocity, VISCA's, lags by as much). Until then the axis may still answer the
    /// commands before, as a tracking loop's reversals do. Moving against the command without
    /// slowing down for `confirmation` (two feedback intervals, at least 0.15 s) is a fault (an axis
    /// braking from the opposite direction slows meanwhile, so it never counts).
    /// Both spans are measured to when the FEEDBACK judged arrived, never to the tick: a feedback
    /// that stops coming (a camera polled over a starved link) shows nothing new, however long
    /// after it the controller ticks; the feedback watchdog handles its absence.
    private mutating func checkDirection(at time: Double) -> String? {
        let threshold = 0.05
        let interval = max(period, feedbackInterval ?? period)
        let settling = 0.15 + min(roundTrip, configuration.maxRoundTrip) + 2 * interval
        let confirmation = max(0.15, 2 * interval)
        for i in axes.indices {
            var command = lastCommand[i]
            if case .plan(let plan) = mode, plan.delegated { command = plan.paths[i].sample(at: time - plan.start).velocity }
            if command > threshold { lastCommanded[i].forward = time }
            if command < -threshold { lastCommanded[i].backward = time }
            let reversed = command > 0 ? lastCommanded[i].backward : lastCommanded[i].forward
            let velocity = measuredVelocity[i]
            guard abs(command) > threshold, let measuredAt = lastFeedbackTime, measuredAt - reversed >= settling,
                  abs(velocity) > threshold, command * velocity < 0 else {
                movingAgainst[i] = nil
                continue
            }
            guard let start = movingAgainst[i] else {
                movingAgainst[i] = (measuredAt, abs(velocity))
                continue
            }
            if abs(velocity) < start.speed { movingAgainst[i] = (measuredAt, abs(velocity)); continue }
            if measuredAt - start.since >= confirmation {
                return "\(axes[i]) moves against its command (commanded \(command.formatted3) rad/s, moving \(velocity.formatted3) rad/s): "
                    + "its direction is reversed in the stand or its description; motion stopped"
            }
        }
        return nil
    }

    private func requireFeedback() throws(MotionError) {
        if let wrongDirection { throw .wrongDirection(wrongDirection) }
        guard measured.allSatisfy({ $0 }) else { throw .noFeedback }
        guard roundTrip <= configuration.maxRoundTrip else { throw .linkTooSlow(roundTrip) }
    }

    private mutating func takeRateSlot(at time: Double) throws(MotionError) {
        guard rateLimiter.allows(at: time) else { throw .frameRateTooHigh }
        rateLimiter.record(at: time)
    }

    private mutating func begin(_ kind: MotionPlan.Kind, duration: Double, paths: [AxisPath], tolerance: Double? = nil, at time: Double,
                                delegated: Bool = false) -> MotionID {
        preempt(at: time)
        let id = MotionID(rawValue: nextID)
        nextID += 1
        mode = .plan(MotionPlan(id: id, kind: kind, start: time, duration: duration, paths: paths, delegated: delegated,
                                tolerance: min(tolerance ?? configuration.positionTolerance, configuration.positionTolerance)))
        delegatedProgress = nil
        return id
    }

    private mutating func preempt(at time: Double) {
        guard case .plan(let plan) = mode else { return }
        pending.progress.append(MotionProgress(id: plan.id, fraction: plan.fraction(at: time), state: .preempted))
        mode = .idle
    }

    private mutating func finish(_ plan: MotionPlan, _ state: MotionProgress.State, at time: Double, into out: inout ControlOutput) {
        let fraction = state == .completed ? 1 : plan.fraction(at: time)
        out.progress.append(MotionProgress(id: plan.id, fraction: fraction, state: state))
        mode = .idle
        sendZeroVelocity(into: &out)
    }

    private mutating func send(_ wanted: [Double], at time: Double, dt: Double, into out: inout ControlOutput) {
        let position = predictedPositions(at: time)
        for i in axes.indices {
            lastCommand[i] = shaper.shape(wanted[i], position: position[i], lastCommand: lastCommand[i],
                                          dt: dt, limits: limits[i], deadband: deadband[i])
        }
        out.messages.append(.velocity(axes.indices.map { AxisValue(axes[$0], Float(lastCommand[$0])) }))
        recordSent(at: time)
    }

    private mutating func sendZeroVelocity(into out: inout ControlOutput) {
        lastCommand = axes.map { _ in 0 }
        out.messages.append(.velocity(axes.map { AxisValue($0, 0) }))
        if let lastTickTime { recordSent(at: lastTickTime) }
    }

    /// PROTOCOL.md §5: after 3 missed feedback periods the host stops issuing motion.
    private func feedbackLoss(at time: Double) -> String? {
        guard let last = lastFeedbackTime else { return "no feedback from the stand" }
        guard roundTrip <= configuration.maxRoundTrip else { return MotionError.linkTooSlow(roundTrip).description }
        let age = time - last
        guard age > configuration.feedbackTimeoutPeriods * period else { return nil }
        return "no feedback from the stand for \(age.formatted3) s"
    }

    private func axisTrouble() -> String? {
        for (i, axis) in axes.enumerated() {
            let status = measuredStatus[i]
            if status.contains(.stalled) { return "\(axis) stalled" }
            if status.contains(.fault) { return "\(axis) motor fault" }
            if status.contains(.disabled) { return "\(axis) motor disabled" }
        }
        return nil
    }
}
