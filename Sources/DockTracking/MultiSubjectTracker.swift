/// Multi-subject tracker: pairs faces with bodies, predicts every track with its Kalman filter,
/// associates in gated optimal passes (high-confidence detections with confirmed and lost tracks,
/// low-confidence ones with confirmed tracks, then tentative tracks), and runs each track's
/// lifecycle. A lost track covered by a taller (nearer) confirmed track is occluded: it is kept
/// while hidden, and only a detection of its own size touching the occluder can re-acquire it, so
/// neither the person in front nor a stray detection elsewhere takes over its identity.
/// Pure: the caller passes observations and their capture time; identifiers come from
/// the injected seeded generator, so a run repeats exactly from its seed. (The generator is a
/// concrete type, not a generic parameter, so calls from other modules need no unspecialized
/// generic dispatch on the per-frame path.)
public struct MultiSubjectTracker: Sendable {
    public let settings: TrackerSettings
    /// Every live track (tentative, confirmed and lost), oldest first.
    public private(set) var tracks: [Track] = []
    private var generator: SplitMix64
    private var createdCount = 0
    private var lastTime: Double?
    /// Smoothed time between updates, used to replay gaps when a lost track is re-found.
    private var stepInterval: Double = 0

    public init(settings: TrackerSettings = .init(), generator: SplitMix64) {
        self.settings = settings
        self.generator = generator
    }

    /// Confirmed and lost tracks: the subjects a client is told about.
    public var subjects: [Track] { tracks.filter { $0.lifecycle != .tentative } }

    /// Drops every track (the camera turned around) but keeps the identifier generator going, so
    /// no later subject gets an identifier an earlier one had.
    public mutating func forgetAll() {
        tracks.removeAll()
        lastTime = nil
    }

    /// Confirmed tracks observed in the latest frame (what a MOTChallenge result lists).
    public var observedSubjects: [Track] {
        tracks.filter { $0.lifecycle == .confirmed && $0.lastSeen == lastTime }
    }

    /// Feeds one frame's observations captured at `time` (seconds, non-decreasing).
    public mutating func update(observations: [Observation], time: Double) {
        let isFirstFrame = lastTime == nil
        let dt = lastTime.map { max(time - $0, 0) } ?? 0
        if dt > 0 { stepInterval = stepInterval == 0 ? dt : stepInterval + (dt - stepInterval) * 0.1 }
        lastTime = time
        for index in tracks.indices { tracks[index].predict(dt: dt) }

        let subjects = PersonPairing.pair(observations, settings: settings.pairing)
        var high: [Int] = [], low: [Int] = []
        high.reserveCapacity(subjects.count)
        low.reserveCapacity(subjects.count)
        for (index, subject) in subjects.enumerated() {
            if subject.confidence >= settings.highConfidence { high.append(index) }
            else if subject.confidence >= settings.lowConfidence { low.append(index) }
        }

        var frame = FrameAssociation(subjects: subjects, occluders: tracks.map(occluder(of:)))
        associate(&frame, lifecycles: [.confirmed, .lost], candidates: high,
                  minimumOverlap: settings.minimumOverlap, allowReacquisition: true, time: time)
        associate(&frame, lifecycles: [.confirmed], candidates: low,
                  minimumOverlap: settings.lowConfidenceMinimumOverlap, allowReacquisition: false, time: time)
        associate(&frame, lifecycles: [.tentative], candidates: high,
                  minimumOverlap: settings.minimumOverlap, allowReacquisition: false, time: time)
        // A person who sped up between two frames (a start, a run, a step toward the camera) can
        // land beside their prediction: a confirmed track missed so far continues with a detection
        // nobody took that still overlaps it, rather than coasting on while the same person starts
        // a new track beside it (and the role stays with a prediction drifting after them). Only
        // about its size (a nearer person stepping in front of it is not it), and not where a lost
        // track is predicted: that person, back but outside re-acquisition's gate, is likelier
        // than a neighbour's jump.
        let unclaimed = high.filter { index in
            guard let box = (frame.parts[index].body ?? frame.parts[index].face)?.box else { return true }
            return !tracks.contains { $0.lifecycle == .lost && $0.box.intersectionOverUnion(box) >= settings.continuationMinimumOverlap }
        }
        associate(&frame, lifecycles: [.confirmed], candidates: unclaimed,
                  minimumOverlap: settings.continuationMinimumOverlap, allowReacquisition: false, checksSize: true, time: time)
        let matchedTrack = frame.matchedTrack, matchedSubject = frame.matchedSubject

        for index in tracks.indices {
            if matchedTrack[index] {
                if tracks[index].lifecycle == .lost || tracks[index].consecutiveHits >= settings.confirmationHits {
                    tracks[index].lifecycle = .confirmed
                }
            } else if tracks[index].lifecycle == .confirmed {
                tracks[index].lifecycle = .lost
                tracks[index].consecutiveHits = 0
            }
        }
        for index in tracks.indices where !matchedTrack[index] && frame.occluders[index] != nil {
            tracks[index].lastSeenOrHidden = time
        }
        // Hits in a row: a false detection's few frames plus a later coincidence over its coasting
        // box (a random false positive) are not a subject.
        for index in tracks.indices where !tracks[index].isEstablished && tracks[index].lifecycle == .confirmed {
            tracks[index].isEstablished = tracks[index].consecutiveHits >= settings.establishedHits
                && tracks[index].lastSeen - tracks[index].firstSeen >= settings.establishedAge
        }
        // Tentative tracks die on their first miss; lost ones when their re-acquisition window
        // ends, or soon when they never got established.
        let maximumLostDuration = settings.maximumLostDuration, maximumOccludedDuration = settings.maximumOccludedDuration
        let unestablishedMemory = settings.unestablishedMemory
        tracks.removeAll { track in
            track.lastSeen != time && (track.lifecycle == .tentative || time - track.lastSeenOrHidden > maximumLostDuration
                                       || time - track.lastSeen > maximumOccludedDuration
                                       || (!track.isEstablished && time - track.lastSeen > unestablishedMemory))
        }
        for index in high where !matchedSubject[index] && subjects[index].confidence >= settings.newTrackConfidence {
            createdCount += 1
            let id = SubjectIdentifier.random(number: createdCount, using: &generator)
            var track = Track(id: id, observation: subjects[index], time: time, settings: settings.kalman)
            // Everything present when the session starts is confirmed and established at once:
            // there is no history to judge it against, and waiting would only hide real subjects.
            if isFirstFrame || settings.confirmationHits <= 1 { track.lifecycle = .confirmed }
            if isFirstFrame { track.isEstablished = true }
            tracks.append(track)
        }
    }

    /// One gated optimal association pass between the unmatched tracks in `lifecycles` and the
    /// unmatched subjects among `candidates`; matched tracks are updated at once. Lost tracks, and
    /// every track with `checksSize`, take only a detection about the size they were last measured
    /// at (`isReacquisitionCandidate`).
    private mutating func associate(_ frame: inout FrameAssociation, lifecycles: [TrackLifecycle], candidates: [Int],
                                    minimumOverlap: Double, allowReacquisition: Bool, checksSize: Bool = false, time: Double) {
        let trackIndices = tracks.indices.filter { !frame.matchedTrack[$0] && lifecycles.contains(tracks[$0].lifecycle) }
        let subjectIndices = candidates.filter { !frame.matchedSubject[$0] }
        guard !trackIndices.isEmpty, !subjectIndices.isEmpty else { return }
        let overlapLimit = 1 - minimumOverlap
        // Overlap matches cost 1 − IoU; distance-only re-acquisitions cost more than any
        // overlap match, so overlap always wins a tie-break; anything else is inadmissible.
        let unmatchedCost = overlapLimit + 0.1
        var costs = [Double](repeating: unmatchedCost, count: trackIndices.count * subjectIndices.count)
        for (row, trackIndex) in trackIndices.enumerated() {
            // Read the few fields needed rather than copying whole tracks per pair.
            let category = tracks[trackIndex].category, isLost = tracks[trackIndex].lifecycle == .lost
            let occluder = frame.occluders[trackIndex]
            let trackedBody = tracks[trackIndex].body?.box, trackedFace = tracks[trackIndex].face?.box
            for (column, subjectIndex) in subjectIndices.enumerated() {
                guard category == frame.subjects[subjectIndex].category else { continue }
                // Compare bodies (or objects) when both have one, else faces.
                let comparesBodies: Bool
                let tracked: Box, measured: Observation
                if let trackedBody, let part = frame.parts[subjectIndex].body {
                    (comparesBodies, tracked, measured) = (true, trackedBody, part)
                } else if let trackedFace, let face = frame.parts[subjectIndex].face {
                    (comparesBodies, tracked, measured) = (false, trackedFace, face)
                } else {
                    continue
                }
                // A box cut off by the image's border is compared as reaching the expected edge there.
                let measuredBox = measured.box(reaching: tracked)
                if isLost || checksSize {
                    let previous = comparesBodies ? tracks[trackIndex].body!.lastMeasurement : tracks[trackIndex].face!.lastMeasurement
                    guard isReacquisitionCandidate(measuredBox, lastMeasured: previous, occluder: occluder) else { continue }
                }
                let overlap = tracked.intersectionOverUnion(measuredBox)
                if overlap >= minimumOverlap {
                    costs[row * subjectIndices.count + column] = 1 - overlap
                } else if allowReacquisition, isLost {
                    let filter = comparesBodies ? tracks[trackIndex].body!.filter : tracks[trackIndex].face!.filter
                    let distance = filter.mahalanobisSquared(to: measuredBox, confidence: measured.confidence)
                    if distance <= settings.reacquisitionGate {
                        costs[row * subjectIndices.count + column] = overlapLimit + 0.09 * distance / settings.reacquisitionGate
                    }
                }
            }
        }
        for pair in Assignment.match(costs: costs, rows: trackIndices.count, columns: subjectIndices.count, unmatchedCost: unmatchedCost) {
            let trackIndex = trackIndices[pair.row], subjectIndex = subjectIndices[pair.column]
            frame.matchedTrack[trackIndex] = true
            frame.matchedSubject[subjectIndex] = true
            tracks[trackIndex].update(with: frame.subjects[subjectIndex], time: time, settings: settings, stepInterval: stepInterval)
        }
    }

    /// The predicted box of the nearer subject hiding a lost track: a taller confirmed track
    /// covering at least `occlusionCoverage` of the lost track's predicted box. nil when the track
    /// is not lost or nothing hides it.
    private func occluder(of hidden: Track) -> Box? {
        guard hidden.lifecycle == .lost else { return nil }
        let box = hidden.box
        guard box.area > 0 else { return nil }
        var best: (box: Box, coverage: Double)?
        for track in tracks where track.lifecycle == .confirmed {
            let cover = track.box
            guard cover.height > box.height else { continue }
            let coverage = box.intersectionArea(cover) / box.area
            if coverage >= settings.occlusionCoverage, coverage > best?.coverage ?? 0 { best = (cover, coverage) }
        }
        return best?.box
    }

    /// Whether a detection may re-acquire a lost track at all: about the size the track was last
    /// measured at and, while the track is hidden behind `occluder`, touching the occluder — a
    /// subject comes out from behind the person hiding it; one seen anywhere else would have been
    /// seen on the way there.
    private func isReacquisitionCandidate(_ box: Box, lastMeasured: Box, occluder: Box?) -> Bool {
        let ratio = box.height / max(lastMeasured.height, .leastNonzeroMagnitude)
        guard ratio <= settings.reacquisitionSizeRatio, ratio >= 1 / settings.reacquisitionSizeRatio else { return false }
        if let occluder { return box.intersectionArea(occluder) > 0 }
        return true
    }
}

extension MultiSubjectTracker {
    /// A tracker whose identifiers are drawn from SplitMix64 seeded with `seed`.
    public init(settings: TrackerSettings = .init(), seed: UInt64) {
        self.init(settings: settings, generator: SplitMix64(seed: seed))
    }
}

/// What one frame's association passes share: the paired subjects, their comparable parts, and
/// which tracks are hidden behind which, and which tracks and subjects are already matched.
private struct FrameAssociation {
    let subjects: [SubjectObservation]
    /// Per subject: its body (or object) and its face.
    let parts: [ComparableParts]
    /// Per track: the predicted box of the nearer subject hiding it, if it is lost behind one.
    let occluders: [Box?]
    var matchedTrack: [Bool]
    var matchedSubject: [Bool]

    init(subjects: [SubjectObservation], occluders: [Box?]) {
        self.subjects = subjects
        parts = subjects.map { ComparableParts(body: $0.body ?? $0.object, face: $0.face) }
        self.occluders = occluders
        matchedTrack = [Bool](repeating: false, count: occluders.count)
        matchedSubject = [Bool](repeating: false, count: subjects.count)
    }
}

/// The parts of a subject observation a track can be compared by.
private struct ComparableParts {
    let body: Observation?
    let face: Observation?
}
