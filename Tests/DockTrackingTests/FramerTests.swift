import Testing
@testable import DockTracking

@Suite struct FramerTests {
    typealias Person = Fixture.Person

    /// Normalized image x of the track's center when the camera is at `aim`.
    private func centerX(of track: Track, aim: Aim) -> Double {
        let center = Box(centerX: track.box.centerX, centerY: track.box.centerY, width: 0, height: 0)
        return Fixture.camera.normalizedRect(of: center, aim: aim).x
    }

    @Test func leftAndRightThirds() {
        let tracks = Fixture.tracker([Person(x: 0.1)]).subjects
        for (mode, expected) in [(FramingMode.left, 1.0 / 3), (.right, 2.0 / 3), (.center, 0.5)] {
            var framer = Framer()
            framer.mode = mode
            let result = framer.frame(selected: [tracks[0].id], tracks: tracks, camera: Fixture.camera, aim: Fixture.aim)
            #expect(abs(centerX(of: tracks[0], aim: result.desiredAim) - expected) < 1e-6, "\(mode)")
        }
    }

    @Test func aWholeBodyShotCentresTheBodyInsteadOfPuttingTheFaceOnTheFaceLine() {
        let tracks = Fixture.tracker([Person(x: 0.1, y: 0.1, height: 0.3)]).subjects
        var framer = Framer()
        framer.bodiesCentered = true
        let result = framer.frame(selected: [tracks[0].id], tracks: tracks, camera: Fixture.camera, aim: Fixture.aim)
        let body = Fixture.camera.normalizedRect(of: tracks[0].box, aim: result.desiredAim)
        #expect(abs(body.y + body.height / 2 - 0.5) < 1e-6)
    }

    @Test func regionOfInterestContainsTheSubject() {
        // A wide group on the left third of the right half of the image: placed by the third alone
        // its left edge would stick out of the region, so containment must shift it in.
        let tracks = Fixture.tracker([Person(x: -0.12, height: 0.5), Person(x: 0.08, height: 0.5)]).subjects
        var framer = Framer()
        framer.mode = .left
        framer.regionOfInterest = NormalizedRect(x: 0.5, y: 0, width: 0.5, height: 1)
        let result = framer.frame(selected: tracks.map(\.id), tracks: tracks, camera: Fixture.camera, aim: Fixture.aim)
        #expect(result.framed.count == 2)
        for track in tracks {
            let rect = Fixture.camera.normalizedRect(of: track.box, aim: result.desiredAim)
            #expect(rect.x >= 0.5 - 1e-9 && rect.maxX <= 1 + 1e-9)
            let face = Fixture.camera.normalizedRect(of: track.face!.box, aim: result.desiredAim)
            #expect(face.y >= FramingSettings().headroom - 1e-9, "headroom above the face")
        }
    }

    @Test func groupThatDoesNotFitFallsBackToTheFirst() {
        let tracks = Fixture.tracker([Person(x: -0.45), Person(x: 0.45)]).subjects
        let framer = Framer()
        let first = Fixture.id(nearX: 0.45, in: tracks)
        let other = Fixture.id(nearX: -0.45, in: tracks)
        let result = framer.frame(selected: [first, other], tracks: tracks, camera: Fixture.camera, aim: Fixture.aim)
        #expect(result.framed == [first])
    }

    @Test func leadRoomAheadOfAMovingSubject() {
        var tracker = MultiSubjectTracker(seed: 12)
        for frame in 0..<30 {
            let time = Double(frame) * Fixture.frameInterval
            tracker.update(observations: Person(x: 0.3 * time).observations, time: time)
        }
        let framer = Framer()
        let track = tracker.subjects[0]
        let result = framer.frame(selected: [track.id], tracks: tracker.subjects, camera: Fixture.camera, aim: Fixture.aim)
        // Moving right: placed left of center, with room ahead.
        #expect(centerX(of: track, aim: result.desiredAim) < 0.45)
    }

    @Test func aSubjectIsFramedByItsFaceAcrossNotByItsLeaningBody() {
        // A person leaning to one side: the body's box is centered 0.04 rad left of the head.
        let body = Box(centerX: 0.1, centerY: 0.05, width: 0.16, height: 0.4)
        let face = Box(centerX: 0.14, centerY: body.top + 0.04, width: 0.05, height: 0.06)
        var tracker = MultiSubjectTracker(seed: 99)
        for frame in 0..<5 {
            tracker.update(observations: [Observation(kind: .body, box: body, confidence: 0.9), Observation(kind: .face, box: face, confidence: 0.9)],
                           time: Double(frame) * Fixture.frameInterval)
        }
        let track = tracker.subjects[0]
        var framer = Framer()
        framer.mode = .center
        let result = framer.frame(selected: [track.id], tracks: tracker.subjects, camera: Fixture.camera, aim: Fixture.aim)
        let placed = Fixture.camera.normalizedRect(of: track.face!.box, aim: result.desiredAim)
        #expect(abs(placed.x + placed.width / 2 - 0.5) < 1e-6, "face at x \(placed.x + placed.width / 2)")
    }

    @Test func subjectOutsideTheImageIsNotInFrame() {
        let tracks = Fixture.tracker([Person(x: 0.7)]).subjects
        let framer = Framer()
        let result = framer.frame(selected: tracks.map(\.id), tracks: tracks, camera: Fixture.camera, aim: Fixture.aim)
        #expect(!result.inFrame)
        #expect(result.desiredAim.x - Fixture.aim.x > 0.5)
    }
}
