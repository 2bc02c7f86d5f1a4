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
    /// The box's edges that lie on the image's border: there the object may go on out of sight,
    /// so such an edge says only "at least this far" (a near person's body cut off by the frame).
    public var clippedEdges: BoxEdges = []
    /// Bodies only: the pose model's keypoints, in the box's space.
    public var pose: BodyPose?

    public init(kind: ObservationKind, box: Box, confidence: Double = 1,
                speakingConfidence: Double? = nil, lookingAtCameraConfidence: Double? = nil, faceYaw: Double? = nil) {
        self.kind = kind
        self.box = box
        self.confidence = confidence
        self.speakingConfidence = speakingConfidence
        self.lookingAtCameraConfidence = lookingAtCameraConfidence
        self.faceYaw = faceYaw
    }

    /// The box, with each clipped edge pushed out to `reference`'s where that lies further out:
    /// what the measurement says of the whole object, given where it was expected.
    public func box(reaching reference: Box) -> Box {
        guard !clippedEdges.isEmpty else { return box }
        let left = clippedEdges.contains(.left) ? min(box.left, reference.left) : box.left
        let right = clippedEdges.contains(.right) ? max(box.right, reference.right) : box.right
        let top = clippedEdges.contains(.top) ? min(box.top, reference.top) : box.top
        let bottom = clippedEdges.contains(.bottom) ? max(box.bottom, reference.bottom) : box.bottom
        return Box(left: left, top: top, width: right - left, height: bottom - top)
    }
}

/// Edges of a box.
public struct BoxEdges: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let left = BoxEdges(rawValue: 1 << 0)
    public static let right = BoxEdges(rawValue: 1 << 1)
    public static let top = BoxEdges(rawValue: 1 << 2)
    public static let bottom = BoxEdges(rawValue: 1 << 3)

    /// The edges of a normalized image rect that lie on the image's border (within `margin`).
    public init(touching rect: NormalizedRect, margin: Double = 0.002) {
        var edges: BoxEdges = []
        if rect.x <= margin { edges.insert(.left) }
        if rect.maxX >= 1 - margin { edges.insert(.right) }
        if rect.y <= margin { edges.insert(.top) }
        if rect.maxY >= 1 - margin { edges.insert(.bottom) }
        self = edges
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
