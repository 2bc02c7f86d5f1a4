/// The body joints a client may send with a body observation: COCO's seventeen keypoints, which
/// BlazePose, MoveNet and Vision's body pose all give (their extra points are left out).
public enum BodyJoint: String, Sendable, Hashable, CaseIterable {
    case nose
    case leftEye = "left_eye", rightEye = "right_eye"
    case leftEar = "left_ear", rightEar = "right_ear"
    case leftShoulder = "left_shoulder", rightShoulder = "right_shoulder"
    case leftElbow = "left_elbow", rightElbow = "right_elbow"
    case leftWrist = "left_wrist", rightWrist = "right_wrist"
    case leftHip = "left_hip", rightHip = "right_hip"
    case leftKnee = "left_knee", rightKnee = "right_knee"
    case leftAnkle = "left_ankle", rightAnkle = "right_ankle"
}

/// One joint where the pose model put it, in the space of the observation's box.
public struct BodyKeypoint: Sendable, Hashable {
    public var x: Double
    public var y: Double
    /// 0…1: how sure the model is that the joint is in sight (not hidden or outside the image).
    public var visibility: Double

    public init(x: Double, y: Double, visibility: Double = 1) {
        self.x = x
        self.y = y
        self.visibility = visibility
    }
}

/// A body's keypoints, by joint. Joints below `seenVisibility` count as not seen.
public struct BodyPose: Sendable, Hashable {
    public var joints: [BodyJoint: BodyKeypoint]
    /// The visibility from which a joint counts as seen (MediaPipe's own drawing threshold).
    public static let seenVisibility = 0.5

    public init(joints: [BodyJoint: BodyKeypoint]) {
        self.joints = joints
    }

    /// The joint if it is seen.
    public subscript(joint: BodyJoint) -> BodyKeypoint? {
        guard let point = joints[joint], point.visibility >= Self.seenVisibility else { return nil }
        return point
    }

    /// The same pose with every point mapped (into another space).
    public func mapped(_ transform: (BodyKeypoint) -> BodyKeypoint) -> BodyPose {
        BodyPose(joints: joints.mapValues(transform))
    }
}
