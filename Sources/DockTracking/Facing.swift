/// How squarely a body faces the camera, 0…1, from its keypoints: the selector's attention cue for
/// a person whose face says nothing (not detected, or sent without looking-at-camera or yaw).
public enum Facing {
    /// Shoulder width over shoulder-to-hip height of an adult seen from the front (about 0.4 m over
    /// 0.5 m), and seen from the side (the shoulders' depth).
    static let frontalShoulderSpread = 0.75
    static let sideShoulderSpread = 0.25

    /// The product of two cues: the face turned this way (nose and both eyes in sight, by their
    /// visibility) and the shoulders square to the camera (their width against the torso's height;
    /// a person seen from behind has square shoulders but no face, one seen from the side the
    /// reverse). Without hips or shoulders the face cue alone; nil without any head joint.
    public static func score(of pose: BodyPose) -> Double? {
        let head: [BodyJoint] = [.nose, .leftEye, .rightEye]
        guard head.contains(where: { pose.joints[$0] != nil }) else { return nil }
        func visibility(_ joint: BodyJoint) -> Double { pose.joints[joint]?.visibility ?? 0 }
        let face = (visibility(.nose) + min(visibility(.leftEye), visibility(.rightEye))) / 2
        guard let spread = shoulderSpread(of: pose) else { return face }
        let square = min(max((spread - sideShoulderSpread) / (frontalShoulderSpread - sideShoulderSpread), 0), 1)
        return face * square
    }

    /// Shoulder width over the height from the shoulders' middle to the hips' (either hip, if only
    /// one is seen); nil without both shoulders and a hip.
    static func shoulderSpread(of pose: BodyPose) -> Double? {
        guard let left = pose[.leftShoulder], let right = pose[.rightShoulder] else { return nil }
        let hips = [pose[.leftHip], pose[.rightHip]].compactMap { $0 }
        guard !hips.isEmpty else { return nil }
        let hipY = hips.map(\.y).reduce(0, +) / Double(hips.count)
        let torso = abs(hipY - (left.y + right.y) / 2)
        guard torso > 0 else { return nil }
        return abs(left.x - right.x) / torso
    }
}
