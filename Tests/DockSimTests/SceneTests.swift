import Glibc
import Testing
@testable import DockSim

@Suite("Scene") struct SceneTests {
    private func scenario(_ people: [ScenePerson]) -> SceneScenario {
        var s = SceneScenario(name: "test", duration: 1, people: people, primary: [ScenePrimaryEntry(t: 0, ids: [people[0].id])])
        s.detector.jitter = 0
        s.detector.missRate = 0
        s.detector.falsePositiveRate = 0
        return s
    }

    @Test func aPersonStraightAheadAtCameraHeightLandsAtTheImageCenter() {
        var person = ScenePerson(id: 1, path: [SceneWaypoint(t: 0, x: 0, z: 3)])
        // Face center (height − 0.12) at the camera's height.
        person.height = SceneCamera().height + 0.12
        let scene = SceneSimulator(scenario: scenario([person]))
        let truth = scene.truth(at: 0, aim: SceneAim(x: 0, y: 0))[0]
        let face = truth.faceRect!
        #expect(abs(face.centerX - 0.5) < 1e-9)
        #expect(abs(face.centerY - 0.5) < 1e-9)
        #expect(abs(truth.faceDirection.x) < 1e-12 && abs(truth.faceDirection.y) < 1e-12)
        // Pointing the camera at the person's direction from anywhere puts them back at the center.
        var aside = person
        aside.path = [SceneWaypoint(t: 0, x: 1.5, z: 2.5)]
        let sideScene = SceneSimulator(scenario: scenario([aside]))
        let direction = sideScene.truth(at: 0, aim: SceneAim(x: 0, y: 0))[0].faceDirection
        let centered = sideScene.truth(at: 0, aim: direction)[0].faceRect!
        #expect(abs(centered.centerX - 0.5) < 1e-6 && abs(centered.centerY - 0.5) < 1e-6)
    }

    @Test func aNearerPersonHidesTheFartherOneBehindThem() {
        let far = ScenePerson(id: 1, path: [SceneWaypoint(t: 0, x: 0, z: 4)])
        let near = ScenePerson(id: 2, path: [SceneWaypoint(t: 0, x: 0.05, z: 2)])
        var scene = SceneSimulator(scenario: scenario([far, near]))
        let truth = scene.truth(at: 0, aim: SceneAim(x: 0, y: 0))
        #expect(!truth[0].faceVisible && !truth[0].bodyVisible)
        #expect(truth[1].faceVisible && truth[1].bodyVisible)
        let frame = scene.capture(at: 0, aim: SceneAim(x: 0, y: 0))
        #expect(frame.detections.allSatisfy { $0.personID == 2 })
        #expect(frame.detections.count == 2)
        // Side by side, both are seen.
        let beside = ScenePerson(id: 2, path: [SceneWaypoint(t: 0, x: 1.2, z: 2)])
        let both = SceneSimulator(scenario: scenario([far, beside])).truth(at: 0, aim: SceneAim(x: 0, y: 0))
        #expect(both.allSatisfy { $0.faceVisible && $0.bodyVisible })
    }

    @Test func aPerfectCameraScoresZeroError() {
        let person = ScenePerson(id: 1, path: [SceneWaypoint(t: 0, x: -1, z: 3), SceneWaypoint(t: 2, x: 1, z: 3)])
        let scene = SceneSimulator(scenario: scenario([person]))
        var samples: [SceneSample] = []
        for i in 0...200 {
            let t = Double(i) * 0.01
            // Iterate to the aim that frames the subject (the desired aim depends weakly on the aim).
            var aim = SceneAim(x: 0, y: 0)
            for _ in 0..<4 { aim = scene.desiredAim(at: t, aim: aim, faceLine: 0.35)! }
            samples.append(SceneSample(time: t, camera: aim, desired: scene.desiredAim(at: t, aim: aim, faceLine: 0.35),
                                       inFrame: true, inRegion: true, trackedID: 1, trackedPerson: 1, intended: [1]))
        }
        let m = SceneMetrics.compute(samples, marks: [0], horizontalFieldOfView: scene.horizontalFieldOfView,
                                     verticalFieldOfView: scene.verticalFieldOfView)
        #expect(m.rmsError < 1e-6 && m.p95Error < 1e-6)
        #expect(m.overshoot < 1e-6 && m.settleTime == 0)
        #expect(abs(m.pathRatio - 1) < 1e-3)
        #expect(m.primarySwitches == 0 && m.inFrame == 1)
    }

    /// A still subject for 4 s; the camera holds still but for a 0.5 s hop of 0.02 rad at 3 s.
    @Test func aCameraThatHopsOnAStillSubjectIsScoredAsMoving() {
        var samples: [SceneSample] = []
        for i in 0...400 {
            let t = Double(i) * 0.01
            let hop = min(max((t - 3) / 0.5, 0), 1) * 0.02
            samples.append(SceneSample(time: t, camera: SceneAim(x: hop, y: 0), desired: SceneAim(x: 0, y: 0), inFrame: true, inRegion: true))
        }
        let m = SceneMetrics.compute(samples, marks: [], horizontalFieldOfView: 1, verticalFieldOfView: 1)
        // Judged from 1 s on: 3 s, of which the hop is 0.5 s.
        #expect(abs(m.stillTime - 3) < 0.02)
        #expect(abs(m.stillMotion - 0.5 / 3) < 0.01, "moving \(m.stillMotion)")
        // About its mean over the stretch the aim wanders: 0 for 2 s, a ramp, 0.02 for 0.5 s.
        #expect(m.stillJitter > 0.005 && m.stillJitter < 0.01, "jitter \(m.stillJitter)")
    }

    @Test func aPoseDetectorsBodyCarriesTheHeadsKeypointsWhenTheFaceIsMissed() throws {
        let person = ScenePerson(id: 1, path: [SceneWaypoint(t: 0, x: 0.3, z: 3)])
        var withPose = scenario([person])
        withPose.detector.faceMissRate = 1
        withPose.detector.keypoints = true
        var scene = SceneSimulator(scenario: withPose)
        let aim = SceneAim(x: 0, y: 0)
        let face = try #require(scene.truth(at: 0, aim: aim)[0].faceRect)
        let detections = scene.capture(at: 0, aim: aim).detections
        let body = try #require(detections.first)
        #expect(detections.count == 1 && body.kind == .body, "the face detector missed the face")
        let nose = try #require(body.keypoints["nose"])
        #expect(abs(nose.x - face.centerX) < 1e-9 && abs(nose.y - face.centerY) < 1e-9)
        #expect(Set(body.keypoints.keys) == ["nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder"])
        var plain = SceneSimulator(scenario: scenario([person]))
        let plainDetections = plain.capture(at: 0, aim: aim).detections
        #expect(!plainDetections.isEmpty && plainDetections.allSatisfy { $0.keypoints.isEmpty })
    }

    /// A cat (an object) on the floor: no face, one detection, an object, from the floor to its top;
    /// the aim that frames it puts its box's centre on the image's centre (Framer's rule for
    /// subjects without a face), and in frame means the whole box in the picture.
    @Test func anObjectIsOneBoxWithoutAFaceFramedByItsCentre() throws {
        var cat = ScenePerson(id: 1, path: [SceneWaypoint(t: 0, x: 0.4, z: 2)])
        cat.kind = .object
        cat.height = 0.3
        var scene = SceneSimulator(scenario: scenario([cat]))
        var aim = SceneAim(x: 0, y: 0)
        for _ in 0..<6 { aim = try #require(scene.desiredAim(at: 0, aim: aim, faceLine: 0.35)) }
        let truth = scene.truth(at: 0, aim: aim)[0]
        #expect(truth.faceRect == nil && !truth.faceVisible)
        let framed = try #require(truth.bodyRect)
        #expect(abs(framed.centerX - 0.5) < 1e-4 && abs(framed.centerY - 0.5) < 1e-4, "\(framed)")
        // From the floor (1.2 m below the camera, 2.04 m away: 30° down) to its top, 0.3 m up.
        let below = { (height: Double) in atan((SceneCamera().height - height) / (0.4 * 0.4 + 2 * 2).squareRoot()) }
        #expect(abs(aim.y - (below(0) + below(0.3)) / 2) < 0.01, "aimed \(aim.y) rad down")
        #expect(scene.capture(at: 0, aim: aim).detections.map(\.kind) == [.object])
        let sample = scene.sample(at: 0, aim: aim, faceLine: 0.35, trackedID: nil, trackedPerson: nil)
        #expect(sample.inFrame)
        let away = scene.sample(at: 0, aim: SceneAim(x: aim.x + 0.6, y: aim.y), faceLine: 0.35, trackedID: nil, trackedPerson: nil)
        #expect(!away.inFrame, "turned 0.6 rad away, the cat is out of the picture")
    }
}
