#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import DockCore
import DockProtocol
import DockSim
import DockTracking
import StandEngine

/// Who decides where the stand points in a scenario run. All three steer through dockd's engine,
/// as API clients would: ours with system tracking fed the detector's frames (`tracking.observe`),
/// the other two with tracking off and `motion.velocity`.
public enum SceneControllerKind: Sendable, CustomStringConvertible {
    /// dockd's system tracking, exactly as shipped (`TrackingSettings.shipped`).
    case ours
    /// "Centre the biggest face" (or body): P on its image offset from the framing point, with a
    /// dead zone (fraction of the FOV), one command per detector frame.
    case naive(gain: Double, deadZone: Double)
    /// Sees what a perfect detector would: the true framing aim and its rate while the subject can
    /// be seen (not hidden, in the room), as late as the detector would tell (its latency, its frame
    /// rate), followed with dockd's control law without a dead band, smoothing or trailing (its
    /// rate is true, not a filter's lagging one, so it predicts both axes); while the subject
    /// is hidden it holds its last target. No noise, no misses, no false detections.
    case oracle

    public var description: String {
        switch self {
        case .ours: "ours"
        case .naive(let g, let d): String(cFormat: "naive(k=%.1f, dz=%.0f%%)", g, d * 100)
        case .oracle: "delayed oracle"
        }
    }
}

/// The oracle's control law: dockd's, without what only noisy detections need.
public enum OracleControl {
    public static var configuration: TrackingControlConfiguration {
        var c = TrackingSettings.shipped.control
        c.deadBand = 0
        c.settleBand = 0
        c.rateSmoothing = 0
        c.commandSmoothing = 0
        c.trailing = [:]
        return c
    }
}

public struct SceneTrace: Sendable {
    public var time: [Double] = []
    public var camera: [SceneAim] = []
    public var desired: [SceneAim?] = []
    /// What dockd's engine did about its subject, from each time on (changes only; dockd's runs).
    public var phases: [(time: Double, phase: TrackingPhase)] = []
    public init() {}
}

public struct SceneRunResult: Sendable {
    public var metrics: SceneMetrics
    /// With a zoom: how often the subject's height was the shot's, how often the zoom turned around.
    public var shotFigures: ShotFigures
    public var trace: SceneTrace
    /// dockd's work per detector frame (tracking.observe through the engine: tracker, selection,
    /// framing, control), µs.
    public var stepCosts: [Double]
    public var maxSubjects: Int
    /// Velocity commands sent to the stand after the subject had been still and framed for a
    /// second (the still-subject target: none).
    public var commandsWhileStill: Int
    /// Commands the engine refused, by error (a frame rate it judged wrong, a turn out of range).
    public var refused: [String: Int]
    /// RMS framing error (fraction of the FOV) while the ideal aim had been still for over a second.
    public var stillError: Double?
}

public enum SceneRunError: Error, CustomStringConvertible {
    case notConnected
    case refused(String)

    public var description: String {
        switch self {
        case .notConnected: "the stand did not connect"
        case .refused(let why): "the engine refused the scenario's setup: \(why)"
        }
    }
}

/// Runs one scenario in virtual time through dockd's engine and the simulated stand (`stand`, made
/// hand-held and given the scenario's zoom as it asks), over the wire protocol, with the scene's
/// detector playing the camera app.
public func runScene(_ scenario: SceneScenario, seed: UInt64, kind: SceneControllerKind, record: Bool,
                     stand: StandConfiguration = StandConfiguration()) throws -> SceneRunResult {
    var standConfig = stand
    standConfig.handheld = scenario.handheld
    if let zoom = scenario.zoom {
        standConfig.axes.append(AxisModel(axis: .zoom, continuous: false, min: 1, max: zoom.max, maxSpeed: zoom.maxSpeed, maxAccel: 4 * zoom.maxSpeed))
    }
    return try runScene(scenario, seed: seed, kind: kind, record: record, on: VirtualHost(stand: standConfig, seed: seed &+ 17))
}

/// Runs one scenario in virtual time through dockd's engine, the host's driver and its peer (not
/// yet connected), with the scene's detector playing the camera app.
public func runScene<Peer: SceneCamera>(_ scenario: SceneScenario, seed: UInt64, kind: SceneControllerKind, record: Bool,
                                        on host: VirtualHost<Peer>) throws -> SceneRunResult {
    // The writes are cleared at every sample: what was sent since is the sample's motion commands.
    var rig = host
    rig.recordingNotifications = false
    guard rig.connect(timeout: 10) else { throw SceneRunError.notConnected }
    var scene = SceneSimulator(scenario: scenario, seed: seed)
    let app = ClientRef(id: 1)
    let hfov = scene.horizontalFieldOfView, vfov = scene.verticalFieldOfView
    let camera = CameraModel(horizontalFieldOfView: hfov, verticalFieldOfView: vfov)
    // The camera app's setup, as `dock-bench live` makes it through the API.
    func setup(_ command: EngineCommand) throws {
        do { _ = try rig.send(command, from: app) } catch { throw SceneRunError.refused("\(error)") }
    }
    try setup(.camera(camera))
    let roi = scenario.roi
    if scenario.regionOfInterest != nil {
        try setup(.regionOfInterest(NormalizedRect(x: roi.x, y: roi.y, width: roi.width, height: roi.height)))
    }
    var limits: [Axis: LimitRequest] = [:]
    if let s = scenario.yawMaxSpeed { limits[.yaw] = LimitRequest(maxSpeed: s) }
    if let s = scenario.pitchMaxSpeed { limits[.pitch] = LimitRequest(maxSpeed: s) }
    if !limits.isEmpty { try setup(.limits(limits)) }
    if case .ours = kind { try setup(.setTracking(true)) } else { try setup(.setTracking(false)) }
    if case .ours = kind, let policy = scenario.lostPolicy {
        guard let policyKind = LostSubjectPolicy.Kind(rawValue: policy.policy) else { throw SceneRunError.refused("no lost-subject policy \(policy.policy)") }
        let preset = policy.preset.map { NamedPose(name: "scenario", yaw: $0.yaw, pitch: $0.pitch) }
        try setup(.lostPolicy(LostSubjectPolicy(kind: policyKind, after: policy.after, preset: preset, searchSeconds: policy.searchSeconds)))
    }
    var sweeps = scenario.sweeps.sorted { $0.t < $1.t }
    let shot = try scenario.zoom.map { zoom throws in
        guard let shot = ShotSize(rawValue: zoom.shot) else { throw SceneRunError.refused("no shot \(zoom.shot)") }
        return shot
    }
    if case .ours = kind, let shot { try setup(.framing(nil, shot: shot)) }
    var shotFigures = ShotFigures(shot: shot, maxZoom: scenario.zoom?.max ?? 1)

    let faceLine = TrackingSettings.shipped.framing.faceLine
    let start = rig.now
    var pending: [SceneFrame] = []
    var nextCapture = 0.0
    let period = 1 / scenario.detector.frameRate
    var tracked: (id: Int, person: Int?)?
    var samples: [SceneSample] = []
    samples.reserveCapacity(Int(scenario.duration * 100) + 2)
    var trace = SceneTrace()
    var costs: [Double] = []
    var maxSubjects = 0
    var oracle = TrackingController(configuration: OracleControl.configuration)
    var oracleTarget: TrackingTarget?
    var stillSince: Double?
    var commandsWhileStill = 0
    var refused: [String: Int] = [:]
    var stillErrors: [Double] = []
    var taps = scenario.taps.sorted { $0.t < $1.t }
    var turns = scenario.turns.sorted { $0.t < $1.t }
    /// The naive client after a tap: the image point of the face it follows.
    var naiveFollow: (x: Double, y: Double)?
    /// The app's own turn (motion.orient) runs: the naive and oracle clients do not steer over it.
    func turning() -> Bool {
        if case .orientation? = rig.engine.motionState?.activity { return true }
        return false
    }

    func worldAim() -> (aim: SceneAim, base: (Double, Double)) {
        let base = rig.peer.sceneBase(atMicros: rig.micros)
        let camera = rig.peer.sceneAim
        return (SceneAim.fromStand(yaw: camera.yaw, pitch: camera.pitch, zoom: camera.zoom, baseYaw: base.yaw, basePitch: base.pitch), (base.yaw, base.pitch))
    }

    var step = 0
    while rig.now - start < scenario.duration {
        rig.step()
        step += 1
        let t = rig.now - start
        let (aim, base) = worldAim()

        if t + 1e-9 >= nextCapture {
            nextCapture += period
            if nextCapture < t { nextCapture = t + period }
            pending.append(scene.capture(at: t, aim: aim))
        }
        if let turn = turns.first, turn.t <= t {
            turns.removeFirst()
            var target: [Axis: Double] = [.yaw: turn.yaw]
            if let pitch = turn.pitch { target[.pitch] = pitch }
            if case .failure(let e)? = rig.command(.orient(target, relative: false, duration: nil), from: app).reply { refused["\(e)", default: 0] += 1 }
        }
        if case .ours = kind, let sweep = sweeps.first, sweep.t <= t {
            sweeps.removeFirst()
            let pan = Pan.sweep(Sweep(from: sweep.from, to: sweep.to, rate: sweep.rate, repeats: sweep.repeat))
            if case .failure(let e)? = rig.command(.pan(pan), from: app).reply { refused["\(e)", default: 0] += 1 }
        }
        while let frame = pending.first, frame.deliveryTime <= t + 1e-9 {
            pending.removeFirst()
            // A tap on the person's face as this frame shows it (retried on later frames until it finds a subject).
            var tapPoint: (x: Double, y: Double)?
            var expiredTap: Double?
            if let tap = taps.first, tap.t <= frame.captureTime {
                if let face = frame.truth.first(where: { $0.id == tap.person })?.faceRect { tapPoint = (face.centerX, face.centerY) }
                if frame.captureTime - tap.t > 1 { expiredTap = tap.t }
            }
            // The tap is done once it found its subject (removed below), or given up after a second.
            defer { if let expiredTap, taps.first?.t == expiredTap { taps.removeFirst() } }
            switch kind {
            case .ours:
                let detections = frame.detections.compactMap(Detection.init(scene:))
                let t0 = DispatchTime.now().uptimeNanoseconds
                if case .failure(let e)? = rig.command(.observe(ObservedFrame(detections: detections, captureTime: start + frame.captureTime)), from: app).reply {
                    refused["\(e)", default: 0] += 1
                }
                costs.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
                if let point = tapPoint, case .success? = rig.command(.selectAt(x: point.x, y: point.y), from: app).reply { taps.removeFirst() }
                maxSubjects = max(maxSubjects, rig.engine.tracking.pipeline.tracker.subjects.count)
                tracked = primary(of: rig.engine.tracking, frame: frame, scene: scene, previous: tracked)
            case .naive(let gain, let deadZone):
                if let point = tapPoint { naiveFollow = point; taps.removeFirst() }
                let chosen = naiveFollow.map { NaiveClient.nearest(frame.detections, to: $0) } ?? NaiveClient.biggest(frame.detections)
                if let chosen, naiveFollow != nil { naiveFollow = (chosen.rect.centerX, chosen.rect.centerY) }
                if turning() { break }
                let rates = chosen.map { NaiveClient.rates(for: $0, roi: roi, faceLine: faceLine, camera: camera, gain: gain, deadZone: deadZone) }
                _ = rig.command(.velocity(rates ?? [.yaw: 0, .pitch: 0]), from: app)
                tracked = chosen.map { ($0.personID, $0.personID) }
            case .oracle:
                if tapPoint != nil { taps.removeFirst() }
                // What a perfect detector would report of this frame: the true framing aim at
                // capture, while the subject can be seen; while it is hidden or gone there is no
                // new information, and the last target is held (as dockd does).
                let captureAim = frame.aim
                let visible = frame.truth.first { $0.id == frame.intended.first }.map { $0.present && ($0.faceVisible || $0.bodyVisible) } ?? false
                if !visible, oracleTarget != nil {
                    // hold
                } else if let desired = scene.desiredAim(at: frame.captureTime, aim: captureAim, faceLine: faceLine),
                   let ahead = scene.desiredAim(at: frame.captureTime + 0.01, aim: captureAim, faceLine: faceLine) {
                    // In the world (the stand's angles plus the base's attitude), as dockd's targets are.
                    oracleTarget = TrackingTarget(yaw: -desired.x, pitch: -desired.y, yawRate: (desired.x - ahead.x) / 0.01,
                                                  pitchRate: (desired.y - ahead.y) / 0.01, time: start + frame.captureTime)
                } else {
                    oracleTarget = nil
                }
                tracked = frame.intended.first.map { ($0, $0) }
            }
        }
        if case .oracle = kind, step % 10 == 0, !turning(), let state = rig.engine.motionState, !state.positions.isEmpty {
            let ahead = rig.peer.sceneBase(atMicros: rig.micros + 1000)
            let attitude = BaseAttitude(yaw: base.0, pitch: base.1, yawRate: (ahead.0 - base.0) / 0.001, pitchRate: (ahead.1 - base.1) / 0.001)
            let rates = oracle.command(target: oracleTarget, positions: state.positions, base: attitude, at: rig.now)
            _ = rig.command(.velocity(rates), from: app)
        }

        guard step % 10 == 0 else { continue }
        if case .ours = kind {
            let phase = rig.engine.phase(at: rig.now)
            if phase != trace.phases.last?.phase ?? .tracking { trace.phases.append((t, phase)) }
        }
        let sample = scene.sample(at: t, aim: aim, faceLine: faceLine, trackedID: tracked?.id, trackedPerson: tracked?.person)
        samples.append(sample)
        shotFigures.add(scene.truth(at: t, aim: aim), intended: scenario.intended(at: t), zoom: aim.zoom)
        shotFigures.addZoom(velocity: rig.peer.sceneAim.zoomVelocity)
        // The still-subject rule: once the ideal aim has not moved for a second and the camera is
        // on it, nothing more should be sent but keep-alives.
        let moving = Peer.motionCommands(in: rig.written)
        rig.clearRecords()
        if let desired = sample.desired, samples.count > 1, let before = samples[samples.count - 2].desired,
           hypot(desired.x - before.x, desired.y - before.y) < 1e-4 {
            stillSince = stillSince ?? t
            if t - stillSince! > 1 {
                commandsWhileStill += moving
                let ex = (desired.x - aim.x) / hfov, ey = (desired.y - aim.y) / vfov
                stillErrors.append(ex * ex + ey * ey)
            }
        } else {
            stillSince = nil
        }
        if record && step % 20 == 0 {
            trace.time.append(t); trace.camera.append(aim); trace.desired.append(sample.desired)
        }
    }
    let metrics = SceneMetrics.compute(samples, marks: scenario.marks, horizontalFieldOfView: hfov, verticalFieldOfView: vfov,
                                       identityWindow: TrackingSettings.shipped.tracker.maximumLostDuration)
    return SceneRunResult(metrics: metrics, shotFigures: shotFigures, trace: trace, stepCosts: costs, maxSubjects: maxSubjects, commandsWhileStill: commandsWhileStill,
                          refused: refused, stillError: stillErrors.isEmpty ? nil : (stillErrors.reduce(0, +) / Double(stillErrors.count)).squareRoot())
}

/// Who the engine's primary really is: the true person whose body holds its box center. A track
/// not measured in this frame (coasting, hidden) keeps the person it had: its identity cannot
/// change without a detection, though its predicted box may drift onto whoever hides it.
private func primary(of tracking: TrackingLoop, frame: SceneFrame, scene: SceneSimulator,
                     previous: (id: Int, person: Int?)?) -> (id: Int, person: Int?)? {
    guard let step = tracking.lastStep, let primary = step.selection.primary,
          let track = tracking.pipeline.tracker.tracks.first(where: { $0.id == primary }) else { return nil }
    guard track.lastSeen >= step.time || previous?.id != primary.number else { return previous }
    let aim = tracking.aim(at: step.time)
    let seen = tracking.camera.normalizedRect(of: track.face?.box ?? track.box, aim: aim)
    return (primary.number, scene.person(atImagePoint: seen.x + seen.width / 2, seen.y + seen.height / 2, at: frame.captureTime, aim: frame.aim))
}

/// The naive client: centre the biggest face on the framing point.
public enum NaiveClient {
    /// After a tap: the face (else body) nearest the point it followed last.
    public static func nearest(_ detections: [SceneDetection], to point: (x: Double, y: Double)) -> SceneDetection? {
        let faces = detections.filter { $0.kind == .face }
        return (faces.isEmpty ? detections : faces).min {
            hypot($0.rect.centerX - point.x, $0.rect.centerY - point.y) < hypot($1.rect.centerX - point.x, $1.rect.centerY - point.y)
        }
    }

    public static func biggest(_ detections: [SceneDetection]) -> SceneDetection? {
        let faces = detections.filter { $0.kind == .face }
        return (faces.isEmpty ? detections : faces).max { $0.rect.area < $1.rect.area }
    }

    /// Yaw/pitch rates that move the box's anchor (a face's centre, where a body's face would be,
    /// an object's centre) toward the framing point: the ROI's centre across, the face line down
    /// (for an object the ROI's centre).
    public static func rates(for detection: SceneDetection, roi: SceneRect, faceLine: Double, camera: CameraModel, gain: Double,
                      deadZone: Double) -> [Axis: Double] {
        let r = detection.rect
        let anchorY = detection.kind == .body ? r.y + 0.1 * r.height : r.centerY
        let lineY = detection.kind == .object ? 0.5 : faceLine
        let aimNow = Aim(x: 0, y: 0)
        let point = camera.angularPoint(normalizedX: r.centerX, normalizedY: anchorY, aim: aimNow)
        let want = camera.angularPoint(normalizedX: roi.centerX, normalizedY: roi.y + lineY * roi.height, aim: aimNow)
        let ex = point.x - want.x, ey = point.y - want.y
        return [.yaw: abs(ex) / camera.horizontalFieldOfView > deadZone ? -gain * ex : 0,
                .pitch: abs(ey) / camera.verticalFieldOfView > deadZone ? -gain * ey : 0]
    }
}

extension Detection {
    /// A scene detection as the camera app sends it (upper-left origin, upright).
    public init?(scene d: SceneDetection) {
        guard d.rect.width > 0, d.rect.height > 0 else { return nil }
        var joints: [BodyJoint: BodyKeypoint] = [:]
        for (name, point) in d.keypoints {
            if let joint = BodyJoint(rawValue: name) { joints[joint] = BodyKeypoint(x: point.x, y: point.y, visibility: point.visibility) }
        }
        let kind: ObservationKind = switch d.kind {
        case .face: .face
        case .body: .body
        case .object: .object
        }
        self.init(kind: kind, rect: NormalizedRect(x: d.rect.x, y: d.rect.y, width: d.rect.width, height: d.rect.height),
                  confidence: d.confidence, speaking: d.speakingConfidence, lookingAtCamera: d.lookingAtCameraConfidence,
                  pose: joints.isEmpty ? nil : BodyPose(joints: joints))
    }
}
