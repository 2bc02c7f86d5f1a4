import DockCore
import DockProtocol
import DockSim
import DockTracking
import Foundation

/// Which controller drives the stand in a scenario run.
enum SceneControllerKind: Sendable, CustomStringConvertible {
    /// dockd's: TrackingPipeline → TrackingController.
    case ours
    /// P on the latest framing error → velocity, with a dead zone (fraction of the FOV).
    case naive(gain: Double, deadZone: Double)
    /// Knows the true framing target (no detection latency, no noise), same motors and controller.
    case oracle

    var description: String {
        switch self {
        case .ours: "ours"
        case .naive(let g, let d): String(format: "naive(k=%.1f, dz=%.0f%%)", g, d * 100)
        case .oracle: "oracle"
        }
    }
}

/// The settings dockd's tracking is benchmarked with.
enum SceneTuning {
    static var control: TrackingControlConfiguration {
        var c = TrackingControlConfiguration.tuned
        // Tuning aid: DOCK_BENCH_TUNE="gain=6,deadBand=0.03" overrides (not used for the report).
        for item in (ProcessInfo.processInfo.environment["DOCK_BENCH_TUNE"] ?? "").split(separator: ",") {
            let kv = item.split(separator: "=")
            guard kv.count == 2, let v = Double(kv[1]) else { continue }
            switch kv[0] {
            case "gain": c.gain = v
            case "latency": c.latency = v
            case "maximumPrediction": c.maximumPrediction = v
            case "deadBand": c.deadBand = v
            case "settleBand": c.settleBand = v
            case "deadBandRate": c.deadBandRate = v
            case "rateSmoothing": c.rateSmoothing = v
            case "commandSmoothing": c.commandSmoothing = v
            case "feedforwardGain": c.feedforwardGain = v
            default: break
            }
        }
        return c
    }

    static var oracleControl: TrackingControlConfiguration {
        var c = control
        c.deadBand = 0
        c.rateSmoothing = 0
        c.commandSmoothing = 0
        c.latency = 0.03
        return c
    }

    static var tracker: TrackerSettings {
        .occlusionTolerant
    }

    static var framing: FramingSettings {
        var f = FramingSettings()
        // The benchmark's reference framing point has no lead room (see Benchmarks/Scenarios/README.md).
        f.leadTime = 0
        f.maximumLead = 0
        return f
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
    /// Tracker + selection + framing + control cost per detection frame, µs.
    var stepCosts: [Double]
    var maxSubjects: Int
}

enum SceneRunError: Error { case noCapabilities }
let debugScene = ProcessInfo.processInfo.environment["DOCK_BENCH_DEBUG"] != nil

/// Runs one scenario in virtual time over the wire: SimulatedStand bytes ↔ MotionController, the
/// scene's detector ↔ TrackingPipeline, and the chosen controller in between.
func runScene(_ scenario: SceneScenario, seed: UInt64, kind: SceneControllerKind, record: Bool) throws -> SceneRunResult {
    var standConfig = StandConfiguration()
    standConfig.handheld = scenario.handheld
    for i in standConfig.axes.indices {
        if standConfig.axes[i].axis == .yaw, let s = scenario.yawMaxSpeed { standConfig.axes[i].maxSpeed = s }
        if standConfig.axes[i].axis == .pitch, let s = scenario.pitchMaxSpeed { standConfig.axes[i].maxSpeed = s }
    }
    var stand = SimulatedStand(configuration: standConfig, seed: seed &+ 17)
    var scene = SceneSimulator(scenario: scenario, seed: seed)
    var decoder = FrameDecoder()
    var sequencer = FrameSequencer()
    var capabilities: Capabilities?
    let hello = FrameEncoder.encode(sequencer.frame(.hello(Hello(heartbeatTimeoutMs: 500, host: "dock-bench")), ackRequested: true))
    for case .success(let frame) in decoder.feed(stand.receive([0] + hello, atMicros: 0)) {
        if case .capabilities(let caps) = frame.message { capabilities = caps }
    }
    guard let capabilities else { throw SceneRunError.noCapabilities }
    var motion = MotionController(capabilities: capabilities)
    var baseEstimator = BaseAttitudeEstimator()

    let hfov = scene.horizontalFieldOfView, vfov = scene.verticalFieldOfView
    let camera = CameraModel(horizontalFieldOfView: hfov, verticalFieldOfView: vfov)
    var framer = Framer(settings: SceneTuning.framing)
    let roi = scenario.roi
    framer.regionOfInterest = NormalizedRect(x: roi.x, y: roi.y, width: roi.width, height: roi.height)
    var pipeline = TrackingPipeline(tracker: MultiSubjectTracker(settings: SceneTuning.tracker, seed: seed &+ 3),
                                    framer: framer, camera: camera)
    let faceLine = SceneTuning.framing.faceLine
    var controller: TrackingController
    switch kind {
    case .oracle: controller = TrackingController(configuration: SceneTuning.oracleControl)
    default: controller = TrackingController(configuration: SceneTuning.control)
    }

    var micros: UInt64 = 0
    let tick: UInt64 = 10_000
    var positions: [Axis: Double] = [:]
    var pending: [(frame: SceneFrame, estimatedAim: Aim)] = []
    var nextCapture = 0.0
    var target: TrackingTarget?
    var naiveRates: [Axis: Double] = [:]
    var tracked: (id: Int, person: Int?)?
    var samples: [SceneSample] = []
    samples.reserveCapacity(Int(scenario.duration * 100) + 2)
    var trace = SceneTrace()
    var costs: [Double] = []
    var maxSubjects = 0
    let period = 1 / scenario.detector.frameRate

    while Double(micros) / 1e6 < scenario.duration {
        micros += tick
        let now = Double(micros) / 1e6
        for case .success(let frame) in decoder.feed(stand.advance(toMicros: micros)) {
            switch frame.message {
            case .feedback(let feedback):
                motion.feedback(feedback, at: now)
                positions = motion.state.positions
            case .imu(let sample):
                baseEstimator.add(sample, at: now)
            default:
                break
            }
        }
        let base = stand.baseAttitude(atMicros: micros)
        let yawOut = stand.truth(.yaw)?.outputPosition ?? 0, pitchOut = stand.truth(.pitch)?.outputPosition ?? 0
        let worldAim = SceneAim.fromStand(yaw: yawOut, pitch: pitchOut, baseYaw: base.0, basePitch: base.1)
        // The aim dockd knows: the measured motor angles plus the base's attitude from the IMU.
        let baseAttitude = baseEstimator.current
        let estimatedAim = Aim(x: -((positions[.yaw] ?? 0) + baseAttitude.yaw), y: -((positions[.pitch] ?? 0) + baseAttitude.pitch))

        // Detector frames.
        if now + 1e-9 >= nextCapture {
            nextCapture += period
            if nextCapture < now { nextCapture = now + period }
            if case .oracle = kind {} else {
                pending.append((scene.capture(at: now, aim: worldAim), estimatedAim))
            }
        }
        while let first = pending.first, first.frame.deliveryTime <= now + 1e-9 {
            pending.removeFirst()
            let f = first.frame
            var observations: [Observation] = []
            observations.reserveCapacity(f.detections.count)
            for d in f.detections {
                let rect = NormalizedRect(x: d.rect.x, y: d.rect.y, width: d.rect.width, height: d.rect.height)
                observations.append(Observation(kind: d.kind == .face ? .face : .body,
                                                box: camera.angularBox(of: rect, aim: first.estimatedAim), confidence: d.confidence,
                                                speakingConfidence: d.speakingConfidence, lookingAtCameraConfidence: d.lookingAtCameraConfidence))
            }
            let t0 = DispatchTime.now().uptimeNanoseconds
            let step = pipeline.step(observations: observations, time: f.captureTime, aim: first.estimatedAim)
            var newTarget: TrackingTarget?
            if pipeline.framesOnlyLostSubjects(step) {
                // Every framed subject is hidden: hold the last target (its age stops the chase)
                // rather than follow a coasting prediction.
                newTarget = target
            } else if !step.framing.framed.isEmpty {
                var vx = 0.0, vy = 0.0, n = 0.0
                for id in step.framing.framed {
                    if let track = pipeline.tracker.tracks.first(where: { $0.id == id }) {
                        vx += track.velocity.x; vy += track.velocity.y; n += 1
                    }
                }
                if n > 0 { vx /= n; vy /= n }
                newTarget = TrackingTarget(yaw: -step.framing.desiredAim.x, pitch: -step.framing.desiredAim.y,
                                           yawRate: -vx, pitchRate: -vy, time: f.captureTime)
            }
            if case .ours = kind { _ = controller.command(target: newTarget, positions: positions, base: baseAttitude, at: now) }
            costs.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
            maxSubjects = max(maxSubjects, pipeline.tracker.subjects.count)
            target = newTarget
            if case .naive(let gain, let deadZone) = kind {
                naiveRates = [:]
                if newTarget != nil {
                    let ex = step.framing.desiredAim.x - first.estimatedAim.x, ey = step.framing.desiredAim.y - first.estimatedAim.y
                    naiveRates[.yaw] = abs(ex) / hfov > deadZone ? -gain * ex : 0
                    naiveRates[.pitch] = abs(ey) / vfov > deadZone ? -gain * ey : 0
                }
            }
            // Who the pipeline's primary really is: the true person whose body holds its box center.
            // A track not measured in this frame (coasting, hidden) keeps the person it had: its
            // identity cannot change without a detection, though its predicted box may drift onto
            // whoever hides it.
            if let primary = step.selection.primary, let track = pipeline.tracker.tracks.first(where: { $0.id == primary }) {
                if track.lastSeen >= f.captureTime || tracked?.id != primary.number {
                    let seen = camera.normalizedRect(of: track.face?.box ?? track.box, aim: first.estimatedAim)
                    tracked = (primary.number, scene.person(atImagePoint: seen.x + seen.width / 2, seen.y + seen.height / 2,
                                                            at: f.captureTime, aim: f.aim))
                }
            } else {
                tracked = nil
            }
        }

        // Ground truth sample.
        let sample = scene.sample(at: now, aim: worldAim, faceLine: faceLine, trackedID: tracked?.id, trackedPerson: tracked?.person)
        samples.append(sample)
        let intended = sample.intended, desired = sample.desired
        if debugScene, micros % 1_000_000 == 0, let d = desired, let t = target {
            print(String(format: "t=%.0f cam(%.3f,%.3f) truth(%.3f,%.3f) target(%.3f,%.3f) base(%.3f,%.3f)", now, worldAim.x, worldAim.y, d.x, d.y, -t.yaw, -t.pitch, base.0, base.1))
        }
        if record && micros % 20_000 == 0 {
            trace.time.append(now); trace.camera.append(worldAim); trace.desired.append(desired)
        }

        // Control.
        var rates: [Axis: Double]
        switch kind {
        case .ours:
            rates = controller.command(target: target, positions: positions, base: baseAttitude, at: now)
        case .naive:
            rates = naiveRates
        case .oracle:
            if let d = desired {
                let ahead = scene.desiredAim(truth: scene.truth(at: now + 0.01, aim: worldAim), intended: intended, aim: worldAim, faceLine: faceLine) ?? d
                let base2 = stand.baseAttitude(atMicros: micros + 10_000)
                let yaw = -d.x - base.0, pitch = -d.y - base.1
                let yaw2 = -ahead.x - base2.0, pitch2 = -ahead.y - base2.1
                let oracleTarget = TrackingTarget(yaw: yaw, pitch: pitch, yawRate: (yaw2 - yaw) / 0.01, pitchRate: (pitch2 - pitch) / 0.01, time: now)
                rates = controller.command(target: oracleTarget, positions: positions, at: now)
            } else {
                rates = controller.command(target: nil, positions: positions, at: now)
            }
        }
        if !positions.isEmpty, !rates.isEmpty { try? motion.setVelocity(rates, at: now) }
        var outgoing = motion.tick(at: now).messages
        if outgoing.isEmpty { outgoing.append(.heartbeat(uptimeMs: UInt32(micros / 1000))) }
        for message in outgoing {
            _ = decoder.feed(stand.receive(FrameEncoder.encode(sequencer.frame(message)), atMicros: micros))
        }
    }
    let metrics = SceneMetrics.compute(samples, marks: scenario.marks, horizontalFieldOfView: hfov, verticalFieldOfView: vfov,
                                       identityWindow: SceneTuning.tracker.maximumLostDuration)
    return SceneRunResult(metrics: metrics, trace: trace, stepCosts: costs, maxSubjects: maxSubjects)
}
