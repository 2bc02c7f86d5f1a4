/// Joins face and body detections of the same person into one subject.
///
/// A face belongs to a body when its center lies within the body's width and in the upper part of
/// the body box, and the face is narrower than the body. Among the admissible pairs the assignment is
/// optimal for closeness to where a head is expected, so two people standing close are not swapped.
public struct PairingSettings: Sendable, Hashable {
    /// Fraction of the body box height, from its top, where a face center may lie.
    public var upperBodyFraction: Double = 0.4
    /// Expected face-center height below the body top, as a fraction of body height.
    public var expectedHeadDepth: Double = 0.1

    public init() {}
}

public enum PersonPairing {
    public static func pair(_ observations: [Observation], settings: PairingSettings = .init()) -> [SubjectObservation] {
        var faces: [Observation] = [], bodies: [Observation] = [], subjects: [SubjectObservation] = []
        faces.reserveCapacity(observations.count)
        bodies.reserveCapacity(observations.count)
        subjects.reserveCapacity(observations.count)
        for observation in observations {
            switch observation.kind {
            case .face: faces.append(observation)
            case .body: bodies.append(observation)
            case .object: subjects.append(SubjectObservation(category: .object, object: observation))
            }
        }
        var faceOfBody = [Int?](repeating: nil, count: bodies.count)
        var faceTaken = [Bool](repeating: false, count: faces.count)
        if !faces.isEmpty && !bodies.isEmpty {
            // Cost: head-normalized distance from the expected head position; 1 = inadmissible.
            var costs = [Double](repeating: 1, count: bodies.count * faces.count)
            for (bodyIndex, body) in bodies.enumerated() {
                let upperLimit = body.box.top + settings.upperBodyFraction * body.box.height
                let headX = body.box.centerX, headY = body.box.top + settings.expectedHeadDepth * body.box.height
                for (faceIndex, face) in faces.enumerated() {
                    let center = (x: face.box.centerX, y: face.box.centerY)
                    guard center.x >= body.box.left, center.x <= body.box.right,
                          center.y >= body.box.top, center.y <= upperLimit,
                          face.box.width <= body.box.width else { continue }
                    let distance = (sq(center.x - headX) / sq(body.box.width) + sq(center.y - headY) / sq(body.box.height)).squareRoot()
                    costs[bodyIndex * faces.count + faceIndex] = min(distance, 0.99)
                }
            }
            for pair in Assignment.match(costs: costs, rows: bodies.count, columns: faces.count, unmatchedCost: 1) {
                faceOfBody[pair.row] = pair.column
                faceTaken[pair.column] = true
            }
        }
        for (bodyIndex, body) in bodies.enumerated() {
            subjects.append(SubjectObservation(category: .person, body: body, face: faceOfBody[bodyIndex].map { faces[$0] }))
        }
        for (faceIndex, face) in faces.enumerated() where !faceTaken[faceIndex] {
            subjects.append(SubjectObservation(category: .person, face: face))
        }
        return subjects
    }
}
