import Testing
@testable import DockTracking

@Suite struct SubjectSelectorTests {
    typealias Person = Fixture.Person

    @Test func speakerRanksFirst() {
        for speakerOnLeft in [true, false] {
            let left = Person(x: -0.2, speaking: speakerOnLeft ? 0.95 : 0.05)
            let right = Person(x: 0.2, speaking: speakerOnLeft ? 0.05 : 0.95)
            let tracks = Fixture.tracker([left, right]).subjects
            var selector = SubjectSelector()
            let selection = selector.update(tracks: tracks, field: Fixture.field, time: 0)
            let speaker = Fixture.id(nearX: speakerOnLeft ? -0.2 : 0.2, in: tracks)
            #expect(selection.ranked.first?.id == speaker)
            #expect(selection.ranked.first?.rank == 1)
            #expect(selection.primary == speaker)
        }
    }

    @Test func speakerWinsOverBiggerSilentPerson() {
        let tracks = Fixture.tracker([Person(x: -0.2, height: 0.55, speaking: 0.05),
                                      Person(x: 0.2, height: 0.4, speaking: 0.95)]).subjects
        var selector = SubjectSelector()
        #expect(selector.update(tracks: tracks, field: Fixture.field, time: 0).primary == Fixture.id(nearX: 0.2, in: tracks))
    }

    @Test func lookingAwayRanksLower() {
        for (lookingYaw, awayYaw) in [(0.0, 1.3), (0.1, -1.4)] {
            let tracks = Fixture.tracker([Person(x: -0.2, yaw: awayYaw), Person(x: 0.2, yaw: lookingYaw)]).subjects
            var selector = SubjectSelector()
            let ranked = selector.update(tracks: tracks, field: Fixture.field, time: 0).ranked
            #expect(ranked.map(\.id) == [Fixture.id(nearX: 0.2, in: tracks), Fixture.id(nearX: -0.2, in: tracks)])
        }
        let tracks = Fixture.tracker([Person(x: -0.2, looking: 0.1), Person(x: 0.2, looking: 0.9)]).subjects
        var selector = SubjectSelector()
        #expect(selector.update(tracks: tracks, field: Fixture.field, time: 0).ranked.last?.id == Fixture.id(nearX: -0.2, in: tracks))
    }

    @Test func nearEqualSubjectsDoNotFlipFlop() {
        var tracker = MultiSubjectTracker(seed: 5)
        var selector = SubjectSelector()
        var primaries: Set<SubjectIdentifier> = []
        var leaderChanges = 0
        var previousLeader: SubjectIdentifier?
        for frame in 0..<90 {
            // Speaking confidence alternates every 5 frames: the raw leader keeps changing.
            let leftLeads = (frame / 5) % 2 == 0
            let people = [Person(x: -0.2, speaking: leftLeads ? 0.55 : 0.45), Person(x: 0.2, speaking: leftLeads ? 0.45 : 0.55)]
            let time = Double(frame) * Fixture.frameInterval
            tracker.update(observations: people.flatMap(\.observations), time: time)
            let selection = selector.update(tracks: tracker.subjects, field: Fixture.field, time: time)
            if let primary = selection.primary { primaries.insert(primary) }
            let leader = tracker.subjects.max { selector.score($0, field: Fixture.field) < selector.score($1, field: Fixture.field) }?.id
            if previousLeader != nil, leader != previousLeader { leaderChanges += 1 }
            previousLeader = leader
        }
        #expect(leaderChanges > 5, "the scenario must make the raw leader alternate")
        #expect(primaries.count == 1)
    }

    @Test func clearlyBetterChallengerTakesOverAfterTheDelay() {
        var tracker = MultiSubjectTracker(seed: 6)
        var selector = SubjectSelector()
        var switchTime: Double?
        var firstPrimary: SubjectIdentifier?
        for frame in 0..<60 {
            let time = Double(frame) * Fixture.frameInterval
            let rightSpeaks = time >= 0.5
            let people = [Person(x: -0.2, speaking: 0.3), Person(x: 0.2, speaking: rightSpeaks ? 0.95 : 0.1)]
            tracker.update(observations: people.flatMap(\.observations), time: time)
            let primary = selector.update(tracks: tracker.subjects, field: Fixture.field, time: time).primary
            if firstPrimary == nil { firstPrimary = primary }
            if switchTime == nil, primary != firstPrimary { switchTime = time }
        }
        let delay = (switchTime ?? .infinity) - 0.5
        #expect(delay >= SelectionSettings().switchDelay - 1e-9)
        #expect(delay < SelectionSettings().switchDelay + 0.5)
    }

    /// The conversation-backchannel scenario's listener: the speaker (left) pauses for 0.8 s and the
    /// listener (right) says "mm-hm" for 0.6 s of it. Their scores come within the group's ratio for
    /// a moment: framed at once, the camera would widen to the two and come back. An empty selection
    /// in automatic selection (the defaults applied again) does not start the group afresh.
    @Test func aListenersMmHmInTheSpeakersPauseDoesNotWidenTheShot() {
        var tracker = MultiSubjectTracker(seed: 7)
        var selector = SubjectSelector()
        var speaker: SubjectIdentifier?
        var framedWithTheSpeaker: [Double] = []
        var withinRatio = 0.0
        for frame in 0..<Int(4 / Fixture.frameInterval) {
            let time = Double(frame) * Fixture.frameInterval
            let pause = time >= 2 && time < 2.8, mmHm = time >= 2.1 && time < 2.7
            let people = [Person(x: -0.2, speaking: pause ? 0.1 : 0.9), Person(x: 0.2, speaking: mmHm ? 0.9 : 0.1)]
            tracker.update(observations: people.flatMap(\.observations), time: time)
            // The stand's defaults applied again mid-answer (a lease released): automatic selection
            // goes on as it was.
            let reset = frame == Int(2.3 / Fixture.frameInterval)
            if reset { selector.select(ids: []) }
            let selection = selector.update(tracks: tracker.subjects, field: Fixture.field, time: time)
            if reset {
                let scores = selection.ranked.map(\.score)
                #expect(scores.count == 2 && scores[1] >= selector.settings.groupScoreRatio * scores[0], "the listener within the ratio as the defaults come")
            }
            if time > 1 { speaker = speaker ?? selection.primary }
            guard let speaker else { continue }
            #expect(selection.primary == speaker, "at \(time) s the role left the speaker")
            if selection.selected.count > 1 { framedWithTheSpeaker.append(time) }
            let scores = selection.ranked.map(\.score)
            if scores.count == 2, scores[1] >= selector.settings.groupScoreRatio * scores[0] { withinRatio += Fixture.frameInterval }
        }
        #expect(speaker == Fixture.id(nearX: -0.2, in: tracker.subjects))
        #expect(withinRatio > 0.2, "the listener must come within the ratio: \(withinRatio) s")
        #expect(framedWithTheSpeaker.isEmpty, "the listener framed with the speaker at \(framedWithTheSpeaker) s")
    }

    /// Two alike in front on the first frame: framed together at once (nothing was framed before to
    /// keep still); one who comes within the ratio later joins after `groupJoinDelay`, and stays.
    @Test func aGroupFormsAtOnceOnTheFirstFrameAndLaterAfterTheJoinDelay() {
        var tracker = MultiSubjectTracker(seed: 9)
        var selector = SubjectSelector()
        for frame in 0..<Int(1.5 / Fixture.frameInterval) {
            let time = Double(frame) * Fixture.frameInterval
            tracker.update(observations: [Person(x: -0.2), Person(x: 0.2)].flatMap(\.observations), time: time)
            let selection = selector.update(tracks: tracker.subjects, field: Fixture.field, time: time)
            if !selection.ranked.isEmpty { #expect(selection.selected.count == 2, "at \(time) s: \(selection.selected.count) framed") }
        }

        // The same two, the right one seen three frames after the left one: one group too.
        tracker = MultiSubjectTracker(seed: 9)
        selector = SubjectSelector()
        for frame in 0..<Int(1.5 / Fixture.frameInterval) {
            let time = Double(frame) * Fixture.frameInterval
            tracker.update(observations: ([Person(x: -0.2)] + (frame >= 3 ? [Person(x: 0.2)] : [])).flatMap(\.observations), time: time)
            let selection = selector.update(tracks: tracker.subjects, field: Fixture.field, time: time)
            if selection.ranked.count == 2 { #expect(selection.selected.count == 2, "at \(time) s: \(selection.selected.count) framed") }
        }

        tracker = MultiSubjectTracker(seed: 9)
        selector = SubjectSelector()
        var joined: Double?, cameWithin: Double?
        for frame in 0..<Int(4 / Fixture.frameInterval) {
            let time = Double(frame) * Fixture.frameInterval
            // The right one turns to the camera at 1 s: as salient as the left one from then on.
            let people = [Person(x: -0.2, looking: 0.9), Person(x: 0.2, looking: time >= 1 ? 0.9 : 0)]
            tracker.update(observations: people.flatMap(\.observations), time: time)
            let selection = selector.update(tracks: tracker.subjects, field: Fixture.field, time: time)
            let scores = selection.ranked.map(\.score)
            if time > 0.5, cameWithin == nil, scores.count == 2, scores[1] >= selector.settings.groupScoreRatio * scores[0] { cameWithin = time }
            if time > 0.5, joined == nil, selection.selected.count == 2 { joined = time }
            if let joined, time > joined { #expect(selection.selected.count == 2, "at \(time) s the group came apart") }
        }
        let within = try? #require(cameWithin, "the right one comes within the ratio")
        let delay = (joined ?? .infinity) - (within ?? 0)
        #expect(abs(delay - selector.settings.groupJoinDelay) < 1.5 * Fixture.frameInterval, "joined \(delay) s after coming within the ratio")
    }

    /// Two framed together; the tracker loses the left one (walking, then stopped where the detector
    /// misses them for 0.3 s) and finds them again under a new track. That track is the person
    /// framed before: it joins at once, where waiting `groupJoinDelay` would narrow the shot to the
    /// right one for a second and widen it again. And the old track, coasting on toward the middle
    /// (out-scoring both: centrality and motion), never takes the role from the right one.
    @Test func aFramedPersonFoundAgainUnderANewTrackIsFramedAtOnce() throws {
        var tracker = MultiSubjectTracker(seed: 22)
        var selector = SubjectSelector()
        var narrowed: [Double] = []
        var reborn: SubjectIdentifier?, lostTrack: SubjectIdentifier?
        for frame in 0..<Int(3.3 / Fixture.frameInterval) {
            let time = Double(frame) * Fixture.frameInterval
            let left = Person(x: -0.6 + 0.3 * min(time, 1))
            let missed = time >= 1 && time < 1.3
            tracker.update(observations: (missed ? [] : left.observations) + Person(x: 0.3).observations, time: time)
            let selection = selector.update(tracks: tracker.subjects, field: Fixture.field, time: time)
            if time < 1 { #expect(selection.ranked.isEmpty || selection.selected.count == 2, "at \(time) s the two are not framed together") }
            if time < 1 { lostTrack = tracker.subjects.first { $0.box.centerX < 0 }?.id }
            if time >= 1.3, let lostTrack { #expect(selection.primary != lostTrack, "at \(time) s the coasting track has the role") }
            reborn = reborn ?? tracker.subjects.first { $0.firstSeen >= 1.3 && $0.box.centerX < 0 }?.id
            if let reborn, selection.ranked.contains(where: { $0.id == reborn }), !selection.selected.contains(reborn) { narrowed.append(time) }
        }
        try #require(reborn != nil, "the scenario makes a new track of the left person")
        #expect(narrowed.isEmpty, "the left person's new track left out at \(narrowed) s")
    }

    /// The speaker, framed alone, leaves (their track ends once the tracker gives up on it): the two
    /// alike who stay are the new group, framed together from that frame on, not one of them first.
    @Test func aGroupFormsAtOnceWhenTheFramedSubjectsTracksHaveEnded() throws {
        var tracker = MultiSubjectTracker(seed: 12)
        var selector = SubjectSelector()
        var speaker: SubjectIdentifier?
        var afterTheEnd: [Int] = []
        for frame in 0..<Int(6 / Fixture.frameInterval) {
            let time = Double(frame) * Fixture.frameInterval
            let people = (time < 1 ? [Person(x: 0, speaking: 0.95)] : []) + [Person(x: -0.3), Person(x: 0.3)]
            tracker.update(observations: people.flatMap(\.observations), time: time)
            let selection = selector.update(tracks: tracker.subjects, field: Fixture.field, time: time)
            if time > 0.5 && time < 1 { speaker = speaker ?? selection.primary; #expect(selection.selected == [speaker]) }
            if let speaker, !tracker.subjects.contains(where: { $0.id == speaker }) { afterTheEnd.append(selection.selected.count) }
        }
        try #require(!afterTheEnd.isEmpty, "the speaker's track ends")
        #expect(afterTheEnd.allSatisfy { $0 == 2 }, "framed after the speaker's track ended: \(afterTheEnd)")
    }

    /// A walker who speaks vanishes (the detector loses them) and their track coasts on toward the
    /// middle, out-scoring everyone; a new speaker, seen, out-scores the primary by the margin: the
    /// new speaker takes the role after the usual delay, not once the coasting track is dropped.
    @Test func aCoastingTrackRankedFirstDoesNotKeepASeenChallengerFromTheRole() throws {
        var tracker = MultiSubjectTracker(seed: 31)
        var selector = SubjectSelector()
        var outranked = false
        var took: Double?
        var speakerTrack: SubjectIdentifier?
        for frame in 0..<Int(3 / Fixture.frameInterval) {
            let time = Double(frame) * Fixture.frameInterval
            var people = [Person(x: 0.45, height: 0.3, speaking: 0.1)]
            if time >= 0.5 && time < 1 { people.append(Person(x: -0.5 + 0.4 * (time - 0.5), height: 0.45, speaking: 0.9)) }
            if time >= 1 { people.append(Person(x: 0.15, height: 0.45, speaking: 0.9)) }
            tracker.update(observations: people.flatMap(\.observations), time: time)
            let selection = selector.update(tracks: tracker.subjects, field: Fixture.field, time: time)
            speakerTrack = speakerTrack ?? tracker.subjects.first { $0.firstSeen >= 1 }?.id
            guard let speakerTrack, selection.ranked.contains(where: { $0.id == speakerTrack }) else { continue }
            let speakerScore = selection.ranked.first { $0.id == speakerTrack }!.score
            if selection.ranked.contains(where: { $0.id != selection.primary && $0.score > speakerScore }) { outranked = true }
            if took == nil, selection.primary == speakerTrack { took = time }
        }
        try #require(outranked, "the coasting track must rank first while the new speaker is seen")
        let established = try #require(tracker.subjects.first { $0.id == speakerTrack }).firstSeen + 0.25
        let delay = (took ?? .infinity) - established
        #expect(delay < selector.settings.switchDelay + 0.2, "the new speaker took the role \(delay) s after being established")
    }

    @Test func selectByIdsAndBackToAutomatic() {
        let tracks = Fixture.tracker([Person(x: -0.2, speaking: 0.9), Person(x: 0.05), Person(x: 0.25)]).subjects
        var selector = SubjectSelector()
        let quiet = Fixture.id(nearX: 0.25, in: tracks)
        selector.select(ids: [quiet])
        #expect(selector.update(tracks: tracks, field: Fixture.field, time: 0).selected == [quiet])
        selector.select(ids: [])
        #expect(selector.update(tracks: tracks, field: Fixture.field, time: 0).primary == Fixture.id(nearX: -0.2, in: tracks))
    }

    @Test func selectAtPointAndNoSubjectFound() throws {
        let people = [Person(x: -0.2), Person(x: 0.2)]
        let tracks = Fixture.tracker(people).subjects
        var selector = SubjectSelector()
        let face = people[1].observations[1].box
        let chosen = try selector.selectSubject(atX: face.centerX, y: face.centerY, among: tracks)
        #expect(chosen == Fixture.id(nearX: 0.2, in: tracks))
        #expect(selector.update(tracks: tracks, field: Fixture.field, time: 0).selected == [chosen])
        #expect(throws: TrackingError.noSubjectFound) {
            try selector.selectSubject(atX: 0, y: -0.3, among: tracks)
        }
    }

    @Test func pipelineSelectsAtNormalizedPoint() throws {
        var pipeline = TrackingPipeline(tracker: MultiSubjectTracker(seed: 8), camera: Fixture.camera)
        let person = Person(x: 0.2)
        for frame in 0..<3 {
            pipeline.step(observations: person.observations, time: Double(frame) * Fixture.frameInterval, aim: Fixture.aim)
        }
        let rect = Fixture.camera.normalizedRect(of: person.observations[0].box, aim: Fixture.aim)
        let id = try pipeline.selectSubject(atNormalizedX: rect.x + rect.width / 2, y: rect.y + rect.height / 2, aim: Fixture.aim)
        #expect(pipeline.tracker.subjects.first?.id == id)
        #expect(throws: TrackingError.noSubjectFound) {
            try pipeline.selectSubject(atNormalizedX: 0.1, y: 0.5, aim: Fixture.aim)
        }
    }
}

@Suite struct PipelineTests {
    @Test func clientStatesCarryRanksFacesAndAttributes() {
        var pipeline = TrackingPipeline(tracker: MultiSubjectTracker(seed: 30), camera: Fixture.camera)
        let people = [Fixture.Person(x: -0.2, speaking: 0.1, looking: 0.4), Fixture.Person(x: 0.2, speaking: 0.95, looking: 0.9)]
        var step: TrackingStep?
        for frame in 0..<5 {
            step = pipeline.step(observations: people.flatMap(\.observations), time: Double(frame) * Fixture.frameInterval,
                                 aim: Fixture.aim)
        }
        let states = pipeline.subjectStates(of: step!, aim: Fixture.aim)
        #expect(states.map(\.saliencyRank) == [1, 2])
        #expect(states[0].speakingConfidence == 0.95)
        #expect(states[0].lookingAtCameraConfidence == 0.9)
        let faceRect = states[0].faceRect
        #expect(faceRect != nil && faceRect!.x > 0.5, "the speaker is right of center")
        #expect(step!.framing.framed.first == states[0].id)
    }
}
