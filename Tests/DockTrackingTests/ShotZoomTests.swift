#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import DockTracking

@Suite struct ShotZoomTests {
    typealias Person = Fixture.Person
    let range = 1.0...10.0

    private func target(_ zoom: inout ShotZoom, _ people: [Person], magnification: Double, lost: Bool = false) -> Double? {
        let tracks = Fixture.tracker(people).subjects
        return zoom.target(subjects: tracks, lost: lost, camera: Fixture.camera.zoomed(by: magnification), aim: Fixture.aim,
                           magnification: magnification, range: range)
    }

    private func heightInFrame(of box: (Track) -> Box, _ person: Person, magnification: Double) -> Double {
        let track = Fixture.tracker([person]).subjects[0]
        return Fixture.camera.zoomed(by: magnification).normalizedRect(of: box(track), aim: Fixture.aim).height
    }

    /// Tracks of a person whose body grows 30 % a second (1.2 m/s at 4 m), or stands.
    private func walkingTracks(growing: Bool = true) -> [Track] {
        var tracker = MultiSubjectTracker(seed: 1)
        for frame in 0..<30 {
            let height = growing ? 0.2 * (1 + 0.3 * Double(frame) / 30) : 0.26
            tracker.update(observations: Person(x: 0, y: 0, height: height).observations, time: Double(frame) * Fixture.frameInterval)
        }
        return tracker.subjects
    }

    private func goal(_ zoom: inout ShotZoom, _ subjects: [Track], magnification: Double) -> Double? {
        zoom.target(subjects: subjects, lost: false, camera: Fixture.camera.zoomed(by: magnification), aim: Fixture.aim,
                    magnification: magnification, range: range)
    }

    @Test func eachShotZoomsItsExtentToItsFractionOfTheFrame() throws {
        // Centered (the body for the full shot, the face for the upper-body one), so that the
        // step bound does not come into it.
        let person = Person(x: 0, y: 0, height: 0.3)
        var full = ShotZoom(shot: .fullBody)
        let fullTarget = try #require(target(&full, [person], magnification: 1))
        #expect(abs(heightInFrame(of: \.box, person, magnification: fullTarget) - ShotSettings().fullBody) < 0.01)

        let faceCentered = Person(x: 0, y: 0.4 * 0.3, height: 0.3)
        var upper = ShotZoom(shot: .upperBody)
        let upperTarget = try #require(target(&upper, [faceCentered], magnification: 1))
        #expect(abs(heightInFrame(of: { $0.face!.box }, faceCentered, magnification: upperTarget) - ShotSettings().upperBodyFace) < 0.01)
        #expect(upperTarget > fullTarget)
    }

    @Test func aDeadBandWithHysteresisKeepsTheZoomFromPumping() throws {
        let person = Person(x: 0, y: 0, height: 0.3)
        var zoom = ShotZoom(shot: .fullBody)
        let exact = try #require(target(&zoom, [person], magnification: 1))
        var settled = ShotZoom(shot: .fullBody)
        // 4 % off: inside the band that starts a zoom, so a settled zoom stays put…
        #expect(target(&settled, [person], magnification: exact / 1.04) == nil)
        // …but a zoom under way goes on until it is within 1.5 %.
        var moving = ShotZoom(shot: .fullBody)
        #expect(target(&moving, [person], magnification: exact / 1.3) != nil)
        #expect(target(&moving, [person], magnification: exact / 1.04) != nil)
        #expect(target(&moving, [person], magnification: exact / 1.01) == nil)
        #expect(target(&moving, [person], magnification: exact / 1.04) == nil, "settled again")
    }

    @Test func aZoomThatReachesItsGoalStopsInsteadOfTurningAround() throws {
        // A body box's noise carries the measure a few per cent past the goal: a zoom under way
        // ends there; only an error beyond the band that starts a zoom turns it around.
        let person = Person(x: 0, y: 0, height: 0.3)
        var zoom = ShotZoom(shot: .fullBody)
        let exact = try #require(target(&zoom, [person], magnification: 1))
        var moving = ShotZoom(shot: .fullBody)
        #expect(try #require(target(&moving, [person], magnification: exact / 1.3)) > exact / 1.3)
        #expect(target(&moving, [person], magnification: exact * 1.03) == nil, "3 % past the goal: no zooming back")
        #expect(try #require(target(&moving, [person], magnification: exact * 1.1)) < exact * 1.1, "10 % past: back out")
    }

    @Test func aGoalTheEdgeMarginSetsHasTheSameDeadBand() throws {
        // A body off the frame's center vertically: the edge margin, not the body's size, stops
        // the zoom. The measure's noise about that bound must not pump the zoom either (full_body
        // turned around up to 44 times on the walk toward and away).
        let centered = Person(x: 0, y: 0, height: 0.3), low = Person(x: 0, y: 0.06, height: 0.3)
        var fresh = ShotZoom(shot: .fullBody), freshLow = ShotZoom(shot: .fullBody)
        let sized = try #require(target(&fresh, [centered], magnification: 1))
        let bounded = try #require(target(&freshLow, [low], magnification: 1))
        try #require(bounded < sized / 1.1, "the edge margin sets the goal")
        var settled = ShotZoom(shot: .fullBody)
        #expect(target(&settled, [low], magnification: bounded * 1.02) == nil)
        #expect(target(&settled, [low], magnification: bounded / 1.02) == nil)
        #expect(target(&settled, [low], magnification: bounded * 1.02) == nil)
    }

    @Test func aSubjectWalkingAtTheCameraIsZoomedOutAheadOfItsSize() throws {
        // The body grows 30 % a second (1.2 m/s at 4 m): the goal is its size a moment ahead and
        // the rate undoes the growth, so the shot does not lag the walk (upper_body and full_body
        // were 87–91 % within ±10 % on the walk toward and away, mostly lag).
        func zoomed(_ subjects: [Track]) throws -> (target: Double, rate: Double) {
            var zoom = ShotZoom(shot: .fullBody)
            let zoomed = zoom.target(subjects: subjects, lost: false, camera: Fixture.camera.zoomed(by: 2), aim: Fixture.aim,
                                     magnification: 2, range: range)
            let target = try #require(zoomed)
            return (target, zoom.rate(toward: target, magnification: 2, maxSpeed: 10))
        }
        let walking = try zoomed(walkingTracks()), still = try zoomed(walkingTracks(growing: false))
        #expect(walking.target < still.target, "ahead of the tracked box, which lags the walk")
        let gainOnly = ShotSettings().gain * 2 * log(walking.target / 2)
        #expect(walking.rate < gainOnly - 0.2, "the growth undone on top of the gap closed")
    }

    @Test func aSettledZoomFollowsASubjectWalkingAtTheCameraAtOnce() throws {
        // 3 % off is inside the band that starts a zoom: a standing subject's noise. A walking
        // one's goal runs on at up to the lens's speed: waiting for its error to leave the band
        // left a head shot 10–12 % off for seconds (84 % within ±10 % where the lens reaches).
        let walking = walkingTracks()
        var fresh = ShotZoom(shot: .fullBody)
        let exact = try #require(goal(&fresh, walking, magnification: 2))
        var settled = ShotZoom(shot: .fullBody)
        let followed = try #require(goal(&settled, walking, magnification: exact * 1.03), "the zoom starts with the walk")
        #expect(settled.rate(toward: followed, magnification: exact * 1.03, maxSpeed: 10) < 0, "out, as the subject comes")
        let standing = walkingTracks(growing: false)
        var freshStill = ShotZoom(shot: .fullBody), settledStill = ShotZoom(shot: .fullBody)
        let stillGoal = try #require(goal(&freshStill, standing, magnification: 2))
        #expect(goal(&settledStill, standing, magnification: stillGoal * 1.03) == nil, "a standing subject: the dead band holds")
    }

    @Test func widenedForALostSubjectWithoutTheGrowthLastMeasured() {
        var tracker = MultiSubjectTracker(seed: 1)
        for frame in 0..<30 {
            tracker.update(observations: Person(x: 0, y: 0, height: 0.2 * (1 + 0.3 * Double(frame) / 30)).observations,
                           time: Double(frame) * Fixture.frameInterval)
        }
        var zoom = ShotZoom(shot: .fullBody)
        _ = zoom.target(subjects: tracker.subjects, lost: false, camera: Fixture.camera.zoomed(by: 2), aim: Fixture.aim, magnification: 2, range: range)
        let wide = zoom.target(subjects: tracker.subjects, lost: true, camera: Fixture.camera.zoomed(by: 2), aim: Fixture.aim, magnification: 2, range: range)
        #expect(zoom.rate(toward: wide, magnification: 2, maxSpeed: 100) == ShotSettings().gain * 2 * log(1.0 / 2))
    }

    @Test func oneStepNeverTakesTheSubjectOutOfTheFrame() throws {
        // Far right in the frame, a head shot would zoom so far that the face left it: the step
        // stops where the face is still `edgeMargin` inside.
        let person = Person(x: 0.38, height: 0.3)
        var zoom = ShotZoom(shot: .head)
        let bounded = try #require(target(&zoom, [person], magnification: 1))
        let track = Fixture.tracker([person]).subjects[0]
        let face = Fixture.camera.zoomed(by: bounded).normalizedRect(of: track.face!.box, aim: Fixture.aim)
        #expect(face.maxX <= 1 - ShotSettings().edgeMargin + 1e-6)
        #expect(face.height < ShotSettings().headFace, "short of the head shot until pan re-centers it")
        #expect(bounded > 1)
    }

    @Test func aLostSubjectOrAWideShotZoomsOutFully() {
        let person = Person(x: 0, height: 0.3)
        var zoom = ShotZoom(shot: .head)
        #expect(target(&zoom, [person], magnification: 4, lost: true) == range.lowerBound)
        #expect(target(&zoom, [], magnification: 4) == range.lowerBound)
        #expect(target(&zoom, [person], magnification: range.lowerBound, lost: true) == nil, "already wide")
        var wide = ShotZoom(shot: .wide)
        #expect(target(&wide, [person], magnification: 3) == range.lowerBound)
    }

    @Test func aZoomOutsideNarrowedLimitsComesBackInsideEvenWhenTheShotIsRight() throws {
        let person = Person(x: 0, y: 0, height: 0.3)
        var zoom = ShotZoom(shot: .fullBody)
        let exact = try #require(target(&zoom, [person], magnification: 1))
        var settled = ShotZoom(shot: .fullBody)
        #expect(target(&settled, [person], magnification: exact) == nil)
        let tracks = Fixture.tracker([person]).subjects
        let narrowed = settled.target(subjects: tracks, lost: false, camera: Fixture.camera.zoomed(by: exact), aim: Fixture.aim,
                                      magnification: exact, range: 1...(exact / 1.5))
        #expect(narrowed == exact / 1.5)
    }

    @Test func noShotLeavesTheZoomAlone() {
        var zoom = ShotZoom()
        #expect(target(&zoom, [Person(x: 0, height: 0.1)], magnification: 1) == nil)
        #expect(target(&zoom, [], magnification: 5, lost: true) == nil)
    }

    @Test func aBodyCutOffByTheFrameZoomsOut() throws {
        // Taller than the frame at this zoom: its box is clipped top and bottom, which would read
        // as too small; the shot widens instead.
        var zoom = ShotZoom(shot: .fullBody)
        let tall = Person(x: 0, y: 0, height: 0.3)
        var observations = tall.observations
        observations[0].clippedEdges = [.top, .bottom]
        var tracker = MultiSubjectTracker(seed: 1)
        for frame in 0..<5 { tracker.update(observations: observations, time: Double(frame) * Fixture.frameInterval) }
        let zoomed = zoom.target(subjects: tracker.subjects, lost: false, camera: Fixture.camera.zoomed(by: 3), aim: Fixture.aim,
                                 magnification: 3, range: range)
        let result = try #require(zoomed)
        #expect(result < 3)
    }

    @Test func aBodyTouchingTheFramesEdgeIsNeverZoomedInOnNorWidenedWhenItIsNotTooBig() throws {
        // Small in the frame but touching its bottom edge (the framer put it there): its true
        // height is unknown, at least what it measures; zooming in could cut it off, widening
        // would pump. Hold.
        var zoom = ShotZoom(shot: .fullBody)
        var observations = Person(x: 0, y: 0, height: 0.15).observations
        observations[0].clippedEdges = [.bottom]
        var tracker = MultiSubjectTracker(seed: 1)
        for frame in 0..<5 { tracker.update(observations: observations, time: Double(frame) * Fixture.frameInterval) }
        #expect(zoom.target(subjects: tracker.subjects, lost: false, camera: Fixture.camera, aim: Fixture.aim, magnification: 1, range: range) == nil)
    }

    @Test func aFaceTouchingTheFramesTopIsNeverZoomedInOn() throws {
        // A head shot of a small face: it would zoom in. With the face cut by the frame's top (a
        // person standing up out of the view) its size is only a lower bound: hold.
        let person = Person(x: 0, y: 0, height: 0.3)
        var free = ShotZoom(shot: .head)
        let wanted = try #require(target(&free, [person], magnification: 1))
        #expect(wanted > 1)
        var observations = person.observations
        observations[1].clippedEdges = [.top]
        var tracker = MultiSubjectTracker(seed: 1)
        for frame in 0..<5 { tracker.update(observations: observations, time: Double(frame) * Fixture.frameInterval) }
        var zoom = ShotZoom(shot: .head)
        #expect(zoom.target(subjects: tracker.subjects, lost: false, camera: Fixture.camera, aim: Fixture.aim, magnification: 1, range: range) == nil)
    }

    @Test func theRateClosesTheGapWithinTheSpeedLimit() {
        let zoom = ShotZoom(shot: .fullBody)
        #expect(zoom.rate(toward: nil, magnification: 2, maxSpeed: 1) == 0)
        #expect(zoom.rate(toward: 8, magnification: 2, maxSpeed: 1) == 1)
        #expect(zoom.rate(toward: 1, magnification: 2, maxSpeed: 5) < 0)
    }
}
