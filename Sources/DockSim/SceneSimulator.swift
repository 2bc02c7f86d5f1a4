#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the camera points in the world: x = azimuth to the right, y = elevation downward, rad
/// (the tracker's convention). From the stand: x = −(base yaw + yaw output), y = −(base pitch +
/// pitch output), since the stand's yaw is positive to the left and its pitch positive up.
public struct SceneAim: Sendable, Hashable {
    public var x: Double
    public var y: Double
    /// The optical zoom's magnification (1 = the scenario's field of view): tan(fov/2) shrinks by it.
    public var zoom: Double
    public init(x: Double, y: Double, zoom: Double = 1) { self.x = x; self.y = y; self.zoom = zoom }

    public static func fromStand(yaw: Double, pitch: Double, zoom: Double = 1, baseYaw: Double = 0, basePitch: Double = 0) -> SceneAim {
        SceneAim(x: -(baseYaw + yaw), y: -(basePitch + pitch), zoom: zoom)
    }
}

/// One detection as the detector reports it.
public struct SceneDetection: Sendable, Hashable {
    /// Named as `tracking.observe` names them.
    public enum Kind: String, Sendable, Hashable { case face, body, object }
    public var kind: Kind
    /// Normalized, upper-left origin.
    public var rect: SceneRect
    public var confidence: Double
    /// Faces only.
    public var speakingConfidence: Double?
    public var lookingAtCameraConfidence: Double?
    /// The detector's own track id (swaps when two people overlap); −1 for a false positive.
    public var detectorID: Int
    /// The person it really is (ground truth), −1 for a false positive.
    public var personID: Int
    /// Bodies only, with `SceneDetector.keypoints`: joints by their API name, normalized like `rect`.
    public var keypoints: [String: SceneKeypoint] = [:]
}

/// One pose keypoint of a body detection.
public struct SceneKeypoint: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var visibility: Double
}

/// Ground truth of one person at one instant, seen with the camera at a given aim.
public struct ScenePersonTruth: Sendable, Hashable {
    public var id: Int
    public var present: Bool
    /// An object (`ScenePerson.isObject`): no face; its body rect is the whole object.
    public var isObject: Bool
    /// World direction of the face center (an object's: its center) (tracker convention: x right, y
    /// down), rad.
    public var faceDirection: SceneAim
    /// Projected face and body rects (nil when behind the camera or absent; an object has no face);
    /// may extend past 0…1.
    public var faceRect: SceneRect?
    public var bodyRect: SceneRect?
    /// What must be in the picture for the subject to be in frame: a person's face, an object's box.
    public var anchorRect: SceneRect? { isObject ? bodyRect : faceRect }
    /// Distance from the camera to the face, m.
    public var distance: Double
    /// Face and body detectable (inside the image enough and not hidden by a nearer person).
    public var faceVisible: Bool
    public var bodyVisible: Bool
    public var speaking: Bool
}

/// One frame of the scene: what the detector reports and the truth behind it.
public struct SceneFrame: Sendable {
    public var captureTime: Double
    /// When the detections reach the host (capture time + latency).
    public var deliveryTime: Double
    public var aim: SceneAim
    public var detections: [SceneDetection]
    public var truth: [ScenePersonTruth]
    /// Who should be framed (ground truth).
    public var intended: [Int]
}

/// Renders a scenario: projects people through the pinhole camera and runs the detector model.
/// Pure and deterministic from the seed; geometry is a function of time only.
public struct SceneSimulator: Sendable {
    public let scenario: SceneScenario
    private var random: SeededRandom
    private var swapped: Set<Int> = []
    public let horizontalHalfTangent: Double
    public let verticalHalfTangent: Double

    public init(scenario: SceneScenario, seed: UInt64 = 0) {
        self.scenario = scenario
        random = SeededRandom(seed: scenario.seed &+ seed &* 0x9E37_79B9)
        horizontalHalfTangent = tan(scenario.camera.horizontalFieldOfView * .pi / 360)
        verticalHalfTangent = tan(scenario.camera.verticalFieldOfView * .pi / 360)
    }

    public var horizontalFieldOfView: Double { scenario.camera.horizontalFieldOfView * .pi / 180 }
    public var verticalFieldOfView: Double { scenario.camera.verticalFieldOfView * .pi / 180 }

    // MARK: - Geometry

    /// Projects a world point (X right, Y up, Z forward, m; camera at (0, camera height, 0)) into
    /// normalized image coordinates (upper-left origin), nil when behind the camera.
    public func project(_ px: Double, _ py: Double, _ pz: Double, aim: SceneAim) -> (u: Double, v: Double)? {
        let dx = px, dy = py - scenario.camera.height, dz = pz
        let (sp, cp) = (sin(aim.x), cos(aim.x)), (st, ct) = (sin(aim.y), cos(aim.y))
        let xc = dx * cp - dz * sp
        let yc = dx * sp * st + dy * ct + dz * cp * st
        let zc = dx * sp * ct - dy * st + dz * cp * ct
        guard zc > 0.05 else { return nil }
        return (0.5 + xc / zc * aim.zoom / (2 * horizontalHalfTangent), 0.5 - yc / zc * aim.zoom / (2 * verticalHalfTangent))
    }

    /// Head top and face center heights of a person (an object: its top and center), m.
    private func heights(_ person: ScenePerson, sit: Double) -> (top: Double, face: Double) {
        let top = person.height * (1 - 0.3 * sit)
        return (top, person.isObject ? top / 2 : top - 0.12)
    }

    private func rect(of points: [(Double, Double, Double)], aim: SceneAim) -> SceneRect? {
        var minU = Double.infinity, maxU = -Double.infinity, minV = Double.infinity, maxV = -Double.infinity
        for p in points {
            guard let q = project(p.0, p.1, p.2, aim: aim) else { return nil }
            minU = min(minU, q.u); maxU = max(maxU, q.u); minV = min(minV, q.v); maxV = max(maxV, q.v)
        }
        return SceneRect(x: minU, y: minV, width: maxU - minU, height: maxV - minV)
    }

    /// The truth of every person at `t` with the camera at `aim`, occlusion included.
    public func truth(at t: Double, aim: SceneAim) -> [ScenePersonTruth] {
        let image = SceneRect(x: 0, y: 0, width: 1, height: 1)
        var result: [ScenePersonTruth] = []
        result.reserveCapacity(scenario.people.count)
        for person in scenario.people {
            let pose = person.pose(at: t)
            let h = heights(person, sit: pose.sit)
            let ground = (pose.x * pose.x + pose.z * pose.z).squareRoot()
            let dy = h.face - scenario.camera.height
            let direction = SceneAim(x: atan2(pose.x, pose.z), y: -atan2(dy, ground))
            let present = person.isPresent(at: t)
            // Lateral unit vector, perpendicular to the line of sight in the floor plane.
            let lx = ground > 0 ? pose.z / ground : 1, lz = ground > 0 ? -pose.x / ground : 0
            let hw = person.width / 2, fw = 0.08, fh = 0.11
            // The body box runs from the top of the head to the hips (what a person detector reports
            // for the part of a body a stand's camera frames); see Benchmarks/Scenarios/README.md.
            let hips = scenario.detector.fullBody || person.isObject ? 0 : h.top * 0.45
            let body = present ? rect(of: [(pose.x - lx * hw, hips, pose.z - lz * hw), (pose.x + lx * hw, hips, pose.z + lz * hw),
                                           (pose.x - lx * hw, h.top, pose.z - lz * hw), (pose.x + lx * hw, h.top, pose.z + lz * hw)], aim: aim) : nil
            let face = present && !person.isObject ? rect(of: [(pose.x - lx * fw, h.face - fh, pose.z - lz * fw), (pose.x + lx * fw, h.face + fh, pose.z + lz * fw),
                                           (pose.x - lx * fw, h.face + fh, pose.z - lz * fw), (pose.x + lx * fw, h.face - fh, pose.z + lz * fw)], aim: aim) : nil
            let faceIn = face.map { $0.area > 0 && $0.intersection(image) / $0.area >= 0.7 } ?? false
            let bodyIn = body.map { $0.area > 0 && $0.intersection(image) / $0.area >= 0.35 } ?? false
            result.append(ScenePersonTruth(id: person.id, present: present, isObject: person.isObject, faceDirection: direction, faceRect: face, bodyRect: body,
                                           distance: (ground * ground + dy * dy).squareRoot(), faceVisible: faceIn, bodyVisible: bodyIn,
                                           speaking: present && person.isSpeaking(at: t)))
        }
        // Occlusion: a nearer person's body hides a farther person's face (half of it covered) or
        // body (60 % of it covered).
        for i in result.indices {
            for j in result.indices where i != j && result[j].present && result[j].distance < result[i].distance {
                guard let cover = result[j].bodyRect else { continue }
                if let face = result[i].faceRect, face.area > 0, face.intersection(cover) / face.area > 0.5 { result[i].faceVisible = false }
                if let body = result[i].bodyRect, body.area > 0, body.intersection(cover) / body.area > 0.6 { result[i].bodyVisible = false }
            }
        }
        return result
    }

    /// The camera aim that puts the intended subjects where the framer wants them: the group's
    /// horizontal center at the ROI's center, the top face on the face line (a group of objects:
    /// its center on the ROI's center, as `Framer` places subjects without a face). Computed from the
    /// true geometry (the oracle's target and the framing error's reference). nil without subjects.
    public func desiredAim(at t: Double, aim: SceneAim, faceLine: Double, groupFill: Double = 0.9, headroom: Double = 0.06) -> SceneAim? {
        let truth = self.truth(at: t, aim: aim)
        return desiredAim(truth: truth, intended: scenario.intended(at: t), aim: aim, faceLine: faceLine, groupFill: groupFill, headroom: headroom)
    }

    public func desiredAim(truth: [ScenePersonTruth], intended: [Int], aim: SceneAim, faceLine: Double, groupFill: Double = 0.9, headroom: Double = 0.06) -> SceneAim? {
        let roi = scenario.roi
        let horizontalHalfTangent = self.horizontalHalfTangent / aim.zoom, verticalHalfTangent = self.verticalHalfTangent / aim.zoom
        let present = intended.compactMap { id in truth.first { $0.id == id && $0.present } }
        guard let first = present.first else { return nil }
        var members = present.filter { $0.bodyRect != nil }
        guard !members.isEmpty else {
            // Behind the camera (more than 90° off its axis): no image to frame in, but the aim that
            // frames them is still well defined — their face on the region's framing point.
            let wantX = atan((roi.centerX - 0.5) * 2 * horizontalHalfTangent)
            let wantY = atan((roi.y + (first.isObject ? 0.5 : faceLine) * roi.height - 0.5) * 2 * verticalHalfTangent)
            return SceneAim(x: first.faceDirection.x - wantX, y: first.faceDirection.y - wantY, zoom: aim.zoom)
        }
        func extent(_ m: [ScenePersonTruth]) -> SceneRect { m.dropFirst().reduce(m[0].bodyRect!) { $0.union($1.bodyRect!) } }
        if members.count > 1, extent(members).width > groupFill * roi.width { members = [members[0]] }
        let group = extent(members)
        // The top face's height, or with no face in the group its center's.
        let anchorY = members.filter { !$0.isObject }.map(\.faceDirection.y).min() ?? aim.y + atan((group.centerY - 0.5) * 2 * verticalHalfTangent)
        let lineY = members.contains { !$0.isObject } ? faceLine : 0.5
        // Angles off the current aim of the group's center and of the target image point.
        let groupX = aim.x + atan((group.centerX - 0.5) * 2 * horizontalHalfTangent)
        let wantX = atan((roi.centerX - 0.5) * 2 * horizontalHalfTangent)
        let wantY = atan((roi.y + lineY * roi.height - 0.5) * 2 * verticalHalfTangent)
        var desired = SceneAim(x: groupX - wantX, y: anchorY - wantY, zoom: aim.zoom)
        // The framer's rules on top (Framer.frame): keep the group inside the region when it fits,
        // headroom first, then the bottom edge.
        func angleX(_ u: Double) -> Double { atan((u - 0.5) * 2 * horizontalHalfTangent) }
        func angleY(_ v: Double) -> Double { atan((v - 0.5) * 2 * verticalHalfTangent) }
        func placedX(_ angle: Double) -> Double { 0.5 + tan(angle - desired.x) / (2 * horizontalHalfTangent) }
        func placedY(_ angle: Double) -> Double { 0.5 + tan(angle - desired.y) / (2 * verticalHalfTangent) }
        let left = aim.x + angleX(group.x), right = aim.x + angleX(group.maxX)
        let topEdge = aim.y + angleY(group.y), bottom = aim.y + angleY(group.maxY)
        let placed = SceneRect(x: placedX(left), y: placedY(topEdge), width: placedX(right) - placedX(left), height: placedY(bottom) - placedY(topEdge))
        if placed.width <= roi.width {
            if placed.x < roi.x { desired.x = left - angleX(roi.x) } else if placed.maxX > roi.maxX { desired.x = right - angleX(roi.maxX) }
        }
        let topLimit = roi.y + headroom * roi.height
        if placed.y < topLimit {
            desired.y = topEdge - angleY(topLimit)
        } else if placed.maxY > roi.maxY, placed.height <= roi.maxY - topLimit {
            desired.y = bottom - angleY(roi.maxY)
        }
        return desired
    }

    // MARK: - Detector

    /// A frontal pose model's nose, eyes, ears and shoulders for a face seen at `face`: the nose on
    /// its centre, the ears at its sides, the shoulders a face height below the chin.
    private func headAndShoulders(around face: SceneRect) -> [String: SceneKeypoint] {
        let x = face.centerX, y = face.centerY, w = face.width, h = face.height
        func point(_ dx: Double, _ dy: Double) -> SceneKeypoint { SceneKeypoint(x: x + dx * w, y: y + dy * h, visibility: 0.95) }
        return ["nose": point(0, 0), "left_eye": point(0.2, -0.1), "right_eye": point(-0.2, -0.1),
                "left_ear": point(0.5, -0.05), "right_ear": point(-0.5, -0.05),
                "left_shoulder": point(1.1, 1.2), "right_shoulder": point(-1.1, 1.2)]
    }

    /// Runs the detector on a frame captured at `t` with the camera at `aim`.
    public mutating func capture(at t: Double, aim: SceneAim) -> SceneFrame {
        let truth = self.truth(at: t, aim: aim)
        let d = scenario.detector
        var detections: [SceneDetection] = []
        // Identity swaps of the detector's own ids between overlapping people.
        for i in truth.indices {
            for j in truth.indices where j > i {
                guard let a = truth[i].bodyRect, let b = truth[j].bodyRect, a.intersection(b) > 0.3 * min(a.area, b.area) else { continue }
                if random.unit() < d.swapRate {
                    let key = truth[i].id * 1000 + truth[j].id
                    if swapped.contains(key) { swapped.remove(key) } else { swapped.insert(key) }
                }
            }
        }
        func detectorID(_ id: Int) -> Int {
            for key in swapped {
                if key / 1000 == id { return key % 1000 }
                if key % 1000 == id { return key / 1000 }
            }
            return id
        }
        let image = SceneRect(x: 0, y: 0, width: 1, height: 1)
        func noisy(_ r: SceneRect) -> SceneRect {
            let s = d.jitter
            let w = r.width * (1 + s * random.gaussian()), h = r.height * (1 + s * random.gaussian())
            let cx = r.centerX + s * r.width * random.gaussian(), cy = r.centerY + s * r.height * random.gaussian()
            return SceneRect(x: cx - w / 2, y: cy - h / 2, width: w, height: h)
        }
        func clipped(_ r: SceneRect) -> SceneRect {
            let l = max(0, r.x), tp = max(0, r.y)
            return SceneRect(x: l, y: tp, width: min(1, r.maxX) - l, height: min(1, r.maxY) - tp)
        }
        func clamp01(_ v: Double) -> Double { min(1, max(0, v)) }
        for p in truth where p.present {
            let person = scenario.people.first { $0.id == p.id }!
            if p.bodyVisible, let body = p.bodyRect, random.unit() >= d.missRate {
                let r = clipped(noisy(body))
                let visibleFraction = body.area > 0 ? body.intersection(image) / body.area : 0
                var detection = SceneDetection(kind: p.isObject ? .object : .body, rect: r,
                                               confidence: clamp01(0.6 + 0.35 * visibleFraction + 0.03 * random.gaussian()),
                                               detectorID: detectorID(p.id), personID: p.id)
                if d.keypoints, let face = p.faceRect { detection.keypoints = headAndShoulders(around: noisy(face)) }
                detections.append(detection)
            }
            if p.faceVisible, let face = p.faceRect, random.unit() >= d.faceMissRate ?? d.missRate {
                let speaking = clamp01((p.speaking ? 0.85 : 0.1) + d.attributeNoise * random.gaussian())
                let looking = clamp01(person.looking + d.attributeNoise * random.gaussian())
                detections.append(SceneDetection(kind: .face, rect: clipped(noisy(face)), confidence: clamp01(0.9 + 0.03 * random.gaussian()),
                                                 speakingConfidence: speaking, lookingAtCameraConfidence: looking,
                                                 detectorID: detectorID(p.id), personID: p.id))
            }
        }
        for ghost in scenario.ghosts where t >= ghost.t && t < ghost.t + ghost.duration && ghost.rect.count == 4 {
            detections.append(SceneDetection(kind: ghost.kind == "face" ? .face : .body,
                                             rect: SceneRect(x: ghost.rect[0], y: ghost.rect[1], width: ghost.rect[2], height: ghost.rect[3]),
                                             confidence: ghost.confidence, detectorID: -1, personID: -1))
        }
        // False positives: a poisson-ish number of random body-shaped boxes with middling confidence.
        var budget = d.falsePositiveRate
        while budget > 0, random.unit() < min(1, budget) {
            budget -= 1
            let h = 0.2 + 0.5 * random.unit(), w = h * 0.35
            detections.append(SceneDetection(kind: .body, rect: SceneRect(x: random.unit() * (1 - w), y: random.unit() * (1 - h), width: w, height: h),
                                             confidence: 0.3 + 0.4 * random.unit(), detectorID: -1, personID: -1))
        }
        let latency = d.latency + (d.latencyJitter > 0 ? d.latencyJitter * (2 * random.unit() - 1) : 0)
        return SceneFrame(captureTime: t, deliveryTime: t + latency, aim: aim, detections: detections, truth: truth,
                          intended: scenario.intended(at: t))
    }
}
