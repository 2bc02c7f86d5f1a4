/// A tracking benchmark scenario: the camera on the stand, the people around it and the detector
/// that sees them. Decoded from `Benchmarks/Scenarios/*.json` (schema: Benchmarks/Scenarios/README.md),
/// so new scenarios need no code. World frame: X to the right of the stand's home direction, Y up,
/// Z forward (the home direction), metres; the stand (and its camera) stands at X = Z = 0.
public struct SceneScenario: Codable, Sendable {
    public var name: String
    public var description: String = ""
    /// Virtual seconds to run.
    public var duration: Double
    /// Seed of the detector noise (the `--seed` option is added to it).
    public var seed: UInt64 = 1
    public var camera = SceneCamera()
    public var detector = SceneDetector()
    /// The stand's base sways and bobs like a hand-held stand (dock-sim's hand-held model).
    public var handheld: Bool = false
    /// Overrides of the stand's yaw / pitch speed limit, rad/s (nil: dock-sim's defaults).
    public var yawMaxSpeed: Double?
    public var pitchMaxSpeed: Double?
    /// Region of interest, normalized, upper-left origin: [x, y, width, height].
    public var regionOfInterest: [Double]?
    public var people: [ScenePerson]
    /// Who the camera should frame, from each entry's time on: person ids (a group is framed together
    /// when it fits, as the framer does). An empty list means nobody.
    public var primary: [ScenePrimaryEntry]
    /// Times at which the subject's motion changes abruptly (start, stop, turn): settle time and
    /// overshoot are measured after each.
    public var marks: [Double] = []
    /// Whether every intended subject stays within the stand's speed and range limits (the
    /// "100 % in frame" target applies only then).
    public var withinLimits: Bool = true
    /// The app taps a person on screen (DockKit's select-at-point): `tracking.select` at the
    /// person's face, from `t` on until the tap finds a subject.
    public var taps: [SceneTap] = []
    /// The app turns the stand (`motion.orient`, absolute angles, rad) at `t`.
    public var turns: [SceneTurn] = []
    /// Detections of nobody, added to the detector's frames: false faces or bodies.
    public var ghosts: [SceneGhost] = []
    /// The app's lost-subject policy (`tracking.lost_policy`), set before the run; dockd's own runs only.
    public var lostPolicy: SceneLostPolicy?
    /// The app starts a yaw sweep (`sweep.start`) at `t`; dockd's own runs only.
    public var sweeps: [SceneSweep] = []
    /// The stand's camera has an optical zoom, and the app asks for a shot (nil: no zoom).
    public var zoom: SceneZoom?

    enum CodingKeys: String, CodingKey {
        case name, description, duration, seed, camera, detector, handheld, yawMaxSpeed, pitchMaxSpeed
        case regionOfInterest, people, primary, marks, withinLimits, taps, turns, ghosts, lostPolicy, sweeps, zoom
    }

    public init(name: String, duration: Double, people: [ScenePerson], primary: [ScenePrimaryEntry]) {
        self.name = name; self.duration = duration; self.people = people; self.primary = primary
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        description = try c.decodeIfPresent(String.self, forKey: .description) ?? ""
        duration = try c.decode(Double.self, forKey: .duration)
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? 1
        camera = try c.decodeIfPresent(SceneCamera.self, forKey: .camera) ?? SceneCamera()
        detector = try c.decodeIfPresent(SceneDetector.self, forKey: .detector) ?? SceneDetector()
        handheld = try c.decodeIfPresent(Bool.self, forKey: .handheld) ?? false
        yawMaxSpeed = try c.decodeIfPresent(Double.self, forKey: .yawMaxSpeed)
        pitchMaxSpeed = try c.decodeIfPresent(Double.self, forKey: .pitchMaxSpeed)
        regionOfInterest = try c.decodeIfPresent([Double].self, forKey: .regionOfInterest)
        people = try c.decode([ScenePerson].self, forKey: .people)
        primary = try c.decode([ScenePrimaryEntry].self, forKey: .primary)
        marks = try c.decodeIfPresent([Double].self, forKey: .marks) ?? []
        withinLimits = try c.decodeIfPresent(Bool.self, forKey: .withinLimits) ?? true
        taps = try c.decodeIfPresent([SceneTap].self, forKey: .taps) ?? []
        turns = try c.decodeIfPresent([SceneTurn].self, forKey: .turns) ?? []
        ghosts = try c.decodeIfPresent([SceneGhost].self, forKey: .ghosts) ?? []
        lostPolicy = try c.decodeIfPresent(SceneLostPolicy.self, forKey: .lostPolicy)
        sweeps = try c.decodeIfPresent([SceneSweep].self, forKey: .sweeps) ?? []
        zoom = try c.decodeIfPresent(SceneZoom.self, forKey: .zoom)
    }

    /// The region of interest as (x, y, width, height).
    public var roi: SceneRect {
        guard let r = regionOfInterest, r.count == 4 else { return SceneRect(x: 0, y: 0, width: 1, height: 1) }
        return SceneRect(x: r[0], y: r[1], width: r[2], height: r[3])
    }

    /// The intended subjects at `t`.
    public func intended(at t: Double) -> [Int] {
        var ids: [Int] = []
        for entry in primary where entry.t <= t { ids = entry.ids }
        return ids
    }
}

public struct SceneTap: Codable, Sendable {
    public var t: Double
    public var person: Int
}

/// `tracking.lost_policy` as a scenario gives it: `policy` hold, preset or search, seconds, and the
/// preset as stand angles (rad, yaw positive left).
public struct SceneLostPolicy: Codable, Sendable {
    public var policy: String
    public var after: Double = 0
    public var searchSeconds: Double = 0
    public var preset: ScenePose?

    enum CodingKeys: String, CodingKey { case policy, after, searchSeconds, preset }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        policy = try c.decode(String.self, forKey: .policy)
        after = try c.decodeIfPresent(Double.self, forKey: .after) ?? 0
        searchSeconds = try c.decodeIfPresent(Double.self, forKey: .searchSeconds) ?? 0
        preset = try c.decodeIfPresent(ScenePose.self, forKey: .preset)
    }
}

public struct ScenePose: Codable, Sendable {
    public var yaw: Double
    public var pitch: Double
}

/// `sweep.start` at `t`: absolute yaw, rad, and rad/s.
public struct SceneSweep: Codable, Sendable {
    public var t: Double
    public var from: Double
    public var to: Double
    public var rate: Double
    public var `repeat`: Bool
}

public struct SceneTurn: Codable, Sendable {
    public var t: Double
    public var yaw: Double
    public var pitch: Double?
}

/// A false detection: `kind` (face or body) at `rect` ([x, y, w, h], normalized, upper-left) with
/// `confidence`, in every frame captured within [t, t + duration).
public struct SceneGhost: Codable, Sendable {
    public var t: Double
    public var duration: Double
    public var kind: String
    public var rect: [Double]
    public var confidence: Double
}

public struct ScenePrimaryEntry: Codable, Sendable {
    public var t: Double
    public var ids: [Int]
    public init(t: Double, ids: [Int]) { self.t = t; self.ids = ids }
}

/// An optical zoom on the stand's camera (a zoom axis, PROTOCOL.md §4) and the shot the app asks
/// `tracking.framing` for: `head`, `upper_body`, `full_body`, `group` or `wide`.
public struct SceneZoom: Codable, Sendable {
    /// The tele end's magnification (1 = the camera's field of view) and the zoom's speed, per second.
    public var max: Double
    public var maxSpeed: Double
    public var shot: String
}

/// A pinhole camera on the stand's output shafts, mounted `height` metres above the floor.
public struct SceneCamera: Codable, Sendable {
    /// Full fields of view, degrees.
    public var horizontalFieldOfView: Double = 64
    public var verticalFieldOfView: Double = 39
    public var imageWidth: Int = 1920
    public var imageHeight: Int = 1080
    public var height: Double = 1.2

    public init() {}

    enum CodingKeys: String, CodingKey { case horizontalFieldOfView, verticalFieldOfView, imageWidth, imageHeight, height }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = SceneCamera.init()
        horizontalFieldOfView = try c.decodeIfPresent(Double.self, forKey: .horizontalFieldOfView) ?? d.horizontalFieldOfView
        verticalFieldOfView = try c.decodeIfPresent(Double.self, forKey: .verticalFieldOfView) ?? d.verticalFieldOfView
        imageWidth = try c.decodeIfPresent(Int.self, forKey: .imageWidth) ?? d.imageWidth
        imageHeight = try c.decodeIfPresent(Int.self, forKey: .imageHeight) ?? d.imageHeight
        height = try c.decodeIfPresent(Double.self, forKey: .height) ?? d.height
    }
}

/// The person/face detector running on the camera's frames.
public struct SceneDetector: Codable, Sendable {
    /// Frames per second, and the delay from capture to the detections reaching the host, s.
    public var frameRate: Double = 30
    public var latency: Double = 0.08
    /// Standard deviation of box center and size noise, as a fraction of the box's size.
    public var jitter: Double = 0.02
    /// Probability that a visible face / body is not detected in a frame.
    public var missRate: Double = 0.05
    /// Expected false-positive body boxes per frame.
    public var falsePositiveRate: Double = 0.02
    /// Probability per frame that two overlapping people's detector ids are swapped.
    public var swapRate: Double = 0.05
    /// Noise (standard deviation) of speaking and looking-at-camera confidences.
    public var attributeNoise: Double = 0.1
    /// The latency varies by up to this much either way, uniformly (a camera pipeline's jitter;
    /// frames still arrive in order), s.
    public var latencyJitter: Double = 0
    /// Body boxes run from the head to the feet (a whole-person detector), instead of to the hips;
    /// near the camera they are clipped by the frame's bottom and sides.
    public var fullBody: Bool = false
    /// Probability that a visible face is not detected in a frame, when it differs from `missRate`
    /// (a person too far or turned too far for the face detector, while the body is found).
    public var faceMissRate: Double?
    /// Body detections carry a pose model's head and shoulder keypoints (from the true face).
    public var keypoints: Bool = false

    public init() {}

    enum CodingKeys: String, CodingKey {
        case frameRate, latency, jitter, missRate, falsePositiveRate, swapRate, attributeNoise, latencyJitter, fullBody, faceMissRate, keypoints
    }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = SceneDetector.init()
        frameRate = try c.decodeIfPresent(Double.self, forKey: .frameRate) ?? d.frameRate
        latency = try c.decodeIfPresent(Double.self, forKey: .latency) ?? d.latency
        jitter = try c.decodeIfPresent(Double.self, forKey: .jitter) ?? d.jitter
        missRate = try c.decodeIfPresent(Double.self, forKey: .missRate) ?? d.missRate
        falsePositiveRate = try c.decodeIfPresent(Double.self, forKey: .falsePositiveRate) ?? d.falsePositiveRate
        swapRate = try c.decodeIfPresent(Double.self, forKey: .swapRate) ?? d.swapRate
        attributeNoise = try c.decodeIfPresent(Double.self, forKey: .attributeNoise) ?? d.attributeNoise
        latencyJitter = try c.decodeIfPresent(Double.self, forKey: .latencyJitter) ?? d.latencyJitter
        fullBody = try c.decodeIfPresent(Bool.self, forKey: .fullBody) ?? d.fullBody
        faceMissRate = try c.decodeIfPresent(Double.self, forKey: .faceMissRate)
        keypoints = try c.decodeIfPresent(Bool.self, forKey: .keypoints) ?? d.keypoints
    }
}

/// One person: a body (a box `width` wide from the floor to the top of the head) with a face
/// below the top, moving on a scripted path.
public struct ScenePerson: Codable, Sendable {
    public var id: Int
    /// A person, or an object the app tracks (DockKit's custom objects: a pet, a ball): no face,
    /// its whole box from the floor up, framed by the box's centre.
    public var kind = Kind.person
    public enum Kind: String, Codable, Sendable { case person, object }
    public var isObject: Bool { kind == .object }
    /// Standing height, m; sitting lowers the head to `sitRatio` of it.
    public var height: Double = 1.72
    public var width: Double = 0.45
    /// Path: positions at times, linearly interpolated, held before the first and after the last.
    public var path: [SceneWaypoint]
    /// [start, end] intervals when the person is in the room (default: always).
    public var present: [[Double]]?
    /// [start, end] intervals of speech.
    public var speaking: [[Double]] = []
    /// Looking-at-camera confidence, 0…1.
    public var looking: Double = 0.8

    public init(id: Int, path: [SceneWaypoint]) { self.id = id; self.path = path }

    enum CodingKeys: String, CodingKey { case id, kind, height, width, path, present, speaking, looking }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        kind = try c.decodeIfPresent(Kind.self, forKey: .kind) ?? .person
        height = try c.decodeIfPresent(Double.self, forKey: .height) ?? 1.72
        width = try c.decodeIfPresent(Double.self, forKey: .width) ?? 0.45
        path = try c.decode([SceneWaypoint].self, forKey: .path)
        present = try c.decodeIfPresent([[Double]].self, forKey: .present)
        speaking = try c.decodeIfPresent([[Double]].self, forKey: .speaking) ?? []
        looking = try c.decodeIfPresent(Double.self, forKey: .looking) ?? 0.8
    }

    public func isPresent(at t: Double) -> Bool {
        guard let present else { return true }
        return present.contains { $0.count == 2 && t >= $0[0] && t < $0[1] }
    }

    public func isSpeaking(at t: Double) -> Bool { speaking.contains { $0.count == 2 && t >= $0[0] && t < $0[1] } }

    /// Floor position (x, z) and sitting fraction 0…1 at `t`.
    public func pose(at t: Double) -> (x: Double, z: Double, sit: Double) {
        guard let first = path.first else { return (0, 2, 0) }
        if t <= first.t { return (first.x, first.z, first.sit) }
        for (a, b) in zip(path, path.dropFirst()) where t < b.t {
            let f = b.t > a.t ? (t - a.t) / (b.t - a.t) : 1
            // Smoothstep between waypoints: people accelerate, they do not jump to a speed.
            let s = f * f * (3 - 2 * f)
            let m = b.smooth ? s : f
            return (a.x + (b.x - a.x) * m, a.z + (b.z - a.z) * m, a.sit + (b.sit - a.sit) * s)
        }
        let last = path[path.count - 1]
        return (last.x, last.z, last.sit)
    }
}

public struct SceneWaypoint: Codable, Sendable {
    public var t: Double
    public var x: Double
    public var z: Double
    /// 0 standing, 1 sitting.
    public var sit: Double = 0
    /// Ease in and out of this segment (true) or move at constant speed (false).
    public var smooth: Bool = true

    public init(t: Double, x: Double, z: Double, sit: Double = 0, smooth: Bool = true) {
        self.t = t; self.x = x; self.z = z; self.sit = sit; self.smooth = smooth
    }

    enum CodingKeys: String, CodingKey { case t, x, z, sit, smooth }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        t = try c.decode(Double.self, forKey: .t)
        x = try c.decode(Double.self, forKey: .x)
        z = try c.decode(Double.self, forKey: .z)
        sit = try c.decodeIfPresent(Double.self, forKey: .sit) ?? 0
        smooth = try c.decodeIfPresent(Bool.self, forKey: .smooth) ?? true
    }
}

/// A normalized image rectangle, upper-left origin (plain, so DockSim needs no DockTracking).
public struct SceneRect: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var centerX: Double { x + width / 2 }
    public var centerY: Double { y + height / 2 }
    public var area: Double { max(0, width) * max(0, height) }

    public func intersection(_ o: SceneRect) -> Double {
        let w = min(maxX, o.maxX) - max(x, o.x), h = min(maxY, o.maxY) - max(y, o.y)
        return w > 0 && h > 0 ? w * h : 0
    }

    public func union(_ o: SceneRect) -> SceneRect {
        let l = min(x, o.x), t = min(y, o.y)
        return SceneRect(x: l, y: t, width: max(maxX, o.maxX) - l, height: max(maxY, o.maxY) - t)
    }

    public func isInside(_ o: SceneRect) -> Bool { x >= o.x && y >= o.y && maxX <= o.maxX && maxY <= o.maxY }
}
