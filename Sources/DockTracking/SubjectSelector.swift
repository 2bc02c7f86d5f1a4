#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum TrackingError: Error, Sendable, Hashable {
    /// Select-at-point found no subject under the point.
    case noSubjectFound
}

/// How much each cue adds to a subject's saliency; every cue is scaled to 0…1 first.
public struct SaliencyWeights: Sendable, Hashable {
    /// Apparent size: a bigger box is a nearer person.
    public var size = 0.30
    /// Closeness to the middle of the current view: what the camera already shows is what the user framed.
    public var centrality = 0.20
    /// Movement, relative to the subject's size.
    public var motion = 0.10
    /// Looking at the camera (its confidence, or from face yaw, or the body's facing from keypoints).
    public var attention = 0.15
    /// Speaking confidence: an active speaker should win over a bigger silent listener.
    public var speaking = 0.45

    public init() {}
}

public struct SelectionSettings: Sendable, Hashable {
    public var weights = SaliencyWeights()
    /// A challenger must out-score the current primary by this much…
    public var switchMargin = 0.1
    /// …for this long (seconds) before it takes over: no flip-flop between near-equal subjects.
    public var switchDelay = 0.6
    /// In automatic selection, subjects scoring at least this fraction of the primary's score are
    /// framed with it (the WWDC24 "two people talking in front, ignore the one behind")…
    public var groupScoreRatio = 0.75
    /// …once they have for this long (seconds), unless framed already, the framing is new (its first
    /// this long), or they may be a framed subject the tracker lost under a new track: a listener's
    /// "mm-hm" in a pause of the speaker's, or the first moments of a new speaker's turn, would
    /// otherwise widen the shot for a moment, a move there and back (or on, to the new speaker).
    public var groupJoinDelay = 1.0
    /// Speed (subject heights per second) at which the motion cue saturates.
    public var saturatingSpeed = 1.0
    /// A selected subject whose track ended is looked for this long among new tracks (a person
    /// who walked out and came back, a re-identification the tracker could not make), then the
    /// selection is released (automatic again), s.
    public var reidentificationWindow = 12.0
    /// A new track re-identifies the selected subject when its height is within this factor of the
    /// subject's last.
    public var reidentificationSizeRatio = 1.6
    /// A selected subject unseen for longer than this (neither measured nor known hidden behind a
    /// nearer person) is not framed while another selected subject is seen, s. Its box is by then a
    /// prediction coasting on its last rate, and the person is often still in view under a second
    /// track (the tracker lost them and their detections started a new one): framed, the coasting
    /// track would steer the camera after a phantom for as long as the tracker keeps it.
    public var lostFramingDelay = 0.3
    /// A subject out of the view moving slower than this when last seen (subject heights per
    /// second) was left there by the camera's turn, not walking out of it: where it is predicted is
    /// where it is.
    public var leftBehindSpeed = 0.25

    public init() {}
}

/// A subject's place in the saliency order; rank 1 is the most important.
public struct RankedSubject: Sendable, Hashable {
    public let id: SubjectIdentifier
    public let rank: Int
    public let score: Double
}

public struct Selection: Sendable, Hashable {
    /// Every confirmed or briefly lost subject, by rank.
    public let ranked: [RankedSubject]
    /// The subjects to frame, most important first: the client's choice if it made one, else the
    /// primary and those nearly as salient (`SelectionSettings.groupJoinDelay`), but for those gone
    /// from the view; of those, the ones lost for longer than `SelectionSettings.lostFramingDelay`
    /// only when none is seen (then those about to join, if seen).
    public let selected: [SubjectIdentifier]
    /// The primary took the role, out of the view, from one gone from it, and was still there when
    /// the camera, following that one, turned away from them: the camera turns back to them (for a
    /// subject hidden or gone it holds), until they are seen again or predicted back in the view.
    public var primaryLeftBehind = false

    public var primary: SubjectIdentifier? { selected.first }
}

/// Where a subject is, for automatic selection: the role goes to the best subject in the view,
/// else to one the camera left behind, and passes from one gone from the view.
private enum Whereabouts: Int, Comparable {
    /// Seen lately, or predicted inside the view (a person the detector misses there).
    case inView
    /// Unseen for over `lostFramingDelay`, predicted outside the view, still when last seen, and
    /// last seen touching the edge of the image they are now beyond: the camera turned away (the
    /// body's or object's box, or the face's for a track of a face alone).
    case leftBehind
    /// Unseen for over `lostFramingDelay` and predicted outside the view otherwise: walked out of it,
    /// or vanished inside it (the detector lost them, they left through a door) before the camera
    /// turned away — a lost policy's return, a phantom's coasting — and not to be turned back to.
    case gone

    static func < (a: Whereabouts, b: Whereabouts) -> Bool { a.rawValue < b.rawValue }
}

/// Intelligent subject selection: saliency ranking with hysteresis, plus the client's overrides
/// (select by ids, select at point).
public struct SubjectSelector: Sendable {
    public var settings: SelectionSettings
    /// The client's selection; empty means automatic.
    public private(set) var requestedIDs: [SubjectIdentifier] = []
    private var primary: SubjectIdentifier?
    private var challenger: (id: SubjectIdentifier, since: Double)?
    /// A subject the camera left behind that took the role from one gone from the view, until it
    /// is seen again or predicted back in the view: the camera turns back to it. (A primary the
    /// camera itself turned away from — the lost policy's return to a preset — is not chased back;
    /// nor is a subject the policy's turn left behind: `leftBehindFollowing`.)
    private var turningBackTo: SubjectIdentifier?
    /// The last seen box of each selected subject, and selected subjects whose tracks ended.
    private var lastKnown: [SubjectIdentifier: (box: Box, category: SubjectCategory, seen: Double)] = [:]
    private var missing: [SubjectIdentifier: (box: Box, category: SubjectCategory, seen: Double)] = [:]
    /// Tracks not seen since this time are not selected (after the stand was turned elsewhere).
    private var ignoreUnseenBefore = -Double.infinity
    /// In automatic selection: the subjects framed in the last update, since when each has scored
    /// within `groupScoreRatio` of the primary, and until when the framing is new: a framing starts
    /// where nothing was framed (the first subjects, a fresh start, the framed subjects' tracks
    /// ended), and for its first `groupJoinDelay` those within the ratio join at once (people
    /// established a few frames apart are one group from the start).
    private var framed: Set<SubjectIdentifier> = []
    private var withinGroupRatioSince: [SubjectIdentifier: Double] = [:]
    private var framingNewUntil = -Double.infinity

    public init(settings: SelectionSettings = .init()) {
        self.settings = settings
    }

    /// Track exactly these subjects; an empty list returns to automatic selection. An empty list
    /// in automatic selection (defaults applied again, a lease released) leaves the group as it is.
    public mutating func select(ids: [SubjectIdentifier]) {
        if !ids.isEmpty || !requestedIDs.isEmpty { resetGroup() }
        requestedIDs = ids
        lastKnown = [:]
        missing = [:]
    }

    /// The stand was turned elsewhere (a turn request, a client's manual move): selection starts
    /// afresh from what the camera sees from `time` on. Subjects left behind are not chased back.
    public mutating func startAfresh(at time: Double) {
        select(ids: [])
        primary = nil
        challenger = nil
        turningBackTo = nil
        resetGroup()
        ignoreUnseenBefore = time
    }

    private mutating func resetGroup() {
        framed = []
        withinGroupRatioSince = [:]
    }

    /// Selects the subject under a point of the measurement space (for a normalized image point use
    /// `CameraModel.angularPoint`). A face under the point wins over a body; among several, the
    /// smallest box, being the most specific. Throws `noSubjectFound` when nothing is there.
    @discardableResult
    public mutating func selectSubject(atX x: Double, y: Double, among tracks: [Track]) throws -> SubjectIdentifier {
        var best: (id: SubjectIdentifier, isFace: Bool, area: Double)?
        for track in tracks where track.lifecycle != .tentative {
            for (box, isFace) in [(track.face?.box, true), (track.box, false)] {
                guard let box, box.contains(x: x, y: y) else { continue }
                let better = best.map { isFace != $0.isFace ? isFace : box.area < $0.area } ?? true
                if better { best = (track.id, isFace, box.area) }
            }
        }
        guard let best else { throw TrackingError.noSubjectFound }
        select(ids: [best.id])
        return best.id
    }

    /// Saliency 0…1 of a track seen in `field` (the camera's current view in measurement space).
    public func score(_ track: Track, field: Box) -> Double {
        let box = track.box
        let weights = settings.weights
        let size = min(box.height / field.height, 1)
        let offsetX = (box.centerX - field.centerX) / (field.width / 2)
        let offsetY = (box.centerY - field.centerY) / (field.height / 2)
        let centrality = 1 - min((offsetX * offsetX + offsetY * offsetY).squareRoot() / 2.0.squareRoot(), 1)
        let motion = min(Self.speed(of: track) / settings.saturatingSpeed, 1)
        // Unknown attention is neutral, so a subject without a face is neither favoured nor punished.
        let attention = track.lookingAtCameraConfidence ?? track.facing ?? 0.5
        let speaking = track.speakingConfidence ?? 0
        return (weights.size * size + weights.centrality * centrality + weights.motion * motion
                + weights.attention * attention + weights.speaking * speaking)
            / (weights.size + weights.centrality + weights.motion + weights.attention + weights.speaking)
    }

    /// Ranks the tracks' confirmed and lost subjects and decides what to frame. Call once per
    /// tracker step with the same time, and again with that time to apply a new selection to the
    /// same frame (`TrackingPipeline.reselect`).
    public mutating func update(tracks: [Track], field: Box, time: Double) -> Selection {
        if !requestedIDs.isEmpty { followRequested(tracks, time: time) }
        var scored: [(id: SubjectIdentifier, score: Double)] = []
        scored.reserveCapacity(tracks.count)
        // Subjects: tracks seen often enough to be real (or chosen by the client), not left behind
        // by a turn.
        for track in tracks where track.lifecycle != .tentative && track.lastSeen >= ignoreUnseenBefore
            && (track.isEstablished || requestedIDs.contains(track.id)) {
            scored.append((track.id, score(track, field: field)))
        }
        // Highest score first; ties by age (older identifier first) so the order is deterministic.
        scored.sort { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
        // In automatic selection a subject out of the view neither keeps nor takes the role while
        // a subject in it is there, and one gone from it neither while one the camera left
        // behind is (`Whereabouts`).
        var places: [SubjectIdentifier: Whereabouts] = [:]
        if requestedIDs.isEmpty {
            for track in tracks { places[track.id] = whereabouts(track, field: field, time: time) }
        }
        func place(_ id: SubjectIdentifier) -> Whereabouts { places[id] ?? .inView }
        guard let best = scored.min(by: { place($0.id) < place($1.id) }) else {
            primary = nil
            challenger = nil
            turningBackTo = nil
            resetGroup()
            return Selection(ranked: [], selected: [])
        }
        // Measured or known hidden within `lostFramingDelay`: not a prediction coasting on.
        func isSeen(_ id: SubjectIdentifier) -> Bool { tracks.first { $0.id == id }.map { !isLost($0, time: time) } ?? false }
        if let current = primary, let currentScore = scored.first(where: { $0.id == current })?.score {
            if place(current) != .inView, place(best.id) < place(current) {
                // The hysteresis holds a person against a near-equal challenger; a prediction out of
                // the view is no longer one: the role passes now. It comes back only through the
                // hysteresis, once the person is back in the view.
                primary = best.id
                challenger = nil
                if place(best.id) == .leftBehind, leftBehindFollowing(current, best.id, in: tracks) { turningBackTo = best.id }
            } else if let contender = scored.first(where: { place($0.id) == place(best.id) && isSeen($0.id) }),
                      contender.id != current, contender.score > currentScore + settings.switchMargin {
                // The challenger is the best subject seen: one unseen for over `lostFramingDelay` is
                // a prediction coasting on its last rate (often toward the middle of the view, where
                // centrality rewards it), and neither takes the role nor keeps one seen from it.
                if let challenger, challenger.id == contender.id {
                    if time - challenger.since >= settings.switchDelay {
                        primary = contender.id
                        self.challenger = nil
                    }
                } else {
                    challenger = (contender.id, time)
                }
            } else {
                challenger = nil
            }
        } else {
            // No primary, or its track ended: the best takes the role, and the camera is not turned
            // back for it (where the one it followed went is no longer known).
            primary = best.id
            challenger = nil
        }
        // The held primary is rank 1 even while a challenger briefly out-scores it.
        if let index = scored.firstIndex(where: { $0.id == primary }), index > 0 {
            scored.insert(scored.remove(at: index), at: 0)
        }
        let ranked = scored.enumerated().map { RankedSubject(id: $0.element.id, rank: $0.offset + 1, score: $0.element.score) }
        var selected: [SubjectIdentifier]
        // Within the group's ratio, not framed yet (automatic selection).
        var joining: [SubjectIdentifier] = []
        if requestedIDs.isEmpty {
            // Nobody gone from the view is framed beside the primary. Within the ratio, a subject
            // framed already (the primary before a switch too) stays; another joins after
            // `groupJoinDelay`, at once while the framing is new or where it may be a framed subject
            // now lost, under a new track.
            let primaryScore = scored[0].score
            framed.formIntersection(scored.map(\.id))
            if framed.isEmpty { framingNewUntil = time + settings.groupJoinDelay }
            let lostFramed = tracks.filter { framed.contains($0.id) && isLost($0, time: time) }
            var since: [SubjectIdentifier: Double] = [:]
            selected = [scored[0].id]
            for subject in scored.dropFirst() where subject.score >= settings.groupScoreRatio * primaryScore && place(subject.id) != .gone {
                let start = withinGroupRatioSince[subject.id] ?? time
                since[subject.id] = start
                func reborn() -> Bool {
                    tracks.first { $0.id == subject.id }.map { track in lostFramed.contains { mayBe(track, ($0.box, $0.category, $0.lastSeen)) } } ?? false
                }
                if time < framingNewUntil || framed.contains(subject.id) || time - start >= settings.groupJoinDelay || reborn() {
                    selected.append(subject.id)
                } else {
                    joining.append(subject.id)
                }
            }
            withinGroupRatioSince = since
        } else {
            selected = ranked.filter { requestedIDs.contains($0.id) }.map(\.id)
        }
        // The subjects still seen are framed; those lost a while only when nothing else is (the
        // camera then holds: `TrackingPipeline.framesOnlyLostSubjects`). The primary keeps its
        // rank and is framed again once re-acquired. With none of them seen, those joining are
        // framed at once, if seen.
        var seen = selected.filter(isSeen)
        if seen.isEmpty {
            seen = joining.filter(isSeen)
            selected += seen
        }
        if requestedIDs.isEmpty { framed = Set(selected) }
        if !seen.isEmpty { selected = seen }
        if turningBackTo != primary || !seen.isEmpty || place(scored[0].id) != .leftBehind { turningBackTo = nil }
        var selection = Selection(ranked: ranked, selected: selected)
        selection.primaryLeftBehind = turningBackTo != nil
        return selection
    }

    /// Out of the view: neither measured nor known hidden for over `lostFramingDelay`, with the
    /// predicted box's centre outside `field` (more than half of the person is outside it, where the
    /// detector cannot find them). A person the detector misses while still in the view (dropouts,
    /// a passer-by not seen covering them, a pillar) keeps a predicted box inside it and their role
    /// through the usual hysteresis.
    private func whereabouts(_ track: Track, field: Box, time: Double) -> Whereabouts {
        let box = track.box
        guard isLost(track, time: time), !field.contains(x: box.centerX, y: box.centerY) else { return .inView }
        var beyond: BoxEdges = []
        if box.centerX < field.left { beyond.insert(.left) }
        if box.centerX > field.right { beyond.insert(.right) }
        if box.centerY < field.top { beyond.insert(.top) }
        if box.centerY > field.bottom { beyond.insert(.bottom) }
        return Self.speed(of: track) < settings.leftBehindSpeed && !beyond.isDisjoint(with: track.clippedEdges) ? .leftBehind : .gone
    }

    /// How fast a track moves, in its own heights per second (the motion cue, and whether a subject
    /// out of the view was still).
    private static func speed(of track: Track) -> Double {
        let velocity = track.velocity
        return (velocity.x * velocity.x + velocity.y * velocity.y).squareRoot() / max(track.box.height, .leastNonzeroMagnitude)
    }

    /// Whether `subject` was left behind while the camera followed `primary`: last seen no later
    /// than `lostFramingDelay` after `primary` was (the chase goes on that long). A subject a lost
    /// policy's turn left behind was seen at least `LostSubjectPolicy.unseen` (0.5 s) after it:
    /// the camera is not turned back against the policy to someone it never framed.
    private func leftBehindFollowing(_ primary: SubjectIdentifier, _ subject: SubjectIdentifier, in tracks: [Track]) -> Bool {
        guard let followed = tracks.first(where: { $0.id == primary }), let left = tracks.first(where: { $0.id == subject }) else { return false }
        return left.lastSeen <= followed.lastSeen + settings.lostFramingDelay
    }

    /// Whether `track` may be `lost`'s person under a new track: first seen after `lost` was last
    /// seen, of its category, about its size (`reidentificationSizeRatio`).
    private func mayBe(_ track: Track, _ lost: (box: Box, category: SubjectCategory, seen: Double)) -> Bool {
        track.firstSeen > lost.seen && track.category == lost.category
            && max(track.box.height, lost.box.height) <= settings.reidentificationSizeRatio * min(track.box.height, lost.box.height)
    }

    /// Neither measured nor known hidden for over `lostFramingDelay`.
    private func isLost(_ track: Track, time: Double) -> Bool {
        time - track.lastSeenOrHidden > settings.lostFramingDelay
    }

    /// Keeps the client's selection on its subjects: one whose track ended is looked for among new
    /// tracks (about its size, nearest where it was last seen) and followed there; one not found
    /// within `reidentificationWindow` is let go, and with none left selection is automatic again.
    private mutating func followRequested(_ tracks: [Track], time: Double) {
        for id in requestedIDs {
            if let track = tracks.first(where: { $0.id == id }) {
                if track.lastSeen == time || lastKnown[id] == nil { lastKnown[id] = (track.box, track.category, track.lastSeen) }
            } else if let known = lastKnown.removeValue(forKey: id) {
                missing[id] = known
            }
        }
        for (id, lost) in missing {
            let candidates = tracks.filter { track in track.isEstablished && !requestedIDs.contains(track.id) && mayBe(track, lost) }
            if let found = candidates.min(by: { abs($0.box.centerX - lost.box.centerX) < abs($1.box.centerX - lost.box.centerX) }) {
                missing[id] = nil
                requestedIDs = requestedIDs.map { $0 == id ? found.id : $0 }
                lastKnown[found.id] = (found.box, found.category, found.lastSeen)
                if primary == id { primary = found.id }
            } else if time - lost.seen > settings.reidentificationWindow {
                missing[id] = nil
                requestedIDs.removeAll { $0 == id }
            }
        }
    }
}
