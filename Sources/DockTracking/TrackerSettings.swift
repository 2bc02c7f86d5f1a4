/// Tunables of `MultiSubjectTracker`. Times are seconds; sizes are relative, so the defaults hold in
/// both angular and pixel measurement spaces.
public struct TrackerSettings: Sendable, Hashable {
    /// Detections at or above this confidence take part in the first association pass.
    public var highConfidence: Double = 0.5
    /// Detections between this and `highConfidence` may only continue already-confirmed tracks
    /// (ByteTrack's second pass): occluded people often come out of the detector with low scores.
    public var lowConfidence: Double = 0.1
    /// An unmatched detection starts a track only at or above this confidence.
    public var newTrackConfidence: Double = 0.6
    /// Smallest overlap (IoU) between a prediction and a detection in the first pass.
    public var minimumOverlap: Double = 0.3
    /// Smallest overlap in the low-confidence pass; stricter, since those boxes are less reliable.
    public var lowConfidenceMinimumOverlap: Double = 0.5
    /// Smallest overlap in the last pass, between a confirmed track no other pass matched and a
    /// detection no track took (after tentative tracks took theirs): a subject that moved further
    /// in one frame than `minimumOverlap` allows.
    public var continuationMinimumOverlap: Double = 0.1
    /// Squared Mahalanobis distance (4 degrees of freedom) within which a lost track may be
    /// re-acquired even without overlap: its uncertainty has grown while it coasted.
    public var reacquisitionGate: Double = 9.49
    /// Consecutive sightings that confirm a tentative track.
    public var confirmationHits: Int = 3
    /// How long a lost track may be re-acquired with its identity; time spent hidden behind a
    /// nearer subject does not count (see `maximumOccludedDuration`).
    public var maximumLostDuration: Double = 1.5
    /// How long a lost track that stays hidden behind a nearer subject may be re-acquired: a person
    /// standing behind someone is still there, but not forever.
    public var maximumOccludedDuration: Double = 6.0
    /// A lost track is occluded when a taller (so nearer) confirmed track's box covers at least this
    /// fraction of its predicted box.
    public var occlusionCoverage: Double = 0.5
    /// A lost track is re-acquired only by a detection whose height is within this factor of the
    /// height it was last measured at: a person does not halve or double in size while hidden, and
    /// a nearer person (or a small false detection) passing its prediction is not it.
    public var reacquisitionSizeRatio: Double = 1.5
    /// A track is established — worth selecting and framing automatically — once it was measured
    /// in at least `establishedHits` frames in a row, over at least `establishedAge` seconds: a false
    /// detection lasting a few frames never is.
    public var establishedHits: Int = 5
    public var establishedAge: Double = 0.25
    /// A lost track that never got established is dropped after this long, s (not kept for
    /// re-acquisition like a real subject).
    public var unestablishedMemory: Double = 0.3
    /// How long a person's face (or body) may go unseen, while the other part is seen, before it is
    /// dropped from the track; a face once measured on its body is not: it follows the body
    /// (`FaceOnBody`).
    public var faceMemory: Double = 1.0
    /// Time constant of the speaking / looking / yaw smoothing.
    public var attributeTimeConstant: Double = 0.3
    public var kalman = KalmanSettings()
    public var pairing = PairingSettings()

    public init() {}
}

extension TrackerSettings {
    /// What dockd tracks with, and what `dock-mot` and the benchmarks run: a subject hidden for
    /// 2 s keeps its identity.
    public static let shipped: TrackerSettings = {
        var t = TrackerSettings()
        t.maximumLostDuration = 3.0
        return t
    }()
}
