/// Multi-subject tracker: pairs faces with bodies, predicts every track with its Kalman filter,
/// associates in gated optimal passes (high-confidence detections with confirmed and lost tracks,
/// low-confidence ones with confirmed tracks, then tentative tracks), and runs each track's
/// lifecycle. Pure: the caller passes observations and their capture time; identifiers come from
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

        var frame = FrameAssociation(subjects: subjects, trackCount: tracks.count)
        associate(&frame, lifecycles: [.confirmed, .lost], candidates: high,
                  minimumOverlap: settings.minimumOverlap, allowReacquisition: true, time: time)
        associate(&frame, lifecycles: [.confirmed], candidates: low,
                  minimumOverlap: settings.lowConfidenceMinimumOverlap, allowReacquisition: false, time: time)
        associate(&frame, lifecycles: [.tentative], candidates: high,
                  minimumOverlap: settings.minimumOverlap, allowReacquisition: false, time: time)
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
        // Tentative tracks die on their first miss; lost ones when their re-acquisition window ends.
        let maximumLostDuration = settings.maximumLostDuration
        tracks.removeAll { track in
            track.lastSeen != time && (track.lifecycle == .tentative || time - track.lastSeen > maximumLostDuration)
        }
        for index in high where !matchedSubject[index] && subjects[index].confidence >= settings.newTrackConfidence {
            createdCount += 1
            let id = SubjectIdentifier.random(number: createdCount, using: &generator)
            var track = Track(id: id, observation: subjects[index], time: time, settings: settings.kalman)
            // Everything present when the session starts is confirmed at once: there is no history
            // to confirm it against, and waiting would only hide real subjects for a few frames.
            if isFirstFrame || settings.confirmationHits <= 1 { track.lifecycle = .confirmed }
            tracks.append(track)
        }
    }

    /// One gated optimal association pass between the unmatched tracks in `lifecycles` and the
    /// unmatched subjects among `candidates`; matched tracks are updated at once.
    private mutating func associate(_ frame: inout FrameAssociation, lifecycles: [TrackLifecycle], candidates: [Int],
                                    minimumOverlap: Double, allowReacquisition: Bool, time: Double) {
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
                let overlap = tracked.intersectionOverUnion(measured.box)
                if overlap >= minimumOverlap {
                    costs[row * subjectIndices.count + column] = 1 - overlap
                } else if allowReacquisition, isLost {
                    let filter = comparesBodies ? tracks[trackIndex].body!.filter : tracks[trackIndex].face!.filter
                    let distance = filter.mahalanobisSquared(to: measured.box, confidence: measured.confidence)
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
}

extension MultiSubjectTracker {
    /// A tracker whose identifiers are drawn from SplitMix64 seeded with `seed`.
    public init(settings: TrackerSettings = .init(), seed: UInt64) {
        self.init(settings: settings, generator: SplitMix64(seed: seed))
    }
}

/// What one frame's association passes share: the paired subjects, their comparable parts, and
/// which tracks and subjects are already matched.
private struct FrameAssociation {
    let subjects: [SubjectObservation]
    /// Per subject: its body (or object) and its face.
    let parts: [ComparableParts]
    var matchedTrack: [Bool]
    var matchedSubject: [Bool]

    init(subjects: [SubjectObservation], trackCount: Int) {
        self.subjects = subjects
        parts = subjects.map { ComparableParts(body: $0.body ?? $0.object, face: $0.face) }
        matchedTrack = [Bool](repeating: false, count: trackCount)
        matchedSubject = [Bool](repeating: false, count: subjects.count)
    }
}

/// The parts of a subject observation a track can be compared by.
private struct ComparableParts {
    let body: Observation?
    let face: Observation?
}
