#if canImport(Glibc)
import Glibc
#endif
import DockCore
import DockProtocol
import DockTracking
import DockSim
import VirtualTime
import StandEngine
import Testing

/// System tracking through the engine that ships, against the simulated stand, with a camera app
/// streaming what it sees (TestScene).
@Suite("Engine: tracking")
struct TrackingTests {
    @Test func theStandTurnsToTheSubjectAndAStillSubjectGetsAStillCamera() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        let scene = TestScene(people: [.init(yaw: 0.3)])
        rig.stream(scene, for: 3)
        #expect(abs(rig.angle(.yaw) - 0.3) < 0.03)
        let before = rig.movingCommands
        rig.stream(scene, for: 5)
        #expect(rig.movingCommands == before, "no motion command once the still subject is framed")
    }

    @Test func afterTheExitsStopNeitherTrackingNorAClientMovesTheStand() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        rig.stream(TestScene(people: [.init(yaw: 0.45)]), for: 0.5)
        #expect(rig.movingCommands > 0, "tracking turns the stand")
        rig.shutdown()
        rig.clearRecords()
        // The exit waits up to 0.5 s for the STOP's acknowledgement: frames and FEEDBACK keep
        // coming, the subject walks on.
        rig.stream(TestScene(people: [.init(yaw: 0.1)]), for: 0.5)
        #expect(rig.movingCommands == 0, "\(rig.movingCommands) motion commands after the exit's STOP")
        #expect(throws: EngineError.self) { try rig.send(.velocity([.yaw: 0.3])) }
        #expect(rig.movingCommands == 0)
    }

    @Test func withHoldTheStandStaysWhereTheSubjectWasLastSeen() throws {
        var settings = EngineSettings()
        settings.tracking.control.lostBehaviour = .hold
        var rig = VirtualHost<SimulatedStand>.connected(settings)
        rig.stream(TestScene(people: [.init(yaw: 0.4)]), for: 3)
        let framed = rig.angle(.yaw)
        rig.stream(TestScene(people: []), for: 10)
        #expect(abs(rig.angle(.yaw) - framed) < 0.02)
    }

    @Test func homeTakesTheShortestWayOnAContinuousYaw() throws {
        var settings = EngineSettings()
        settings.tracking.control.lostBehaviour = .home
        var rig = VirtualHost<SimulatedStand>.connected(settings)
        // A turn and a bit to the left, as after following someone walking around the stand.
        _ = try rig.send(.orient([.yaw: 2 * .pi + 0.5], relative: false, duration: nil), from: .other)
        rig.run(for: 8)
        #expect(abs(rig.angle(.yaw) - 2 * .pi - 0.5) < 0.02)
        rig.clientGone(ClientRef.other.id)
        rig.stream(TestScene(people: [.init(yaw: 0.5)]), for: 2)
        var farthest = 0.0
        rig.stream(TestScene(people: []), for: 12) { rig, _ in farthest = max(farthest, abs(rig.angle(.yaw) - 2 * .pi)) }
        #expect(abs(rig.angle(.yaw) - 2 * .pi) < 0.05, "home is the nearest whole turn")
        #expect(farthest < 0.7, "no unwinding of the turns")
    }

    @Test func afterATurnRequestTrackingFramesWhatIsThereAndDoesNotTurnBack() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        let scene = TestScene(people: [.init(yaw: 0), .init(yaw: -1.2)])
        rig.stream(scene, for: 2)
        #expect(abs(rig.angle(.yaw)) < 0.05)
        _ = try rig.send(.orient([.yaw: -1.15], relative: false, duration: 0.8), from: .app)
        rig.stream(scene, for: 4)
        #expect(abs(rig.angle(.yaw) + 1.2) < 0.05, "framing the person the stand was turned to")
    }

    @Test func aSubjectsLastSeenIsItsFramesCaptureTimeAndStaysBehindWhileItsBoxIsPredicted() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        rig.stream(TestScene(people: [.init(yaw: 0.1)]), for: 1.5)
        let seen = rig.engine.trackingReport(at: rig.now)
        let subject = try #require(seen.subjects.first)
        #expect(subject.lastSeen == seen.captureTime, "measured in the frame reported")
        rig.stream(TestScene(people: []), for: 0.5)  // hidden: the track coasts
        let hidden = rig.engine.trackingReport(at: rig.now)
        let coasting = try #require(hidden.subjects.first { $0.id == subject.id })
        #expect(coasting.lastSeen == subject.lastSeen, "not measured since")
        #expect(coasting.lastSeen < hidden.captureTime! - 0.4)
    }

    /// A face rising steadily (someone slowly standing up) that the detector misses every other
    /// frame is followed as closely as one it finds in every frame. Pitch's rate fades out once
    /// the camera is past where the face was measured (issue 22, sit-stand); a missed frame has no
    /// measurement of the face, and the last one, a frame old, lags the moving face by a frame's
    /// travel: taken for this frame's, it faded the rate with the camera still behind the face.
    @Test func aRisingFaceMissedEveryOtherFrameIsFollowedAsClosely() throws {
        /// The face's pitch less the camera's over the rise's last 2 s (the face line's offset in both).
        func lag(facesMissed: Bool) -> Double {
            var rig = VirtualHost<SimulatedStand>.connected()
            rig.stream(TestScene(people: [.init(yaw: 0, pitch: 0)]), for: 2)
            let rate = 0.12, frameRate = 15.0, latency = 0.05
            var lags: [Double] = []
            for frame in 0..<45 {  // 3 s
                let captured = rig.now
                var person = TestScene.Person(yaw: 0, pitch: rate * Double(frame) / frameRate)
                person.faceMissed = facesMissed && frame % 2 == 1
                let detections = TestScene(people: [person]).detections(rig)
                rig.run(for: latency)
                _ = rig.command(.observe(ObservedFrame(detections: detections, captureTime: captured)), from: .app)
                rig.run(for: 1 / frameRate - latency)
                if frame >= 15 { lags.append(person.pitch - rig.angle(.pitch)) }
            }
            return lags.reduce(0, +) / Double(lags.count)
        }
        let seen = lag(facesMissed: false), missed = lag(facesMissed: true)
        #expect(abs(missed - seen) < 0.001, "the camera \(missed * 1000) mrad below the face missed every other frame, \(seen * 1000) below the face seen")
    }

    @Test func aFewFramesOfAFalsePersonDoNotMoveTheCamera() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        let real = TestScene(people: [.init(yaw: 0)])
        rig.stream(real, for: 2)
        let ghost = TestScene(people: [.init(yaw: 0), .init(yaw: 0.3, size: 0.6)])
        rig.stream(ghost, for: 4.0 / 15)  // four frames
        var farthest = 0.0
        rig.stream(real, for: 3) { rig, _ in farthest = max(farthest, abs(rig.angle(.yaw))) }
        #expect(farthest < 0.02)
        #expect(rig.engine.trackingReport(at: rig.now).subjects.count == 1, "the false person is forgotten")
    }

    @Test func aSelectionFollowsTheSubjectWhenItComesBackAsANewTrack() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        let both = TestScene(people: [.init(yaw: 0.15), .init(yaw: -0.15)])
        rig.stream(both, for: 1.5)
        // Tap the person on the right of the image (yaw −0.15).
        let report = rig.engine.trackingReport(at: rig.now)
        let right = try #require(report.subjects.max { $0.rect.x < $1.rect.x })
        guard case .selected(let ids)? = try rig.send(.selectAt(x: right.rect.x + right.rect.width / 2, y: right.rect.y + 0.05), from: .app) else {
            Issue.record("no selection"); return
        }
        #expect(ids == [right.id])
        rig.stream(TestScene(people: [.init(yaw: 0.15)]), for: 6)  // gone longer than a lost track is kept
        rig.stream(both, for: 3)
        let subjects = rig.engine.trackingReport(at: rig.now).subjects
        #expect(subjects.filter(\.selected).count == 1)
        #expect(subjects.max { $0.rect.x < $1.rect.x }?.selected == true, "the returning person (on the right) is selected again, not the other")
        #expect(abs(rig.angle(.yaw) + 0.15) < 0.05)
    }

    /// DockKit's select-at-point is a tap on the preview: the frame the app shows. The camera turns
    /// to the tapped person from that frame on, not one frame later after turning toward whoever
    /// was framed before (`child`: the adult behind, framed on the session's first frame).
    @Test func aTapOnTheFirstFrameTurnsTheCameraToTheTappedPersonAtOnce() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        let scene = TestScene(people: [.init(yaw: 0.25, size: 0.6), .init(yaw: -0.25, size: 0.25)])
        let detections = scene.detections(rig)
        rig.run(for: 0.05)
        _ = rig.command(.observe(ObservedFrame(detections: detections, captureTime: rig.now - 0.05)), from: .app)
        let report = rig.engine.trackingReport(at: rig.now)
        let right = try #require(report.subjects.max { $0.rect.x < $1.rect.x })
        #expect(right.saliencyRank > 1, "the nearer person on the left is the primary")
        let face = try #require(right.faceRect)
        _ = try rig.send(.selectAt(x: face.x + face.width / 2, y: face.y + face.height / 2), from: .app)
        var farthestLeft = 0.0
        for _ in 0..<13 {  // until the next frame of a 15 Hz stream would come
            rig.run(for: 0.005)
            farthestLeft = max(farthestLeft, rig.angle(.yaw))
        }
        #expect(farthestLeft < 0.0005, "turned \(farthestLeft * 1000) mrad toward the person not tapped")
        #expect(rig.angle(.yaw) < -0.001, "turning toward the tapped person: yaw \(rig.angle(.yaw))")
    }

    @Test func aSelectionOfSomeoneWhoNeverComesBackIsReleased() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
        rig.stream(TestScene(people: [.init(yaw: 0.1), .init(yaw: -0.2)]), for: 1.5)
        let report = rig.engine.trackingReport(at: rig.now)
        let chosen = try #require(report.subjects.min { $0.rect.x < $1.rect.x })
        _ = try rig.send(.select(ids: [chosen.id]), from: .app)
        rig.stream(TestScene(people: [.init(yaw: -0.2)]), for: 16)
        #expect(rig.engine.trackingReport(at: rig.now).subjects.contains { $0.selected }, "automatic selection again")
    }
}
