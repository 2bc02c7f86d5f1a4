#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import DockTracking

@Suite struct BodyPoseTests {
    /// A standing person's keypoints in `body`, turned `turn` radians from the camera (0: facing
    /// it, ±π/2: side on, π: back to it): the head's points and the shoulders narrow with the turn,
    /// the face's points go out of sight past side on.
    static func skeleton(in body: Box, turn: Double) -> BodyPose {
        let h = body.height, x = body.centerX
        let across = cos(turn), side = sin(turn)
        let faceShown = across >= 0 ? 1.0 : 0.1
        let torso = 0.3 * h
        let shoulderHalf = 0.5 * torso * (0.75 * abs(across) + 0.25 * abs(side))
        func point(_ dx: Double, _ dy: Double, _ visibility: Double = 1) -> BodyKeypoint {
            BodyKeypoint(x: x + dx, y: body.top + dy, visibility: visibility)
        }
        let head = 0.06 * h
        return BodyPose(joints: [
            .nose: point(0.5 * head * side, 0.1 * h, faceShown),
            .leftEye: point(0.3 * head * across, 0.08 * h, across > -0.2 ? faceShown : 0.1),
            .rightEye: point(-0.3 * head * across, 0.08 * h, across > 0.2 ? faceShown : 0.1),
            .leftEar: point(0.5 * head * across, 0.09 * h, side < 0.9 ? 1 : 0.2),
            .rightEar: point(-0.5 * head * across, 0.09 * h, side > -0.9 ? 1 : 0.2),
            .leftShoulder: point(shoulderHalf, 0.2 * h), .rightShoulder: point(-shoulderHalf, 0.2 * h),
            .leftHip: point(0.6 * shoulderHalf, 0.2 * h + torso), .rightHip: point(-0.6 * shoulderHalf, 0.2 * h + torso),
        ])
    }

    static let body = Box(centerX: 0.1, centerY: 0.05, width: 0.16, height: 0.4)

    @Test func theHeadOfAFrontalPoseSpansEarToEarCentredOnTheNose() throws {
        let pose = Self.skeleton(in: Self.body, turn: 0)
        let head = try #require(KeypointHead.box(of: pose))
        #expect(abs(head.centerX - pose.joints[.nose]!.x) < 1e-9)
        #expect(abs(head.centerY - pose.joints[.nose]!.y) < 1e-9)
        // Wider of ear span (0.024) and 0.4 × shoulder span (0.4 × 0.09 = 0.036).
        #expect(abs(head.width - 0.036) < 1e-9, "\(head.width)")
        #expect(head.width == head.height)
    }

    @Test func noHeadWithoutTheNoseOrAnEye() {
        var pose = Self.skeleton(in: Self.body, turn: 0)
        for joint in [BodyJoint.nose, .leftEye, .rightEye] { pose.joints[joint]!.visibility = 0.2 }
        #expect(KeypointHead.box(of: pose) == nil)
    }

    @Test func aBodyWithKeypointsAndNoFaceGetsItsHeadAsTheFace() {
        var body = Observation(kind: .body, box: Self.body, confidence: 0.9)
        body.pose = Self.skeleton(in: Self.body, turn: 0)
        let added = KeypointHead.addingHeads(to: [body])
        #expect(added.count == 2)
        #expect(added.last?.kind == .face)
        #expect(added.last.map { $0.confidence < body.confidence } == true)
        // A detected face on the head: the keypoints add nothing.
        let face = Observation(kind: .face, box: Box(centerX: 0.102, centerY: -0.105, width: 0.04, height: 0.05))
        #expect(KeypointHead.addingHeads(to: [body, face]).count == 2)
    }

    @Test func facingIsHighestFrontOnAndLowestFromBehind() throws {
        let scores = try [0, Double.pi / 4, Double.pi / 2, Double.pi].map { turn in
            try #require(Facing.score(of: Self.skeleton(in: Self.body, turn: turn)))
        }
        #expect(scores[0] > 0.9, "\(scores)")
        #expect(scores[0] > scores[1] && scores[1] > scores[2], "\(scores)")
        #expect(scores[3] < 0.15, "\(scores)")
        #expect(Facing.score(of: BodyPose(joints: [.leftHip: BodyKeypoint(x: 0, y: 0)])) == nil)
    }

    /// Two people alike but for their keypoints, bodies only (no face detected).
    private func tracks(leftTurn: Double?, rightTurn: Double?) -> [Track] {
        var tracker = MultiSubjectTracker(seed: 99)
        for frame in 0..<5 {
            let observations = [(-0.2, leftTurn), (0.2, rightTurn)].map { x, turn in
                let box = Box(centerX: x, centerY: 0.05, width: 0.16, height: 0.4)
                var body = Observation(kind: .body, box: box, confidence: 0.9)
                body.pose = turn.map { Self.skeleton(in: box, turn: $0) }
                return body
            }
            tracker.update(observations: observations, time: Double(frame) * Fixture.frameInterval)
        }
        return tracker.subjects
    }

    @Test func theSelectorPrefersTheBodyFacingTheCamera() {
        for (leftTurn, rightTurn) in [(Double.pi, 0.0), (0.1, Double.pi / 2)] {
            let tracks = tracks(leftTurn: leftTurn, rightTurn: rightTurn)
            var selector = SubjectSelector()
            let facingX = cos(leftTurn) > cos(rightTurn) ? -0.2 : 0.2
            #expect(selector.update(tracks: tracks, field: Fixture.field, time: 0).primary == Fixture.id(nearX: facingX, in: tracks))
        }
        // Without keypoints facing is unknown and neutral: equal people score equally.
        let plain = tracks(leftTurn: nil, rightTurn: nil)
        let selector = SubjectSelector()
        #expect(abs(selector.score(plain[0], field: Fixture.field) - selector.score(plain[1], field: Fixture.field)) < 1e-9)
    }

    @Test func withoutAFaceTheHeadFromKeypointsGoesOnTheFaceLine() throws {
        let box = Box(centerX: 0.1, centerY: 0.1, width: 0.16, height: 0.4)
        var body = Observation(kind: .body, box: box, confidence: 0.9)
        body.pose = Self.skeleton(in: box, turn: 0)
        var pipeline = TrackingPipeline(tracker: MultiSubjectTracker(seed: 3), camera: Fixture.camera)
        var step: TrackingStep?
        for frame in 0..<10 {
            step = pipeline.step(observations: [body], time: Double(frame) * Fixture.frameInterval, aim: Fixture.aim)
        }
        let framed = try #require(step?.framing)
        let head = try #require(KeypointHead.box(of: body.pose!))
        let placed = Fixture.camera.normalizedRect(of: head, aim: framed.desiredAim)
        #expect(abs(placed.y + placed.height / 2 - FramingSettings().faceLine) < 0.01, "\(placed)")
        #expect(abs(placed.x + placed.width / 2 - 0.5) < 0.01, "\(placed)")
    }
}
