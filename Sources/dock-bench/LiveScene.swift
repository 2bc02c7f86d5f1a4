#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DockAPI
import DockClient
import DockJSON
import DockSim
import VirtualTime
import StandEngine

/// What a live run saw: the stand's path, the primary subject dockd reported, and how its
/// observations were received.
struct LiveRecord {
    /// The primary subject of one `tracking.state`, in the frame captured at `captureTime`.
    struct Primary {
        /// dockd's clock.
        var captureTime: Double
        var id: String
        /// Image point of its face (or body) center, upper-left origin.
        var point: (x: Double, y: Double)
        /// This frame measured it (`last_seen` is the state's `capture_time`); false while its box
        /// is a prediction.
        var measured: Bool
    }

    var path = StandPath()
    /// Each `tracking.state` by arrival (our clock): its primary, nil when there is none.
    var primaries: [(arrival: Double, primary: Primary?)] = []
    /// Each `tracking.phase` by arrival (our clock).
    var phases: [(arrival: Double, phase: TrackingPhase)] = []
    var framesSent = 0
    /// Frames not captured because the loop woke more than a frame period late.
    var framesSkipped = 0
    /// tracking.observe errors by JSON-RPC code.
    var refused: [Int: Int] = [:]
    var motionReports: Int { path.points.count }
}

/// One scenario in wall-clock time through dockd: the scene simulator renders the detector's frames
/// from where the stand really points (dockd's motion stream, the same feedback dockd tracks with)
/// and sends them as `tracking.observe` at the detector's rate, each a detector latency after its
/// capture and stamped with its capture time. One stand: every call names it, and only its
/// notifications count.
final class LiveScene {
    private let client: APIClient
    /// The stand the run is on.
    private let stand: String
    private let scenario: SceneScenario
    private var scene: SceneSimulator
    /// The stand's base in the world: dock-sim's hand-held model, run on the stand's clock.
    private let base: SimulatedStand
    private var record = LiveRecord()
    private var start = 0.0

    init(scenario: SceneScenario, seed: UInt64, client: APIClient, stand: String) {
        self.client = client
        self.stand = stand
        self.scenario = scenario
        scene = SceneSimulator(scenario: scenario, seed: seed)
        var stand = StandConfiguration()
        stand.handheld = scenario.handheld
        base = SimulatedStand(configuration: stand)
    }

    /// The camera's world aim at `t` (our clock), nil before the stand has reported.
    private func worldAim(at t: Double, path: StandPath) -> SceneAim? {
        guard let p = path.angles(at: t) else { return nil }
        let attitude = base.baseAttitude(atMicros: UInt64(max(0, p.standMicros)))
        return SceneAim.fromStand(yaw: p.yaw, pitch: p.pitch, baseYaw: attitude.0, basePitch: attitude.1)
    }

    /// Sets the stand up as the virtual-time run has it: at home, the scenario's camera, region of
    /// interest and speed limits, system tracking on; subscribes to its motion and tracking state.
    func prepare() throws {
        let deadline = monotonicSeconds() + 10
        _ = try call(.cameraSet, ["camera": ["horizontal_fov": JSONValue(scene.horizontalFieldOfView),
                                             "vertical_fov": JSONValue(scene.verticalFieldOfView)]])
        if let r = scenario.regionOfInterest, r.count == 4 {
            _ = try call(.trackingROI, ["rect": ["x": JSONValue(r[0]), "y": JSONValue(r[1]), "width": JSONValue(r[2]), "height": JSONValue(r[3])]])
        }
        var limits: [String: JSONValue] = [:]
        if let s = scenario.yawMaxSpeed { limits["yaw"] = ["max_speed": JSONValue(s)] }
        if let s = scenario.pitchMaxSpeed { limits["pitch"] = ["max_speed": JSONValue(s)] }
        if !limits.isEmpty { _ = try call(.motionLimits, ["axes": .object(limits)]) }
        _ = try call(.trackingSet, ["enabled": true])
        // The first motion.state (the subscription's snapshot, or the first report) may come before the reply.
        var reported = false
        func note(_ message: JSONValue) { reported = reported || (message["method"]?.string == "motion.state" && isAboutTheStand(message)) }
        _ = try client.call(.subscribe, ["topics": ["motion", "tracking", "events"], "motion_rate": 1000], onNotification: note)
        while !reported, let message = try client.receive(within: deadline - monotonicSeconds()) { note(message) }
        guard reported else { throw LiveFailure(description: "the stand sent no feedback within 10 s") }
        if let policy = scenario.lostPolicy { try setLostPolicy(policy) }
        try go(yaw: 0, pitch: 0)
        // A pause of a second starts a new observation stream: a previous client's frames (a soak's
        // last run) must not count in this one's rate check.
        let pause = monotonicSeconds() + 1.1
        while try client.receive(within: pause - monotonicSeconds()) != nil {}
    }

    /// The scenario's lost-subject policy through the API: its preset, given as a pose, saved by
    /// turning the stand there (`home` when it is the home pose).
    private func setLostPolicy(_ policy: SceneLostPolicy) throws {
        var params: [String: JSONValue] = ["policy": .string(policy.policy), "after": JSONValue(policy.after), "search_seconds": JSONValue(policy.searchSeconds)]
        if let pose = policy.preset {
            if pose.yaw == 0 && pose.pitch == 0 {
                params["preset"] = "home"
            } else {
                try go(yaw: pose.yaw, pitch: pose.pitch)
                _ = try call(.presetSave, ["name": "bench-lost"])
                params["preset"] = "bench-lost"
            }
        }
        _ = try call(.trackingLostPolicy, params, onNotification: handle)
    }

    /// Turns the stand to (yaw, pitch) and waits for it: (0, 0) is where the scenario's world frame has it start.
    private func go(yaw: Double, pitch: Double) throws {
        // The motion's last progress may come before the call's reply: notifications are kept from the start.
        var ended: [Double: String] = [:]
        func note(_ message: JSONValue) {
            guard message["method"]?.string == "motion.progress", isAboutTheStand(message), let p = message["params"],
                  let id = p["id"]?.double, let state = p["state"]?.string, state != "running" else { return }
            ended[id] = state
        }
        let reply = try call(.motionOrient, ["yaw": JSONValue(yaw), "pitch": JSONValue(pitch)], onNotification: note)
        guard let id = reply["id"]?.double else { throw LiveFailure(description: "motion.orient answered without an id") }
        let deadline = monotonicSeconds() + 10
        while ended[id] == nil, let message = try client.receive(within: deadline - monotonicSeconds()) { note(message) }
        guard let state = ended[id] else { throw LiveFailure(description: "the stand did not reach (\(yaw), \(pitch)) within 10 s") }
        guard state == "completed" else { throw LiveFailure(description: "the stand did not go to (\(yaw), \(pitch)): motion \(state)") }
    }

    /// Runs the scenario for its duration in real time.
    func run() throws -> LiveRecord {
        start = monotonicSeconds()
        let period = 1 / scenario.detector.frameRate
        var nextCapture = 0.0
        var pending: [SceneFrame] = []
        var turns = scenario.turns.sorted { $0.t < $1.t }
        var sweeps = scenario.sweeps.sorted { $0.t < $1.t }
        while true {
            let now = monotonicSeconds() - start
            guard now < scenario.duration else { break }
            // The app's turn requests, as the virtual-time runner makes them.
            if let turn = turns.first, turn.t <= now {
                turns.removeFirst()
                var target: [String: JSONValue] = ["yaw": JSONValue(turn.yaw)]
                if let pitch = turn.pitch { target["pitch"] = JSONValue(pitch) }
                _ = try? call(.motionOrient, target, onNotification: handle)
            }
            if let sweep = sweeps.first, sweep.t <= now {
                sweeps.removeFirst()
                _ = try? call(.sweepStart, ["from": JSONValue(sweep.from), "to": JSONValue(sweep.to), "rate": JSONValue(sweep.rate),
                                            "repeat": .bool(sweep.repeat)], onNotification: handle)
            }
            if nextCapture <= now {
                // Rendered at its capture time from the stand's path, even when the loop wakes late.
                if let aim = worldAim(at: nextCapture, path: record.path) { pending.append(scene.capture(at: nextCapture, aim: aim)) }
                nextCapture += period
                if nextCapture < now { record.framesSkipped += Int((now - nextCapture) / period) + 1; nextCapture = now + period }
            } else if let frame = pending.first, frame.deliveryTime <= now {
                pending.removeFirst()
                try send(frame)
            } else {
                let next = min(nextCapture, pending.first?.deliveryTime ?? .infinity, scenario.duration)
                if let message = try client.receive(within: next - now) { handle(message) }
            }
        }
        return record
    }

    /// Taps not made yet (the app taps a person's face until the tap finds a subject, for a second).
    private lazy var taps = scenario.taps.sorted { $0.t < $1.t }

    private func send(_ frame: SceneFrame) throws {
        var observations: [JSONValue] = []
        for d in frame.detections where d.rect.width > 0 && d.rect.height > 0 {
            var o: [String: JSONValue] = ["kind": JSONValue(d.kind.rawValue), "confidence": JSONValue(d.confidence),
                                          "rect": ["x": JSONValue(d.rect.x), "y": JSONValue(d.rect.y),
                                                   "width": JSONValue(d.rect.width), "height": JSONValue(d.rect.height)]]
            if let s = d.speakingConfidence { o["speaking_confidence"] = JSONValue(s) }
            if let l = d.lookingAtCameraConfidence { o["looking_at_camera_confidence"] = JSONValue(l) }
            if !d.keypoints.isEmpty {
                o["keypoints"] = .object(d.keypoints.mapValues { p in
                    ["x": JSONValue(p.x), "y": JSONValue(p.y), "visibility": JSONValue(p.visibility)]
                })
            }
            observations.append(.object(o))
        }
        record.framesSent += 1
        do {
            _ = try call(.trackingObserve, ["observations": .array(observations), "origin": "upper_left",
                                            "timestamp": JSONValue(start + frame.captureTime)], onNotification: handle)
        } catch let failure as APIClient.Failure where failure.code != nil {
            record.refused[failure.code!, default: 0] += 1
        }
        if let tap = taps.first, tap.t <= frame.captureTime {
            let face = frame.truth.first(where: { $0.id == tap.person })?.faceRect
            let found = face.map { (try? call(.trackingSelect, ["x": JSONValue($0.centerX), "y": JSONValue($0.centerY)], onNotification: handle)) != nil } ?? false
            if found || frame.captureTime - tap.t > 1 { taps.removeFirst() }
        }
    }

    /// A stand method's call on the run's stand.
    private func call(_ method: APIMethod, _ params: [String: JSONValue] = [:], onNotification: ((JSONValue) -> Void)? = nil) throws -> JSONValue {
        var named = params
        named["stand"] = .string(stand)
        return try client.call(method, named, onNotification: onNotification)
    }

    /// Whether a notification is about the run's stand (the subscriptions carry every stand's).
    private func isAboutTheStand(_ message: JSONValue) -> Bool { message["params"]?["stand"]?.string == stand }

    private func handle(_ message: JSONValue) {
        let arrival = monotonicSeconds() - start
        guard let params = message["params"], params.object != nil, isAboutTheStand(message) else { return }
        switch message["method"]?.string {
        case "motion.state":
            record.path.record(params, arrival: arrival)
        case "tracking.state":
            record.primaries.append((arrival, Self.primary(in: params)))
        case "tracking.phase":
            if let phase = params["phase"]?.string.flatMap(TrackingPhase.init(rawValue:)) { record.phases.append((arrival, phase)) }
        default:
            break
        }
    }

    /// The run's metrics, judged from the truth every 10 ms as in virtual time (with the stand's
    /// reported angles for the camera's), and its trace for a plot.
    func evaluate(_ record: LiveRecord) -> (metrics: SceneMetrics, trace: SceneTrace) {
        // Who each reported primary really is, seen from where the stand pointed at its capture.
        // As the virtual scorer (VirtualTime's `primary`): a primary not measured in its frame
        // keeps the person it had, since its identity cannot change without a detection, though its
        // predicted box may drift onto whoever hides it.
        var numbers: [String: Int] = [:]
        var previous: (id: Int, person: Int?)?
        let tracked: [(arrival: Double, id: Int?, person: Int?)] = record.primaries.map { entry in
            guard let p = entry.primary else { previous = nil; return (entry.arrival, nil, nil) }
            let id = numbers[p.id] ?? numbers.count
            numbers[p.id] = id
            if !p.measured, let previous, previous.id == id { return (entry.arrival, id, previous.person) }
            let t = p.captureTime + record.path.offset
            let person = worldAim(at: t, path: record.path).flatMap { scene.person(atImagePoint: p.point.x, p.point.y, at: t, aim: $0) }
            previous = (id, person)
            return (entry.arrival, id, person)
        }
        var samples: [SceneSample] = [], trace = SceneTrace()
        var next = 0, current: (id: Int?, person: Int?) = (nil, nil)
        for step in 1...Int((scenario.duration * 100).rounded()) {
            let t = Double(step) / 100
            while next < tracked.count, tracked[next].arrival <= t { current = (tracked[next].id, tracked[next].person); next += 1 }
            guard let aim = worldAim(at: t, path: record.path) else { continue }
            let sample = scene.sample(at: t, aim: aim, faceLine: TrackingSettings.shipped.framing.faceLine, trackedID: current.id, trackedPerson: current.person)
            samples.append(sample)
            if step % 2 == 0 { trace.time.append(t); trace.camera.append(aim); trace.desired.append(sample.desired) }
        }
        trace.phases = record.phases.map { ($0.arrival, $0.phase) }
        let metrics = SceneMetrics.compute(samples, marks: scenario.marks, horizontalFieldOfView: scene.horizontalFieldOfView,
                                           verticalFieldOfView: scene.verticalFieldOfView,
                                           identityWindow: TrackingSettings.shipped.tracker.maximumLostDuration)  // dockd's tracker settings too
        return (metrics, trace)
    }

    /// The selected subject of highest saliency in a `tracking.state`, and where its face (or body) was.
    private static func primary(in params: JSONValue) -> LiveRecord.Primary? {
        let subjects = (params["subjects"]?.array ?? []).filter { $0["selected"]?.bool == true }
        guard let capture = params["capture_time"]?.double,
              let chosen = subjects.min(by: { ($0["saliency_rank"]?.double ?? .infinity) < ($1["saliency_rank"]?.double ?? .infinity) }),
              let id = chosen["id"]?.string,
              let rect = [chosen["face_rect"], chosen["rect"]].lazy.compactMap({ $0 }).first(where: { $0.object != nil }),
              let x = rect["x"]?.double, let y = rect["y"]?.double, let w = rect["width"]?.double, let h = rect["height"]?.double else { return nil }
        // Before api 1.2 there is no `last_seen`: every report counts as measured.
        let measured = chosen["last_seen"]?.double.map { $0 >= capture } ?? true
        return LiveRecord.Primary(captureTime: capture, id: id, point: (x + w / 2, y + h / 2), measured: measured)
    }
}
