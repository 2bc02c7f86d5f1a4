#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// tentative → confirmed → lost → (re-acquired: confirmed | expired: deleted, i.e. removed).
public enum TrackLifecycle: Sendable, Hashable {
    /// Seen in too few consecutive frames to be trusted; deleted on its first miss.
    case tentative
    /// Seen recently.
    case confirmed
    /// Missed; kept, coasting on its prediction, until its re-acquisition window runs out.
    case lost
}

/// One tracked subject.
public struct Track: Sendable {
    public let id: SubjectIdentifier
    public let category: SubjectCategory
    public internal(set) var lifecycle: TrackLifecycle
    /// A person's body, or an object's box.
    public internal(set) var body: TrackedBox?
    /// A person's face.
    public internal(set) var face: TrackedBox?
    /// Smoothed 0…1 attributes of a person, nil until some observation carried them.
    public internal(set) var speakingConfidence: Double?
    public internal(set) var lookingAtCameraConfidence: Double?
    /// Smoothed face yaw, radians.
    public internal(set) var faceYaw: Double?
    /// Smoothed 0…1 facing the camera, from the body's keypoints (`Facing`).
    public internal(set) var bodyFacing: Double?
    public let firstSeen: Double
    public internal(set) var lastSeen: Double
    /// The last time the track was seen or known to be hidden behind a nearer subject: a lost
    /// track's re-acquisition window runs from here.
    public internal(set) var lastSeenOrHidden: Double
    public internal(set) var consecutiveHits: Int
    /// Frames the track was measured in, in all.
    public internal(set) var hits: Int
    /// Where the face sat on the body when both were last measured together.
    private var faceOnBody: FaceOnBody?
    /// Seen often enough, for long enough, to be a subject worth framing (`TrackerSettings`): a
    /// few frames of a false detection never are.
    public internal(set) var isEstablished = false

    /// How squarely the subject faces the camera, 0…1: from its face's yaw where the detector sent
    /// one (the face says it more directly than the shoulders), else from its body's keypoints;
    /// nil when neither was ever seen.
    public var facing: Double? {
        faceYaw.map { max(0, 1 - abs($0) / (Double.pi / 2)) } ?? bodyFacing
    }

    init(id: SubjectIdentifier, observation: SubjectObservation, time: Double, settings: KalmanSettings) {
        self.id = id
        category = observation.category
        lifecycle = .tentative
        firstSeen = time
        lastSeen = time
        lastSeenOrHidden = time
        consecutiveHits = 1
        hits = 1
        if let part = observation.body ?? observation.object {
            body = TrackedBox(box: part.box, confidence: part.confidence, time: time, settings: settings, clipped: part.clippedEdges)
        }
        if let face = observation.face {
            self.face = TrackedBox(box: face.box, confidence: face.confidence, time: time, settings: settings, clipped: face.clippedEdges)
        }
        takeAttributes(of: observation, weight: 1)
    }

    /// The box the subject is tracked and framed by: body (or object) if known, else face.
    public var box: Box { (body ?? face)!.box }

    /// Edges of `box` last seen on the image's border: where the subject may extend unseen.
    public var clippedEdges: BoxEdges { (body ?? face)!.clippedEdges }

    /// Center velocity of `box`, measurement units per second.
    public var velocity: (x: Double, y: Double) { (body ?? face)!.filter.velocity }

    /// The box as last measured (not filtered): MOTChallenge-style output, and where this frame's
    /// detection put a subject without a face (`TrackingLoop`).
    public var lastMeasuredBox: Box { (body ?? face)!.lastMeasurement }

    /// When `box` was last measured, the tracker's time.
    public var lastUpdateTime: Double { (body ?? face)!.lastUpdateTime }

    mutating func predict(dt: Double) {
        body?.predict(dt: dt)
        face?.predict(dt: dt)
    }

    mutating func update(with observation: SubjectObservation, time: Double, settings: TrackerSettings, stepInterval: Double) {
        if let part = observation.body ?? observation.object {
            if let known = body {
                body!.update(measurement: part.box(reaching: known.box), confidence: part.confidence, time: time, stepInterval: stepInterval,
                             clipped: part.clippedEdges)
            } else {
                body = TrackedBox(box: part.box, confidence: part.confidence, time: time, settings: settings.kalman, clipped: part.clippedEdges)
            }
        } else if let known = body, face != nil, time - known.lastUpdateTime > settings.faceMemory {
            // Likewise a body no longer detected (a person so near that the detector sees only the
            // face): its extrapolation drifts and grows; the face alone carries the track.
            body = nil
        }
        if let seenFace = observation.face {
            if let known = face {
                face!.update(measurement: seenFace.box(reaching: known.box), confidence: seenFace.confidence, time: time, stepInterval: stepInterval,
                             clipped: seenFace.clippedEdges)
            } else {
                face = TrackedBox(box: seenFace.box, confidence: seenFace.confidence, time: time, settings: settings.kalman, clipped: seenFace.clippedEdges)
            }
            if observation.body != nil, let body { faceOnBody = FaceOnBody(face: face!.box, body: body.box) }
        } else if let known = face, observation.body != nil, let body, let faceOnBody {
            // The face missed, its body found: the face is where the body says, once that is the
            // better guess.
            if let carried = faceOnBody.face(known.filter, on: body.filter) { face!.follow(carried, time: time) }
        } else if let known = face, body != nil, time - known.lastUpdateTime > settings.faceMemory {
            // A face unseen for a while coasts away from the body it belongs to; forget it rather
            // than frame or select by a stale guess.
            face = nil
        }
        let dt = time - lastSeen
        let weight = dt > 0 ? 1 - exp(-dt / settings.attributeTimeConstant) : 1
        takeAttributes(of: observation, weight: weight)
        consecutiveHits = lifecycle == .lost ? 1 : consecutiveHits + 1
        hits += 1
        lastSeen = time
        lastSeenOrHidden = time
    }

    /// Exponential smoothing of the face attributes and the body's facing, so one noisy frame
    /// neither makes nor breaks a speaker; `weight` 1 takes the new value as is.
    private mutating func takeAttributes(of observation: SubjectObservation, weight: Double) {
        func blend(_ old: Double?, _ new: Double?) -> Double? {
            guard let new else { return old }
            guard let old else { return new }
            return old + (new - old) * weight
        }
        if let pose = observation.body?.pose { bodyFacing = blend(bodyFacing, Facing.score(of: pose)) }
        guard let face = observation.face else { return }
        speakingConfidence = blend(speakingConfidence, face.speakingConfidence)
        lookingAtCameraConfidence = blend(lookingAtCameraConfidence, face.lookingAtCameraConfidence)
        faceYaw = blend(faceYaw, face.faceYaw)
    }
}
