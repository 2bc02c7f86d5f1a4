@testable import DockTracking

/// A 60°×45° camera at the origin, and people made of a body and a face in angular units.
enum Fixture {
    static let camera = CameraModel(horizontalFieldOfView: 60 * .pi / 180, verticalFieldOfView: 45 * .pi / 180)
    static let aim = Aim(x: 0, y: 0)
    static let frameInterval = 1.0 / 30

    struct Person {
        var x: Double
        var y: Double = 0.05
        var height: Double = 0.4
        var speaking: Double? = nil
        var looking: Double? = nil
        var yaw: Double? = nil

        var observations: [Observation] {
            let body = Box(centerX: x, centerY: y, width: height * 0.4, height: height)
            let face = Box(centerX: x, centerY: body.top + height * 0.1, width: height * 0.12, height: height * 0.15)
            return [Observation(kind: .body, box: body, confidence: 0.9),
                    Observation(kind: .face, box: face, confidence: 0.9, speakingConfidence: speaking,
                                lookingAtCameraConfidence: looking, faceYaw: yaw)]
        }
    }

    /// A tracker that has seen `people` (unchanged) for `frames` frames.
    static func tracker(_ people: [Person], frames: Int = 5) -> MultiSubjectTracker {
        var tracker = MultiSubjectTracker(seed: 99)
        for frame in 0..<frames {
            tracker.update(observations: people.flatMap(\.observations), time: Double(frame) * frameInterval)
        }
        return tracker
    }

    static var field: Box { camera.angularBox(of: .fullFrame, aim: aim) }

    static func id(nearX x: Double, in tracks: [Track]) -> SubjectIdentifier {
        tracks.min { abs($0.box.centerX - x) < abs($1.box.centerX - x) }!.id
    }
}
