import DockCore
import DockProtocol
import DockTracking

/// System tracking for one stand, the one loop dockd and its benchmarks run: observations in
/// (normalized boxes at a capture time), motor rates out. Subjects are tracked in the stand's
/// angular frame: each box goes through the camera model at the motor angles of its capture time
/// plus the base's attitude from the IMU (hand-held), so neither the stand's own motion nor its
/// base's is taken for the subject's.
public struct TrackingLoop: Sendable {
    public private(set) var pipeline: TrackingPipeline
    private var controller: TrackingController
    /// The camera before zoom: the configuration's, or what a client set with `camera.set`.
    private var baseCamera: CameraModel
    /// The configuration's camera, in force whenever no client set one.
    private var configuredCamera: CameraModel
    /// The stand's zoom button (a digital zoom of the phone): a factor on top of the optical zoom.
    private(set) var zoom = 1.0
    /// The shot framing keeps with an optical zoom, and its dead band's state.
    private var shotZoom = ShotZoom()
    private let frameRates: ClosedRange<Double>

    /// Motor angles over the last 2 s: the aim at any capture time.
    private var history = AngleHistory()
    private var base = BaseAttitudeEstimator()
    private var arrivals = ArrivalWindow()
    public private(set) var lastStep: TrackingStep?
    private var lastStepAim = Aim(x: 0, y: 0)
    public private(set) var target: TrackingTarget?
    /// The target when a subject was last seen: where a lost-subject policy searches, and since when.
    public private(set) var lastSeen: TrackingTarget?
    private var lastObservation = -Double.infinity

    public init(camera: CameraModel, seed: UInt64, settings: TrackingSettings) {
        controller = TrackingController(configuration: settings.control)
        baseCamera = camera
        configuredCamera = camera
        frameRates = settings.frameRates
        pipeline = TrackingPipeline(tracker: MultiSubjectTracker(settings: settings.tracker, seed: seed),
                                    selector: SubjectSelector(settings: settings.selection),
                                    framer: Framer(settings: settings.framing), camera: camera)
    }

    public var inFrame: Bool { lastStep?.framing.inFrame ?? false }

    /// The stand's axes that turn without end (home on them is the nearest whole turn).
    public mutating func setContinuousAxes(_ axes: Set<Axis>) { controller.continuousAxes = axes }
    public var camera: CameraModel { pipeline.camera }

    /// True while a stream of observations is alive: tracking then owns the motors.
    public func isActive(at now: Double) -> Bool { now - lastObservation < 1.0 }

    /// `zoom`: the optical magnification the stand reports (1 without a zoom axis); the camera
    /// model of each frame follows it, so that angles stay right while zooming.
    public mutating func recordFeedback(time: Double, yaw: Double, pitch: Double, zoom: Double = 1) {
        history.record(time: time, yaw: yaw, pitch: pitch, zoom: zoom)
    }

    public mutating func recordImu(_ sample: ImuSample, time: Double) {
        base.add(sample, at: time)
    }

    /// The camera's aim when a frame was captured (x right, y down: the tracker's convention).
    public func aim(at time: Double) -> Aim {
        let motors = history.angles(at: time), tilt = base.attitude(at: time)
        return Aim(x: -(motors.yaw + tilt.yaw), y: -(motors.pitch + tilt.pitch))
    }

    // MARK: - Camera

    /// The configuration changed (SIGHUP): its camera and what the stand does once the subject is gone.
    public mutating func configure(camera: CameraModel, lostBehaviour: LostSubjectBehaviour, lostHold: Double) {
        if baseCamera == configuredCamera { setCamera(camera) }
        configuredCamera = camera
        controller.configuration.lostBehaviour = lostBehaviour
        controller.configuration.lostHold = lostHold
    }

    public mutating func setCamera(_ camera: CameraModel) {
        baseCamera = camera  // a later zoom scales this one, not the configuration's
        pipeline.camera = camera.zoomed(by: zoom * history.latestZoom)
    }

    /// A zoom event: a factor of 2 doubles the subject's size, i.e. halves tan(fov/2).
    public mutating func applyZoom(_ factor: Double) {
        guard factor.isFinite, factor > 0 else { return }
        zoom = min(20, max(0.05, zoom * factor))
        pipeline.camera = baseCamera.zoomed(by: zoom * history.latestZoom)
    }

    // MARK: - Observations

    /// DockKit's steady 10–30 Hz (see `ArrivalWindow`), judged on a frame's capture time (the
    /// one assumed for a frame that comes without one).
    public mutating func checkRate(frameTime: Double) throws(EngineError) {
        switch arrivals.add(frameTime, allowed: frameRates) {
        case .ok: return
        case .tooFast: throw .frameRateTooHigh
        case .tooSlow: throw .frameRateTooLow
        }
    }

    /// One frame's detections, boxes normalized with an upper-left origin in the upright image.
    public mutating func observe(_ detections: [Detection], captureTime: Double, now: Double) {
        let aim = aim(at: captureTime)
        pipeline.camera = baseCamera.zoomed(by: zoom * history.zoom(at: captureTime))
        let observations = detections.map { d in
            var observation = Observation(kind: d.kind, box: pipeline.camera.angularBox(of: d.rect, aim: aim), confidence: d.confidence,
                                          speakingConfidence: d.speaking, lookingAtCameraConfidence: d.lookingAtCamera, faceYaw: d.faceYaw)
            observation.clippedEdges = BoxEdges(touching: d.rect)
            observation.pose = d.pose?.mapped { point in
                let angular = pipeline.camera.angularPoint(normalizedX: point.x, normalizedY: point.y, aim: aim)
                return BodyKeypoint(x: angular.x, y: angular.y, visibility: point.visibility)
            }
            return observation
        }
        lastStepAim = aim
        lastObservation = now
        take(pipeline.step(observations: observations, time: captureTime, aim: aim))
    }

    private mutating func take(_ step: TrackingStep) {
        lastStep = step
        // Every framed subject hidden: hold the last target (its age stops the chase, and the
        // controller's lost behaviour starts once the tracker lets the subjects go) — unless the
        // primary is a still person the camera turned away from: it turns back to them.
        if !pipeline.framesOnlyLostSubjects(step) || step.selection.primaryLeftBehind {
            target = Self.target(step, tracks: pipeline.tracker.tracks, time: step.time)
            if let target { lastSeen = target }
        }
    }

    /// A client's selection, framed from the latest frame on: the app taps what its preview shows,
    /// and the camera should not steer one more frame toward whoever was framed before (`child`:
    /// the adult behind was framed on the session's first frame, the tapped child from the second).
    private mutating func applySelection() {
        guard let step = lastStep else { return }
        take(pipeline.reselect(step, aim: lastStepAim))
    }

    /// The framer's desired aim as stand angles, moving with the primary subject (the controller's
    /// dead band decides whether the camera follows). The rate is the primary's face's where it
    /// has one (what the framer anchors on): a body box's top and height jump when the person sits,
    /// bends or stands, and a change of shape is a posture, not a velocity to feed forward. The
    /// measured aim moves the desired one by where this frame's face detection is against the
    /// filtered face: where the face really stopped. A frame that missed the face has no such
    /// detection (nil: the last detection, a frame or more old, lags a moving face by the frames
    /// since). A subject without a face (a body, an object) is measured across by its box's
    /// detection the same way (a box's centre does not move sideways when its shape changes) and
    /// up and down by its filtered box (its top and height jump with a posture: a cat lying down).
    private static func target(_ step: TrackingStep, tracks: [Track], time: Double) -> TrackingTarget? {
        guard let primary = step.selection.selected.first, let track = tracks.first(where: { $0.id == primary }) else { return nil }
        let desired = step.framing.desiredAim
        let velocity = track.face?.filter.velocity ?? track.velocity
        let measured: (x: Double?, y: Double?)
        if let face = track.face {
            measured = face.lastUpdateTime == time
                ? (x: desired.x + face.lastMeasurement.centerX - face.box.centerX, y: desired.y + face.lastMeasurement.centerY - face.box.centerY)
                : (nil, nil)
        } else {
            measured = (x: track.lastUpdateTime == time ? desired.x + track.lastMeasuredBox.centerX - track.box.centerX : nil, y: desired.y)
        }
        return TrackingTarget(yaw: -desired.x, pitch: -desired.y, yawRate: -velocity.x, pitchRate: -velocity.y, time: time,
                              measuredYaw: measured.x.map { -$0 }, measuredPitch: measured.y.map { -$0 })
    }

    /// Rates for the motors while tracking is active, nil when it is not; `loopDelay`: the link's
    /// round trip and the stand's feedback period (a slow loop gets a gentler gain). `zoom`, on a
    /// stand with a zoom axis: its limits in force; with a shot chosen, the shot's zoom rate comes
    /// with the others (without one, none: the zoom holds, as VELOCITY holds every axis it is not
    /// given a rate for).
    public mutating func command(positions: [Axis: Double], zoom zoomLimits: EffectiveAxisLimits? = nil,
                                 loopDelay: Double, at now: Double) -> [Axis: Double]? {
        guard isActive(at: now) else { return nil }
        controller.loopDelay = loopDelay
        controller.magnification = zoom * history.latestZoom
        var rates = controller.command(target: target, positions: positions, base: base.current, at: now)
        if let zoomLimits, shotZoom.shot != nil { rates[.zoom] = zoomRate(limits: zoomLimits) }
        return rates
    }

    /// The shot's zoom rate, judged on the latest frame with the camera at the zoom in force now.
    private mutating func zoomRate(limits: EffectiveAxisLimits) -> Double {
        let magnification = history.latestZoom
        guard let step = lastStep else { return 0 }
        let framed = step.framing.framed.compactMap { id in pipeline.tracker.tracks.first { $0.id == id } }
        let lost = framed.isEmpty || pipeline.framesOnlyLostSubjects(step)
        let target = shotZoom.target(subjects: framed, lost: lost, camera: baseCamera.zoomed(by: zoom * magnification), aim: lastStepAim,
                                     magnification: magnification, range: limits.min...limits.max)
        return shotZoom.rate(toward: target, magnification: magnification, maxSpeed: limits.maxSpeed)
    }

    // MARK: - Selection and framing

    public mutating func select(ids: [String]) throws(EngineError) {
        var chosen: [SubjectIdentifier] = []
        for text in ids {
            guard let id = pipeline.tracker.subjects.first(where: { $0.id.description.lowercased() == text.lowercased() })?.id else {
                throw .invalidParameter("no tracked subject \(text)")
            }
            chosen.append(id)
        }
        pipeline.selector.select(ids: chosen)
        applySelection()
    }

    /// Selects the subject at a normalized point (upper-left origin) of the latest frame.
    public mutating func select(atX x: Double, y: Double) throws(EngineError) -> String {
        do {
            let id = try pipeline.selectSubject(atNormalizedX: x, y: y, aim: lastStepAim)
            pipeline.selector.select(ids: [id])
            applySelection()
            return id.description
        } catch {
            throw .noSubjectFound
        }
    }

    public mutating func setFraming(_ mode: FramingMode) { pipeline.framer.mode = mode }
    /// nil: the zoom is left where it is.
    public mutating func setShot(_ shot: ShotSize?) {
        shotZoom.shot = shot
        pipeline.framer.bodiesCentered = shot == .fullBody || shot == .group
    }
    public var shot: ShotSize? { shotZoom.shot }
    public mutating func setRegionOfInterest(_ rect: NormalizedRect) { pipeline.framer.regionOfInterest = rect }

    /// Back to the stand's defaults: their framing and region of interest, automatic selection,
    /// the configuration's camera, no shot (the zoom stays where the client left it).
    public mutating func resetClientSettings(to defaults: StandDefaults) {
        setCamera(configuredCamera)
        pipeline.framer.mode = defaults.framing
        setShot(nil)
        pipeline.framer.regionOfInterest = defaults.regionOfInterest
        pipeline.selector.select(ids: [])
    }

    /// A client turned the stand (a turn request, a manual move): tracking starts afresh on what
    /// the camera sees from now on, instead of turning back to the subjects it left behind.
    public mutating func startAfresh(at time: Double) {
        pipeline.selector.startAfresh(at: time)
        target = nil
        lastSeen = nil
        controller.reset()
    }

    /// The camera turned around (flip): what was tracked is behind it now. Identifiers stay unique
    /// for the session.
    public mutating func forgetSubjects() {
        pipeline.tracker.forgetAll()
        target = nil
        lastSeen = nil
        lastStep = nil
        controller.reset()
    }

    // MARK: - The tracking-state stream

    public func report(time: Double) -> TrackingReport {
        guard let step = lastStep else { return TrackingReport(time: time, captureTime: nil, subjects: [], inFrame: false) }
        let subjects = pipeline.subjectStates(of: step, aim: lastStepAim).map { s in
            SubjectReport(id: s.id.description, isPerson: s.category == .person, rect: s.rect, faceRect: s.faceRect,
                          saliencyRank: s.saliencyRank, speakingConfidence: s.speakingConfidence,
                          lookingAtCameraConfidence: s.lookingAtCameraConfidence, facing: s.facing, selected: step.selection.selected.contains(s.id),
                          lastSeen: s.lastSeen)
        }
        return TrackingReport(time: time, captureTime: step.time, subjects: subjects, inFrame: step.framing.inFrame)
    }
}

/// Motor angles (and the optical zoom) with the host time they were measured, over the last couple
/// of seconds: where the camera pointed when a frame was captured, interpolated between FEEDBACK
/// samples.
struct AngleHistory: Sendable {
    private var samples: [(time: Double, yaw: Double, pitch: Double, zoom: Double)] = []
    private let span = 2.0

    mutating func record(time: Double, yaw: Double, pitch: Double, zoom: Double) {
        samples.append((time, yaw, pitch, zoom))
        if let first = samples.first, time - first.time > span { samples.removeFirst(samples.count / 4) }
    }

    var latestZoom: Double { samples.last?.zoom ?? 1 }

    func zoom(at time: Double) -> Double {
        guard let after = samples.firstIndex(where: { $0.time >= time }) else { return latestZoom }
        guard after > 0 else { return samples[0].zoom }
        let a = samples[after - 1], b = samples[after]
        let f = b.time > a.time ? (time - a.time) / (b.time - a.time) : 1
        return a.zoom + f * (b.zoom - a.zoom)
    }

    func angles(at time: Double) -> (yaw: Double, pitch: Double) {
        guard let after = samples.firstIndex(where: { $0.time >= time }) else {
            return samples.last.map { ($0.yaw, $0.pitch) } ?? (0, 0)
        }
        guard after > 0 else { return (samples[0].yaw, samples[0].pitch) }
        let a = samples[after - 1], b = samples[after]
        let f = b.time > a.time ? (time - a.time) / (b.time - a.time) : 1
        return (a.yaw + f * (b.yaw - a.yaw), a.pitch + f * (b.pitch - a.pitch))
    }
}

/// Observation times (capture times, or arrivals), for the frame-rate rule. Judged by the typical (median) interval of
/// the last few frames, both ways: ordinary jitter of a 30 fps camera (frames 25–41 ms apart) never
/// counts as too fast, a burst does, and a steadily slow stream is refused while one pause costs
/// nothing. A pause of a second or more starts a new stream. Beyond the median, the frames taken
/// must keep within the upper bound over time, with room for a few at once (`burst`, a camera
/// catching up after a stall): with the median alone, a flood arriving in pairs (one frame right
/// after another) kept half its intervals long and got twice the rate through.
struct ArrivalWindow: Sendable {
    enum Verdict { case ok, tooFast, tooSlow }
    private var times: [Double] = []
    /// Frames that may still come faster than the upper bound (a token bucket filled at that bound).
    private var allowance = Self.burst
    private var filledAt: Double?
    /// Intervals judged: enough that one early or late frame does not move the median.
    private static let intervals = 8
    /// Frames a camera may deliver at once after a stall.
    private static let burst = 4.0

    mutating func add(_ now: Double, allowed: ClosedRange<Double>) -> Verdict {
        let ceiling = allowed.upperBound * 1.25
        // A time before the last (capture stamps starting, stopping or out of order) starts the
        // median's stream afresh, as a pause does: its intervals would be negative. The allowance
        // fills only as the times move forward, so going back and forth gains nothing.
        if let last = times.last, now - last >= 1 || now < last { times.removeAll() }
        let forward = max(now, filledAt ?? now)
        allowance = min(Self.burst, allowance + (forward - (filledAt ?? forward)) * ceiling)
        filledAt = forward
        guard allowance >= 1 else { return .tooFast }
        times.append(now)
        if times.count > Self.intervals + 1 { times.removeFirst() }
        guard times.count >= 5 else { return taken() }
        let intervals = zip(times, times.dropFirst()).map { $1 - $0 }.sorted()
        let rate = 1 / max(1e-6, intervals[intervals.count / 2])
        if rate > ceiling {
            times.removeLast()  // a refused frame does not count toward the stream
            return .tooFast
        }
        return rate < allowed.lowerBound / 1.25 ? .tooSlow : taken()
    }

    private mutating func taken() -> Verdict {
        allowance -= 1
        return .ok
    }
}
