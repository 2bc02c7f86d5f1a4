/// Where a person's head is, from body keypoints, for when no face detector found the face: a
/// person far away, turned aside or looking down still gets a face, so the framer puts the head on
/// the face line instead of the body's middle, and the camera follows the head, not the body box's
/// changes of shape (sitting, bending, raising an arm).
public enum KeypointHead {
    // Head width over each distance, from adult head proportions: the ears are about a head's width
    // apart, the outer eye corners 0.6 of it, nose to ear 0.65 (seen from the side) and the
    // shoulders 2.5 head widths. Turning the head shortens some of these distances in the image and
    // lengthens none, so the widest estimate wins.
    static let widthPerEarSpan = 1.0
    static let widthPerEyeSpan = 1.6
    static let widthPerNoseToEar = 1.5
    static let widthPerShoulderSpan = 0.4
    /// A head box is only a guess: it counts for less than the body it comes from.
    static let confidenceFactor = 0.8

    /// The square head box, centred across between the ears (or the ear and the nose, or the head
    /// points seen) and, up and down, on the nose (or a little below the eyes), the way a face
    /// detector's box sits; nil without the nose or an eye.
    public static func box(of pose: BodyPose) -> Box? {
        let nose = pose[.nose]
        let eyes = [pose[.leftEye], pose[.rightEye]].compactMap { $0 }
        let ears = [pose[.leftEar], pose[.rightEar]].compactMap { $0 }
        guard nose != nil || !eyes.isEmpty else { return nil }
        var size = 0.0
        if ears.count == 2 { size = max(size, widthPerEarSpan * distance(ears[0], ears[1])) }
        if eyes.count == 2 { size = max(size, widthPerEyeSpan * distance(eyes[0], eyes[1])) }
        if let nose { for ear in ears { size = max(size, widthPerNoseToEar * distance(nose, ear)) } }
        if let left = pose[.leftShoulder], let right = pose[.rightShoulder] {
            size = max(size, widthPerShoulderSpan * distance(left, right))
        }
        guard size > 0 else { return nil }
        let centerX: Double
        if ears.count == 2 {
            centerX = (ears[0].x + ears[1].x) / 2
        } else if let ear = ears.first, let nose {
            // Seen from the side: the ear lies behind the head's middle, the nose before it.
            centerX = (ear.x + nose.x) / 2
        } else {
            let head = [nose].compactMap { $0 } + eyes + ears
            centerX = head.map(\.x).reduce(0, +) / Double(head.count)
        }
        let centerY = nose?.y ?? eyes.map(\.y).reduce(0, +) / Double(eyes.count) + 0.15 * size
        return Box(centerX: centerX, centerY: centerY, width: size, height: size)
    }

    /// The observations plus, for each body whose keypoints place a head where no face was
    /// detected (no face's centre within the head box grown by half its size each way), that head
    /// as a face: pairing then joins it to its body like a detected face.
    public static func addingHeads(to observations: [Observation]) -> [Observation] {
        guard observations.contains(where: { $0.pose != nil }) else { return observations }
        var result = observations
        for body in observations where body.kind == .body {
            guard let pose = body.pose, let head = box(of: pose) else { continue }
            let found = observations.contains { face in
                face.kind == .face && abs(face.box.centerX - head.centerX) <= head.width
                    && abs(face.box.centerY - head.centerY) <= head.height
            }
            if !found { result.append(Observation(kind: .face, box: head, confidence: confidenceFactor * body.confidence)) }
        }
        return result
    }

    private static func distance(_ a: BodyKeypoint, _ b: BodyKeypoint) -> Double {
        ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }
}
