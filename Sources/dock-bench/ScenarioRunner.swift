import DockCore
import DockProtocol
import DockSim
import DockTracking
import EngineSimulation
import Foundation
import StandEngine

/// Who decides where the stand points in a scenario run. All three steer through dockd's engine,
/// as API clients would: ours with system tracking fed the detector's frames (`tracking.observe`),
/// the other two with tracking off and `motion.velocity`.
enum SceneControllerKind: Sendable, CustomStringConvertible {
    /// dockd's system tracking, exactly as shipped (`TrackingSettings.shipped`).
    case ours
    /// "Centre the biggest face" (or body): P on its image offset from the framing point, with a
    /// dead zone (fraction of the FOV), one command per detector frame.
    case naive(gain: Double, deadZone: Double)
    /// Knows where the subjects really are, as late as the detector would tell (its latency, its
    /// frame rate): the true framing aim and its rate, followed with dockd's control law without a
    /// dead band or smoothing. No noise, no misses, no false detections.
    case oracle

    var description: String {
        switch self {
        case .ours: "ours"
        case .naive(let g, let d): String(format: "naive(k=%.1f, dz=%.0f%%)", g, d * 100)
        case .oracle: "delayed oracle"
        }
    }
}

/// The oracle's control law: dockd's, without what only noisy detections need.
enum OracleControl {
    static var configuration: TrackingControlConfiguration {
        var c = TrackingSettings.shipped.control
        c.deadBand = 0
        c.settleBand = 0
        c.rateSmoothing = 0
        c.commandSmoothing = 0
        return c
    }
}

struct SceneTrace: Sendable {
    var time: [Double] = []
    var camera: [SceneAim] = []
    var desired: [SceneAim?] = []
}

struct SceneRunResult: Sendable {
    var metrics: SceneMetrics
    var trace: SceneTrace
    /// dockd's work per detector frame (tracking.observe through the engine: tracker, selection,
    /// framing, control), µs.
    var stepCosts: [Double]
    var maxSubjects: Int
    /// Velocity commands sent to the stand after the subject had been still and framed for a
    /// second (the still-subject target: none).
    var commandsWhileStill: Int
}

enum SceneRunError: Error, CustomStringConvertible {
    case notConnected
    case refused(String)

    var description: String {
        switch self {
        case .notConnected: "the simulated stand did not connect"
        case .refused(let why): "the engine refused the scenario's setup: \(why)"
        }
    }
}

/// Runs one scenario in virtual time through dockd's engine and the simulated stand, over the wire
/// protocol, with the scene's detector playing the camera app.
func runScene(_ scenario: SceneScenario, seed: UInt64, kind: SceneControllerKind, record: Bool) throws -> SceneRunResult {
    var standConfig = StandConfiguration()
    standConfig.handheld = scenario.handheld
    var rig = VirtualStandRig(stand: standConfig, seed: seed &+ 17)
    rig.recording = false
    guard rig.connect() else { throw SceneRunError.notConnected }
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
    var movingBefore = 0

    func worldAim() -> (aim: SceneAim, base: (Double, Double)) {
        let base = rig.stand.baseAttitude(atMicros: rig.micros)
        let yaw = rig.stand.truth(.yaw)?.outputPosition ?? 0, pitch = rig.stand.truth(.pitch)?.outputPosition ?? 0
        return (SceneAim.fromStand(yaw: yaw, pitch: pitch, baseYaw: base.0, basePitch: base.1), (base.0, base.1))
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
        while let frame = pending.first, frame.deliveryTime <= t + 1e-9 {
            pending.removeFirst()
            switch kind {
            case .ours:
                let detections = frame.detections.compactMap(Detection.init(scene:))
                let t0 = DispatchTime.now().uptimeNanoseconds
                _ = rig.command(.observe(ObservedFrame(detections: detections, captureTime: start + frame.captureTime)), from: app)
                costs.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
                maxSubjects = max(maxSubjects, rig.engine.tracking.pipeline.tracker.subjects.count)
                tracked = primary(of: rig.engine.tracking, frame: frame, scene: scene, previous: tracked)
            case .naive(let gain, let deadZone):
                let chosen = NaiveClient.biggest(frame.detections)
                let rates = chosen.map { NaiveClient.rates(for: $0, roi: roi, faceLine: faceLine, camera: camera, gain: gain, deadZone: deadZone) }
                _ = rig.command(.velocity(rates ?? [.yaw: 0, .pitch: 0]), from: app)
                tracked = chosen.map { ($0.personID, $0.personID) }
            case .oracle:
                // What the detector would report of this frame, but true: the framing aim at capture.
                let captureAim = frame.aim
                if let desired = scene.desiredAim(at: frame.captureTime, aim: captureAim, faceLine: faceLine),
                   let ahead = scene.desiredAim(at: frame.captureTime + 0.01, aim: captureAim, faceLine: faceLine) {
                    let b0 = rig.stand.baseAttitude(atMicros: UInt64((frame.captureTime + start - rig.epoch) * 1e6))
                    let b1 = rig.stand.baseAttitude(atMicros: UInt64((frame.captureTime + 0.01 + start - rig.epoch) * 1e6))
                    let yaw = -desired.x - b0.0, pitch = -desired.y - b0.1
                    oracleTarget = TrackingTarget(yaw: yaw, pitch: pitch, yawRate: ((-ahead.x - b1.0) - yaw) / 0.01,
                                                  pitchRate: ((-ahead.y - b1.1) - pitch) / 0.01, time: start + frame.captureTime)
                } else {
                    oracleTarget = nil
                }
                tracked = frame.intended.first.map { ($0, $0) }
            }
        }
        if case .oracle = kind, step % 10 == 0, let state = rig.engine.motionState, !state.positions.isEmpty {
            let attitude = BaseAttitude(yaw: base.0, pitch: base.1)
            let rates = oracle.command(target: oracleTarget, positions: state.positions, base: attitude, at: rig.now)
            _ = rig.command(.velocity(rates), from: app)
        }

        guard step % 10 == 0 else { continue }
        let sample = scene.sample(at: t, aim: aim, faceLine: faceLine, trackedID: tracked?.id, trackedPerson: tracked?.person)
        samples.append(sample)
        // The still-subject rule: once the ideal aim has not moved for a second and the camera is
        // on it, nothing more should be sent but keep-alives.
        let moving = rig.movingCommands - movingBefore
        movingBefore = rig.movingCommands
        if let desired = sample.desired, samples.count > 1, let before = samples[samples.count - 2].desired,
           hypot(desired.x - before.x, desired.y - before.y) < 1e-4 {
            stillSince = stillSince ?? t
            if t - stillSince! > 1 { commandsWhileStill += moving }
        } else {
            stillSince = nil
        }
        if record && step % 20 == 0 {
            trace.time.append(t); trace.camera.append(aim); trace.desired.append(sample.desired)
        }
    }
    let metrics = SceneMetrics.compute(samples, marks: scenario.marks, horizontalFieldOfView: hfov, verticalFieldOfView: vfov,
                                       identityWindow: TrackingSettings.shipped.tracker.maximumLostDuration)
    return SceneRunResult(metrics: metrics, trace: trace, stepCosts: costs, maxSubjects: maxSubjects, commandsWhileStill: commandsWhileStill)
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
enum NaiveClient {
    static func biggest(_ detections: [SceneDetection]) -> SceneDetection? {
        let faces = detections.filter { $0.kind == .face }
        return (faces.isEmpty ? detections : faces).max { $0.rect.area < $1.rect.area }
    }

    /// Yaw/pitch rates that move the box's anchor (a face's centre, where a body's face would be)
    /// toward the framing point: the ROI's centre across, the face line down.
    static func rates(for detection: SceneDetection, roi: SceneRect, faceLine: Double, camera: CameraModel, gain: Double,
                      deadZone: Double) -> [Axis: Double] {
        let r = detection.rect
        let anchorY = detection.kind == .face ? r.centerY : r.y + 0.1 * r.height
        let aimNow = Aim(x: 0, y: 0)
        let point = camera.angularPoint(normalizedX: r.centerX, normalizedY: anchorY, aim: aimNow)
        let want = camera.angularPoint(normalizedX: roi.centerX, normalizedY: roi.y + faceLine * roi.height, aim: aimNow)
        let ex = point.x - want.x, ey = point.y - want.y
        return [.yaw: abs(ex) / camera.horizontalFieldOfView > deadZone ? -gain * ex : 0,
                .pitch: abs(ey) / camera.verticalFieldOfView > deadZone ? -gain * ey : 0]
    }
}

extension Detection {
    /// A scene detection as the camera app sends it (upper-left origin, upright).
    init?(scene d: SceneDetection) {
        guard d.rect.width > 0, d.rect.height > 0 else { return nil }
        self.init(kind: d.kind == .face ? .face : .body, rect: NormalizedRect(x: d.rect.x, y: d.rect.y, width: d.rect.width, height: d.rect.height),
                  confidence: d.confidence, speaking: d.speakingConfidence, lookingAtCamera: d.lookingAtCameraConfidence)
    }
}
