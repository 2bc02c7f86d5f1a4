#if canImport(Glibc)
import Glibc
#endif
import DockCore
import DockProtocol
import DockTracking

/// System tracking for one stand: observations in (normalized boxes at a capture time), a target
/// for the TrackingController out. Subjects are tracked in the stand's angular frame: each box goes
/// through the camera model at the motor angles of its capture time plus the base's attitude from
/// the IMU (hand-held), so neither the stand's own motion nor its base's is taken for the subject's.
struct StandTracking: Sendable {
    private(set) var pipeline: TrackingPipeline
    var controller: TrackingController
    /// The camera before zoom: the configuration's, or what a client set with `camera.set`.
    private var baseCamera: CameraModel
    private(set) var zoom = 1.0
    var rateLimits: ClosedRange<Double> = 10...30

    /// Motor angles over the last 2 s: the aim at any capture time.
    private var history: [(time: Double, yaw: Double, pitch: Double)] = []
    private var base = BaseAttitudeEstimator()
    private var arrivals: [Double] = []
    private(set) var lastStep: TrackingStep?
    private var lastStepAim = Aim(x: 0, y: 0)
    private(set) var target: TrackingTarget?
    private(set) var lastObservation = -Double.infinity

    init(camera: CameraModel, seed: UInt64, control: TrackingControlConfiguration = .tuned) {
        controller = TrackingController(configuration: control)
        baseCamera = camera
        pipeline = TrackingPipeline(tracker: MultiSubjectTracker(settings: .occlusionTolerant, seed: seed), camera: camera)
    }

    var inFrame: Bool { lastStep?.framing.inFrame ?? false }

    /// True while a stream of observations is alive: tracking then owns the motors.
    func isActive(at now: Double) -> Bool { now - lastObservation < 1.0 }

    mutating func recordFeedback(time: Double, yaw: Double, pitch: Double) {
        history.append((time, yaw, pitch))
        if let first = history.first, time - first.time > 2 { history.removeFirst(history.count / 4) }
    }

    mutating func recordImu(_ sample: ImuSample, time: Double) {
        base.add(sample, at: time)
    }

    /// The camera's aim when a frame was captured (x right, y down: the tracker's convention).
    func aim(at time: Double) -> Aim {
        let motors = motorAngles(at: time), tilt = base.attitude(at: time)
        return Aim(x: -(motors.yaw + tilt.yaw), y: -(motors.pitch + tilt.pitch))
    }

    private func motorAngles(at time: Double) -> (yaw: Double, pitch: Double) {
        guard let after = history.firstIndex(where: { $0.time >= time }) else {
            return history.last.map { ($0.yaw, $0.pitch) } ?? (0, 0)
        }
        guard after > 0 else { return (history[0].yaw, history[0].pitch) }
        let a = history[after - 1], b = history[after]
        let f = b.time > a.time ? (time - a.time) / (b.time - a.time) : 1
        return (a.yaw + f * (b.yaw - a.yaw), a.pitch + f * (b.pitch - a.pitch))
    }

    // MARK: - Camera

    mutating func setCamera(_ camera: CameraModel) {
        baseCamera = camera  // a later zoom scales this one, not the configuration's
        pipeline.camera = camera.zoomed(by: zoom)
    }

    /// A zoom event: a factor of 2 doubles the subject's size, i.e. halves tan(fov/2).
    mutating func applyZoom(_ factor: Double) {
        guard factor.isFinite, factor > 0 else { return }
        zoom = min(20, max(0.05, zoom * factor))
        pipeline.camera = baseCamera.zoomed(by: zoom)
    }

    // MARK: - Observations

    /// DockKit's steady 10–30 Hz: a burst faster than the range is refused; a stream slower than it
    /// is refused too, except after a pause of a second or more, which starts a new stream.
    mutating func checkRate(arrival now: Double) throws(RPCError) {
        if let last = arrivals.last, now - last > 1 { arrivals.removeAll() }
        arrivals.append(now)
        if arrivals.count > 8 { arrivals.removeFirst() }
        guard arrivals.count >= 5, let first = arrivals.first else { return }
        let rate = Double(arrivals.count - 1) / max(1e-6, now - first)
        if rate > rateLimits.upperBound * 1.2 { arrivals.removeLast(); throw .frameRateTooHigh }
        // Too slow judged by the typical (median) interval, so that one pause under a second (a
        // stream that restarts, a hiccup) costs no frame, while a steadily slow stream is refused.
        let intervals = zip(arrivals, arrivals.dropFirst()).map { $1 - $0 }.sorted()
        if 1 / max(1e-6, intervals[intervals.count / 2]) < rateLimits.lowerBound / 1.2 { throw .frameRateTooLow }
    }

    /// One frame's detections, boxes normalized with an upper-left origin in the upright image.
    mutating func observe(_ detections: [Detection], captureTime: Double, now: Double) {
        let aim = aim(at: captureTime)
        let observations = detections.map { d in
            Observation(kind: d.kind, box: pipeline.camera.angularBox(of: d.rect, aim: aim), confidence: d.confidence,
                        speakingConfidence: d.speaking, lookingAtCameraConfidence: d.lookingAtCamera, faceYaw: d.faceYaw)
        }
        let step = pipeline.step(observations: observations, time: captureTime, aim: aim)
        lastStep = step
        lastStepAim = aim
        lastObservation = now
        // Every framed subject hidden: hold the last target (its age stops the chase, and the
        // controller's lost behaviour starts once the tracker lets the subjects go).
        if !pipeline.framesOnlyLostSubjects(step) {
            target = Self.target(step, tracks: pipeline.tracker.tracks, time: captureTime)
        }
    }

    /// The framer's desired aim as stand angles, moving with the primary subject when re-centering.
    private static func target(_ step: TrackingStep, tracks: [Track], time: Double) -> TrackingTarget? {
        guard let primary = step.selection.selected.first, let track = tracks.first(where: { $0.id == primary }) else { return nil }
        let desired = step.framing.desiredAim
        // Feedforward only while re-centering: inside the dead band a still camera is the point.
        let velocity = step.framing.isRecentering ? track.velocity : (x: 0, y: 0)
        return TrackingTarget(yaw: -desired.x, pitch: -desired.y, yawRate: -velocity.x, pitchRate: -velocity.y, time: time)
    }

    /// Rates for the motors while tracking is active, nil when it is not.
    mutating func command(positions: [Axis: Double], at now: Double) -> [Axis: Double]? {
        guard isActive(at: now) else { return nil }
        return controller.command(target: target, positions: positions, base: base.current, at: now)
    }

    // MARK: - Selection and framing

    mutating func select(ids: [String]) throws(RPCError) {
        var chosen: [SubjectIdentifier] = []
        for text in ids {
            guard let id = pipeline.tracker.subjects.first(where: { $0.id.description.lowercased() == text.lowercased() })?.id else {
                throw .invalidParameter("no tracked subject \(text)")
            }
            chosen.append(id)
        }
        pipeline.selector.select(ids: chosen)
    }

    /// Selects the subject at a normalized point (upper-left origin) of the latest frame.
    mutating func select(atX x: Double, y: Double) throws(RPCError) -> String {
        do {
            let id = try pipeline.selectSubject(atNormalizedX: x, y: y, aim: lastStepAim)
            pipeline.selector.select(ids: [id])
            return id.description
        } catch {
            throw .noSubjectFound
        }
    }

    mutating func setFraming(_ mode: FramingMode) { pipeline.framer.mode = mode }
    mutating func setRegionOfInterest(_ rect: NormalizedRect) { pipeline.framer.regionOfInterest = rect }

    /// Back to DockKit's defaults: automatic framing, the whole frame, automatic selection.
    mutating func resetClientSettings() {
        pipeline.framer.mode = .automatic
        pipeline.framer.regionOfInterest = .fullFrame
        pipeline.selector.select(ids: [])
    }

    /// The camera turned around (flip): what was tracked is behind it now. Identifiers stay unique
    /// for the session.
    mutating func forgetSubjects() {
        pipeline.tracker.forgetAll()
        target = nil
        lastStep = nil
        controller.reset()
    }

    // MARK: - The tracking-state stream

    func stateJSON(stand: String, time: Double) -> JSONValue {
        guard let step = lastStep else {
            return ["stand": JSONValue(stand), "time": JSONValue(time), "subjects": [], "in_frame": false]
        }
        var subjects: [JSONValue] = []
        for s in pipeline.subjectStates(of: step, aim: lastStepAim) {
            subjects.append([
                "id": JSONValue(s.id.description), "kind": s.category == .person ? "person" : "object",
                "rect": Self.rectJSON(s.rect), "face_rect": s.faceRect.map(Self.rectJSON) ?? .null,
                "saliency_rank": JSONValue(s.saliencyRank),
                "speaking_confidence": s.speakingConfidence.map { JSONValue($0) } ?? .null,
                "looking_at_camera_confidence": s.lookingAtCameraConfidence.map { JSONValue($0) } ?? .null,
                "selected": JSONValue(step.selection.selected.contains(s.id)),
            ])
        }
        return ["stand": JSONValue(stand), "time": JSONValue(time), "capture_time": JSONValue(step.time),
                "subjects": .array(subjects), "in_frame": JSONValue(step.framing.inFrame)]
    }

    static func rectJSON(_ r: NormalizedRect) -> JSONValue {
        ["x": JSONValue(r.x), "y": JSONValue(r.y), "width": JSONValue(r.width), "height": JSONValue(r.height)]
    }
}

/// One detection as a client sent it, already turned upright and to an upper-left origin.
struct Detection: Sendable {
    var kind: ObservationKind
    var rect: NormalizedRect
    var confidence: Double
    var faceYaw: Double?
    var speaking: Double?
    var lookingAtCamera: Double?
}
