import Testing
@testable import DockTracking

/// Issue 22: an automatic primary whose person walked out of the view passes the role to a subject
/// still in it, with hysteresis: not for detector dropouts of a person still in the view, never to
/// a false detection, and back only through the usual switch delay. Virtual time, 20 frames/s.
@Suite struct LeftViewHandOverTests {
    typealias Person = Fixture.Person
    static let frameInterval = 1.0 / 20
    static let settings = SelectionSettings()

    /// The speaker the camera follows, and a quiet, smaller bystander off to the side.
    static let speaker = Person(x: 0.1, speaking: 0.9, looking: 0.9)
    static let bystander = Person(x: -0.3, height: 0.3, speaking: 0.05, looking: 0.2)

    /// Runs `seconds` of frames: `people(time)` are the detections of each frame. Returns the
    /// primary of each frame.
    static func run(seconds: Double, seed: UInt64, people: (Double) -> [Person]) -> [(time: Double, id: SubjectIdentifier?)] {
        var tracker = MultiSubjectTracker(seed: seed)
        var selector = SubjectSelector()
        var primaries: [(time: Double, id: SubjectIdentifier?)] = []
        for frame in 0..<Int((seconds / frameInterval).rounded()) {
            let time = Double(frame) * frameInterval
            tracker.update(observations: people(time).flatMap(\.observations), time: time)
            primaries.append((time, selector.update(tracks: tracker.tracks, field: Fixture.field, time: time).primary))
        }
        return primaries
    }

    static func switches(_ primaries: [(time: Double, id: SubjectIdentifier?)]) -> Int {
        zip(primaries, primaries.dropFirst()).filter { $0.id != nil && $1.id != nil && $0.id != $1.id }.count
    }

    /// The speaker walking right from x 0.1 at 0.35 rad/s from t 1 s, detected while at least three
    /// quarters of their body is in the view.
    static func walker(at time: Double) -> Person? {
        let person = speaker.walking(at: time)
        let halfWidth = person.height * 0.4 / 2
        return person.x + halfWidth / 2 < Fixture.field.right ? person : nil
    }

    @Test func aPrimaryThatWalkedOutOfTheViewPassesToTheSubjectSeen() throws {
        let primaries = Self.run(seconds: 5, seed: 41) { time in [Self.bystander] + [Self.walker(at: time)].compactMap { $0 } }
        let speakerID = try #require(primaries[0].id)
        let lastDetected = primaries.last { Self.walker(at: $0.time) != nil }!.time
        // Where the tracker's prediction (constant velocity) takes the centre out of the view.
        let centreLeaves = 1 + (Fixture.field.right - Self.speaker.x) / 0.35
        let handOver = try #require(primaries.first { $0.id != speakerID }, "the coasting speaker kept the role")
        #expect(handOver.time > lastDetected + Self.settings.lostFramingDelay - 1e-9,
                "a primary unseen for less than lostFramingDelay keeps the role")
        #expect(handOver.time <= max(lastDetected + Self.settings.lostFramingDelay, centreLeaves) + 0.15,
                "handed over at \(handOver.time) s, the centre left the view at \(centreLeaves) s")
        #expect(Self.switches(primaries) == 1, "the coasting track does not win the role back")
    }

    /// 5 s of frames with the view turned right by `turn(time)` rad, the speaker where
    /// `speaker(time)` says (nil: not detected) and the still bystander detected while
    /// `bystanderSeen(time)`; either only while three quarters of them are in the view, cut at its
    /// edge. `bystanderFaceOnly`: only the bystander's face is detected (a person too near for the
    /// body detector), while its centre is in the view. Returns the speaker's last detection and
    /// each step's time and selection.
    static func turning(_ turn: (Double) -> Double, speaker: (Double) -> Person?, bystanderSeen: (Double) -> Bool,
                        bystanderFaceOnly: Bool = false)
        -> (lastSpeaker: Double, steps: [(time: Double, selection: Selection)]) {
        var tracker = MultiSubjectTracker(settings: .shipped, seed: 45)
        var selector = SubjectSelector()
        var lastSpeaker = 0.0
        var steps: [(time: Double, selection: Selection)] = []
        for frame in 0..<100 {
            let time = Double(frame) * frameInterval
            let field = Fixture.field.offsetBy(x: turn(time))
            let inView = { (person: Person) in
                person.x - person.height * 0.1 > field.left && person.x + person.height * 0.1 < field.right
            }
            let speaking = speaker(time).flatMap { inView($0) ? $0 : nil }
            if speaking != nil { lastSpeaker = time }
            var observations = speaking?.observations(cutAt: field) ?? []
            if bystanderSeen(time) {
                if !bystanderFaceOnly, inView(bystander) {
                    observations += bystander.observations(cutAt: field)
                } else if bystanderFaceOnly, bystander.x > field.left, bystander.x < field.right {
                    observations += bystander.observations(cutAt: field).filter { $0.kind == .face }
                }
            }
            tracker.update(observations: observations, time: time)
            steps.append((time, selector.update(tracks: tracker.tracks, field: field, time: time)))
        }
        return (lastSpeaker, steps)
    }

    /// The camera turns right with the walker from 1 s to 2 s (0.35 rad) and stops; the walker
    /// walks on out of the view (last detected at 3.05 s).
    static func followingTheWalker(bystanderSeen: (Double) -> Bool) -> (lastSpeaker: Double, steps: [(time: Double, selection: Selection)]) {
        turning({ 0.35 * min(max($0 - 1, 0), 1) }, speaker: { speaker.walking(at: $0) }, bystanderSeen: bystanderSeen)
    }

    @Test func aStillSubjectTheCameraTurnedAwayFromTakesTheRoleFromOneWhoWalkedOut() throws {
        // The bystander, left out of the view at 1.5 s: once the walker is out of it too, nobody
        // is in it, and the role passes to the bystander, where the camera left them; the walker is
        // not framed with them.
        let (lastWalker, steps) = Self.followingTheWalker { _ in true }
        let speakerID = try #require(steps[0].selection.primary)
        let (time, selection) = try #require(steps.first { $0.selection.primary != speakerID }, "the walker who left kept the role")
        #expect(time > lastWalker + Self.settings.lostFramingDelay - 1e-9)
        #expect(time < lastWalker + 0.6, "handed over at \(time) s")
        #expect(selection.primaryLeftBehind)
        #expect(selection.selected.count == 1)
    }

    @Test func aStillFaceTheCameraTurnedAwayFromTakesTheRoleToo() throws {
        // The same with only the bystander's face detected, cut at the view's left edge as the
        // camera turns: a face's cut edge says where they were left as a body's does.
        let (lastWalker, steps) = Self.turning({ 0.35 * min(max($0 - 1, 0), 1) }, speaker: { Self.speaker.walking(at: $0) },
                                               bystanderSeen: { _ in true }, bystanderFaceOnly: true)
        let speakerID = try #require(steps[0].selection.primary)
        let (time, selection) = try #require(steps.first { $0.selection.primary != speakerID }, "the walker who left kept the role")
        #expect(time > lastWalker + Self.settings.lostFramingDelay - 1e-9)
        #expect(selection.primaryLeftBehind, "the face left behind was not turned back to")
    }

    @Test func aSubjectThatVanishedInTheViewIsNotTurnedBackTo() throws {
        // The bystander is last detected at 0.95 s, in the middle of the view (they left through a
        // door, or the detector lost them), before the camera turned: nothing says they are still
        // where their track coasts, so the camera holds once the walker is gone too.
        let (lastWalker, steps) = Self.followingTheWalker { $0 < 0.95 }
        let bystanderID = try #require(steps[0].selection.ranked.last?.id)
        let gone = try #require(steps.first { $0.time > lastWalker + Self.settings.lostFramingDelay + 0.2 })
        #expect(gone.selection.ranked.contains { $0.id == bystanderID }, "the bystander's track ended before the walker was gone")
        #expect(!steps.contains { $0.selection.primaryLeftBehind }, "turned back to where the bystander vanished")
    }

    @Test func aSubjectALostPolicysTurnLeftBehindIsNotTurnedBackTo() throws {
        // The speaker vanishes in the middle of the view at 1 s; from 1.6 s the camera turns right
        // (a lost policy's return to a preset, 0.7 rad in 1 s), leaving the bystander out of the view
        // at 1.85 s, then the speaker's coasting track too: the camera is not turned back to a
        // bystander it never framed, against the policy.
        let (lastSpeaker, steps) = Self.turning({ 0.7 * min(max($0 - 1.6, 0), 1) },
                                                speaker: { $0 < 1 ? Self.speaker : nil }, bystanderSeen: { _ in true })
        let speakerID = try #require(steps[0].selection.primary)
        #expect(lastSpeaker < 1)
        #expect(steps.contains { $0.time > 2.6 && $0.selection.primary != speakerID }, "the role never passed: the case is not reached")
        #expect(!steps.contains { $0.selection.primaryLeftBehind }, "turned back against the policy")
    }

    @Test func aPrimaryMissedByTheDetectorInTheViewKeepsTheRole() {
        let patterns: [(name: String, seen: (Int) -> Bool)] = [
            ("missed 0.4 s of every 0.9 s", { frame in frame % 18 < 10 }),
            ("seen one frame in eight", { frame in frame % 8 == 0 }),
        ]
        for pattern in patterns {
            let primaries = Self.run(seconds: 6, seed: 42) { time in
                let frame = Int((time / Self.frameInterval).rounded())
                // A second of both seen, then 5 s of dropouts.
                return frame < 20 || pattern.seen(frame) ? [Self.speaker, Self.bystander] : [Self.bystander]
            }
            #expect(Self.switches(primaries) == 0, "\(pattern.name)")
        }
    }

    @Test func aFalseDetectionNeverBecomesPrimaryWhileTheSubjectIsOutOfTheView() throws {
        // The speaker walks out of the view alone (last detected at 2.1 s); while their track still
        // coasts (1.5 s), something is detected in 3 frames.
        let ghost = Person(x: -0.1, height: 0.35)
        let ghostFrames = 56..<59
        let primaries = Self.run(seconds: 5, seed: 43) { time in
            let frame = Int((time / Self.frameInterval).rounded())
            return [Self.walker(at: time)].compactMap { $0 } + (ghostFrames.contains(frame) ? [ghost] : [])
        }
        let speakerID = try #require(primaries[0].id)
        #expect(primaries.allSatisfy { $0.id == nil || $0.id == speakerID }, "the 3-frame detection took the role")
    }

    @Test func theRoleComesBackOnlyThroughTheSwitchDelay() throws {
        // The speaker walks out, then comes back 2 s later, walking left into the view.
        let back = 4.5
        let primaries = Self.run(seconds: 7, seed: 44) { time in
            var people = [Self.bystander]
            if time >= back {
                var person = Self.speaker
                person.x = Fixture.field.right - 0.35 * (time - back)
                people.append(person)
            } else if let walker = Self.walker(at: time) {
                people.append(walker)
            }
            return people
        }
        let speakerID = try #require(primaries[0].id)
        let handOver = try #require(primaries.first { $0.id != speakerID })
        let bystanderID = try #require(handOver.id)
        let comeback = try #require(primaries.last { $0.id == bystanderID }.flatMap { last in primaries.first { $0.time > last.time } },
                                    "the speaker, back in the view, never took the role back")
        #expect(comeback.time >= back + Self.settings.switchDelay - 1e-9)
        #expect(Self.switches(primaries) == 2)
    }
}

private extension Fixture.Person {
    /// This person walking right at 0.35 rad/s from t 1 s.
    func walking(at time: Double) -> Self {
        var person = self
        person.x += 0.35 * max(time - 1, 0)
        return person
    }
}

private extension Fixture.Person {
    /// The detections of this person in a view `field`: a box across its edge is cut there and
    /// says so, as dockd marks a detection touching the image's border.
    func observations(cutAt field: Box) -> [Observation] {
        observations.map { observation in
            var cut = observation
            let box = observation.box
            let left = max(box.left, field.left), right = min(box.right, field.right)
            cut.box = Box(centerX: (left + right) / 2, centerY: box.centerY, width: right - left, height: box.height)
            if box.left <= field.left { cut.clippedEdges.insert(.left) }
            if box.right >= field.right { cut.clippedEdges.insert(.right) }
            return cut
        }
    }
}

private extension Box {
    func offsetBy(x: Double) -> Box { Box(centerX: centerX + x, centerY: centerY, width: width, height: height) }
}
