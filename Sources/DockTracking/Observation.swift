/// What a detector saw in one frame.
public enum ObservationKind: Sendable, Hashable {
    case face
    case body
    case object
}

/// One detection, already converted into the tracker's measurement space (angles in dockd, via
/// `CameraModel.angularBox(of:aim:)` with the motor angles at capture time; pixels for MOT).
public struct Observation: Sendable, Hashable {
    public var kind: ObservationKind
    public var box: Box
    /// Detector confidence 0…1.
    public var confidence: Double
    /// Faces only: 0…1 likelihood that the person is speaking, if the client computes it.
    public var speakingConfidence: Double?
    /// Faces only: 0…1 likelihood that the person looks at the camera.
    public var lookingAtCameraConfidence: Double?
    /// Faces only: radians, 0 = facing the camera, negative = turned to its left (Vision's convention).
    public var faceYaw: Double?

    public init(kind: ObservationKind, box: Box, confidence: Double = 1,
                speakingConfidence: Double? = nil, lookingAtCameraConfidence: Double? = nil, faceYaw: Double? = nil) {
        self.kind = kind
        self.box = box
        self.confidence = confidence
        self.speakingConfidence = speakingConfidence
        self.lookingAtCameraConfidence = lookingAtCameraConfidence
        self.faceYaw = faceYaw
    }
}

/// Whether a subject is a person (face and/or body) or an object.
public enum SubjectCategory: Sendable, Hashable {
    case person
    case object
}

/// One subject's evidence in a frame after face↔body pairing: what the tracker associates.
public struct SubjectObservation: Sendable, Hashable {
    public var category: SubjectCategory
    public var body: Observation?
    public var face: Observation?
    public var object: Observation?

    /// The best detector confidence among the parts.
    public var confidence: Double {
        max(body?.confidence ?? 0, face?.confidence ?? 0, object?.confidence ?? 0)
    }
}
