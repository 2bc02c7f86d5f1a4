/// Multi-subject tracker: pairs faces with bodies, predicts every track with its Kalman filter,
/// associates in gated optimal passes (high-confidence detections with confirmed and lost tracks,
/// low-confidence ones with confirmed tracks, then tentative tracks), and runs each track's
/// lifecycle. Pure: the caller passes observations and their capture time; identifiers come from
/// the injected generator, so a run repeats exactly from its seed.
public struct MultiSubjectTracker<Generator: RandomNumberGenerator & Sendable>: Sendable {
    public let settings: TrackerSettings
    /// Every live track (tentative, confirmed and lost), oldest first.
    public private(set) var tracks: [Track] = []
    private var generator: Generator
    private var createdCount = 0
    private var lastTime: Double?
    /// Smoothed time between updates, used to replay gaps when a lost track is re-found.
    private var stepInterval: Double = 0

    public init(settings: TrackerSettings = .init(), generator: Generator) {
        self.settings = settings
        self.generator = generator
    }

    /// Confirmed and lost tracks: the subjects a client is told about.
    public var subjects: [Track] { tracks.filter { $0.lifecycle != .tentative } }

    /// Feeds one frame's observations captured at `time` (seconds, non-decreasing). Returns the
    /// tracks that are confirmed and were observed in this frame.
    @discardableResult
    public mutating func update(observations: [Observation], time: Double) -> [Track] {
        let isFirstFrame = lastTime == nil
        let dt = lastTime.map { max(time - $0, 0) } ?? 0
        if dt > 0 { stepInterval = stepInterval == 0 ? dt : stepInterval + (dt - stepInterval) * 0.1 }
        lastTime = time
        for index in tracks.indices { tracks[index].predict(dt: dt) }

        let subjects = PersonPairing.pair(observations, settings: settings.pairing)
        var high: [Int] = [], low: [Int] = []
        for (index, subject) in subjects.enumerated() {
            if subject.confidence >= settings.highConfidence { high.append(index) }
            else if subject.confidence >= settings.lowConfidence { low.append(index) }
        }

        var matchedTrack = [Bool](repeating: false, count: tracks.count)
        var matchedSubject = [Bool](repeating: false, count: subjects.count)
        func associate(trackFilter: (Track) -> Bool, candidates: [Int], minimumOverlap: Double, allowReacquisition: Bool) {
            let trackIndices = tracks.indices.filter { !matchedTrack[$0] && trackFilter(tracks[$0]) }
            let subjectIndices = candidates.filter { !matchedSubject[$0] }
            guard !trackIndices.isEmpty, !subjectIndices.isEmpty else { return }
            let overlapLimit = 1 - minimumOverlap
            // Overlap matches cost 1 − IoU; distance-only re-acquisitions cost more than any
            // overlap match, so overlap always wins a tie-break; anything else is inadmissible.
            let unmatchedCost = overlapLimit + 0.1
            var costs = [Double](repeating: unmatchedCost, count: trackIndices.count * subjectIndices.count)
            for (row, trackIndex) in trackIndices.enumerated() {
                let track = tracks[trackIndex]
                for (column, subjectIndex) in subjectIndices.enumerated() {
                    guard let (tracked, measured) = comparableBoxes(track, subjects[subjectIndex]) else { continue }
                    let overlap = tracked.box.intersectionOverUnion(measured.box)
                    if overlap >= minimumOverlap {
                        costs[row * subjectIndices.count + column] = 1 - overlap
                    } else if allowReacquisition, track.lifecycle == .lost {
                        let distance = tracked.filter.mahalanobisSquared(to: measured.box, confidence: measured.confidence)
                        if distance <= settings.reacquisitionGate {
                            costs[row * subjectIndices.count + column] = overlapLimit + 0.09 * distance / settings.reacquisitionGate
                        }
                    }
                }
            }
            for pair in Assignment.match(costs: costs, rows: trackIndices.count, columns: subjectIndices.count, unmatchedCost: unmatchedCost) {
                let trackIndex = trackIndices[pair.row], subjectIndex = subjectIndices[pair.column]
                matchedTrack[trackIndex] = true
                matchedSubject[subjectIndex] = true
                tracks[trackIndex].update(with: subjects[subjectIndex], time: time, settings: settings, stepInterval: stepInterval)
            }
        }
        associate(trackFilter: { $0.lifecycle != .tentative }, candidates: high,
                  minimumOverlap: settings.minimumOverlap, allowReacquisition: true)
        associate(trackFilter: { $0.lifecycle == .confirmed }, candidates: low,
                  minimumOverlap: settings.lowConfidenceMinimumOverlap, allowReacquisition: false)
        associate(trackFilter: { $0.lifecycle == .tentative }, candidates: high,
                  minimumOverlap: settings.minimumOverlap, allowReacquisition: false)

        var survivors: [Track] = []
        survivors.reserveCapacity(tracks.count + high.count)
        for (index, var track) in tracks.enumerated() {
            if matchedTrack[index] {
                if track.lifecycle == .lost || track.consecutiveHits >= settings.confirmationHits {
                    track.lifecycle = .confirmed
                }
                survivors.append(track)
            } else if track.lifecycle == .tentative {
                continue
            } else if time - track.lastSeen <= settings.maximumLostDuration {
                track.lifecycle = .lost
                track.consecutiveHits = 0
                survivors.append(track)
            }
        }
        for index in high where !matchedSubject[index] && subjects[index].confidence >= settings.newTrackConfidence {
            createdCount += 1
            let id = SubjectIdentifier.random(number: createdCount, using: &generator)
            var track = Track(id: id, observation: subjects[index], time: time, settings: settings.kalman)
            // Everything present when the session starts is confirmed at once: there is no history
            // to confirm it against, and waiting would only hide real subjects for a few frames.
            if isFirstFrame || settings.confirmationHits <= 1 { track.lifecycle = .confirmed }
            survivors.append(track)
        }
        tracks = survivors
        return tracks.filter { $0.lifecycle == .confirmed && $0.wasObserved(at: time) }
    }

    /// The pair of boxes by which a track and an observation can be compared, if any: bodies (or
    /// objects) when both have one, else faces.
    private func comparableBoxes(_ track: Track, _ subject: SubjectObservation) -> (TrackedBox, Observation)? {
        guard track.category == subject.category else { return nil }
        if let body = track.body, let measured = subject.body ?? subject.object { return (body, measured) }
        if let face = track.face, let measured = subject.face { return (face, measured) }
        return nil
    }
}

extension MultiSubjectTracker where Generator == SplitMix64 {
    /// A tracker whose identifiers are drawn from SplitMix64 seeded with `seed`.
    public init(settings: TrackerSettings = .init(), seed: UInt64) {
        self.init(settings: settings, generator: SplitMix64(seed: seed))
    }
}
