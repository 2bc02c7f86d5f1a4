import Testing
@testable import DockTracking

/// One person, two tracks: the tracker loses a walking subject (the detector misses while the
/// person stops, or the aim taken for a frame is off), its track coasts on at the walking rate, and
/// the detections that come back start a second track. The camera must follow the person as
/// measured, not the first track's coasting prediction (walk_bench's and the v4l2 walk's run-offs).
@Suite struct SecondTrackTests {
    typealias Person = Fixture.Person
    static let frameInterval = 0.05

    /// The person walks right at 0.3 rad/s for 1 s, stops at x 0.3, the detector misses them for
    /// `missed` s, then sees them standing there for 2 s. Returns every step after the misses, with
    /// when the step's primary (the subject framed first) was last measured.
    static func walkStopAndMiss(missed: Double) -> [(step: TrackingStep, primarySeen: Double?)] {
        var pipeline = TrackingPipeline(tracker: MultiSubjectTracker(settings: .shipped, seed: 22), camera: Fixture.camera)
        var steps: [(step: TrackingStep, primarySeen: Double?)] = []
        for frame in 0..<Int((3 + missed) / frameInterval) {
            let time = Double(frame) * frameInterval
            let person = Person(x: 0.3 * min(time, 1))
            let seen = time < 1 || time >= 1 + missed
            let step = pipeline.step(observations: seen ? person.observations : [], time: time, aim: Fixture.aim)
            let primary = pipeline.tracker.tracks.first { $0.id == step.selection.primary }
            if time >= 1 + missed { steps.append((step, primary?.lastSeen)) }
        }
        return steps
    }

    @Test func aCoastingFirstTrackDoesNotSteerTheFramingOnceTheSecondIsEstablished() throws {
        let steps = Self.walkStopAndMiss(missed: 0.3)
        let ids = Set(steps.flatMap(\.step.selection.ranked).map(\.id))
        #expect(ids.count == 2, "the scenario makes a second track of the person (\(ids.count) subject(s))")
        let standing = Person(x: 0.3).observations[1].box.centerX
        // From the second track's selection on (established after 5 frames and 0.25 s), the framing
        // and the rate fed forward are the measured person's: the face on the centre line.
        let joined = try #require(steps.firstIndex(where: { $0.step.selection.ranked.count == 2 }), "the two tracks are ranked together")
        for (step, primarySeen) in steps[joined...] {
            #expect(primarySeen == step.time, "at \(step.time) s the framing's first subject is a prediction")
            #expect(abs(step.framing.desiredAim.x - standing) < 0.01,
                    "at \(step.time) s the framing aims at \(step.framing.desiredAim.x), the person stands at \(standing)")
        }
    }
}
