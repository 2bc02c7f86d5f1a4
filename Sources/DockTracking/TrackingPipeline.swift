/// One subject as reported to clients, like DockKit's tracking state entries.
public struct TrackedSubjectState: Sendable, Hashable {
    public let id: SubjectIdentifier
    public let category: SubjectCategory
    public let lifecycle: TrackLifecycle
    public let saliencyRank: Int
    /// Where the subject (body or object box) and its face are in the image, normalized, upper-left origin.
    public let rect: NormalizedRect
    public let faceRect: NormalizedRect?
    public let speakingConfidence: Double?
    public let lookingAtCameraConfidence: Double?
    /// 0…1, how squarely it faces the camera (`Track.facing`); nil when nothing said.
    public let facing: Double?
    /// Capture time of the last frame that measured it; older than the step's time while it
    /// coasts (hidden or missed), when `rect` is a prediction.
    public let lastSeen: Double
}

/// The outcome of one pipeline step.
public struct TrackingStep: Sendable {
    public let time: Double
    public let selection: Selection
    public let framing: FramingResult
}

/// dockd's intelligent-tracking pipeline for one stand: tracker (in the stand's angular frame) →
/// subject selection → framing. The caller converts each detection with `camera.angularBox(of:aim:)`
/// using the motor angles at the frame's capture time, then calls `step` with that time and aim.
public struct TrackingPipeline: Sendable {
    public var tracker: MultiSubjectTracker
    public var selector: SubjectSelector
    public var framer: Framer
    public var camera: CameraModel

    public init(tracker: MultiSubjectTracker, selector: SubjectSelector = .init(),
                framer: Framer = .init(), camera: CameraModel) {
        self.tracker = tracker
        self.selector = selector
        self.framer = framer
        self.camera = camera
    }

    @discardableResult
    public mutating func step(observations: [Observation], time: Double, aim: Aim) -> TrackingStep {
        tracker.update(observations: KeypointHead.addingHeads(to: observations), time: time)
        return select(time: time, aim: aim)
    }

    /// Selection and framing again on the tracks as the frame of `time` left them, with no new
    /// detections: a client's selection applies to the frame it was made on (a tap on the
    /// preview), not only from the next one.
    public mutating func reselect(_ step: TrackingStep, aim: Aim) -> TrackingStep {
        select(time: step.time, aim: aim)
    }

    private mutating func select(time: Double, aim: Aim) -> TrackingStep {
        // The selector and framer skip tentative tracks themselves; passing all tracks saves a copy.
        let field = camera.angularBox(of: .fullFrame, aim: aim)
        let selection = selector.update(tracks: tracker.tracks, field: field, time: time)
        let framing = framer.frame(selected: selection.selected, tracks: tracker.tracks, camera: camera, aim: aim)
        return TrackingStep(time: time, selection: selection, framing: framing)
    }

    /// Whether the step frames subjects and every one of them is lost (hidden or gone): the camera
    /// should then hold where it pointed, not chase their coasting predictions.
    public func framesOnlyLostSubjects(_ step: TrackingStep) -> Bool {
        var any = false
        for id in step.framing.framed {
            guard let track = tracker.tracks.first(where: { $0.id == id }) else { continue }
            if track.lifecycle != .lost { return false }
            any = true
        }
        return any
    }

    /// The subjects as a client sees them with the camera at `aim`, in rank order — DockKit's
    /// tracking state. Separate from `step` because clients want it at about 10 Hz, not per frame.
    public func subjectStates(of step: TrackingStep, aim: Aim) -> [TrackedSubjectState] {
        var states: [TrackedSubjectState] = []
        states.reserveCapacity(step.selection.ranked.count)
        for ranked in step.selection.ranked {
            guard let track = tracker.tracks.first(where: { $0.id == ranked.id }) else { continue }
            states.append(TrackedSubjectState(
                id: track.id, category: track.category, lifecycle: track.lifecycle, saliencyRank: ranked.rank,
                rect: camera.normalizedRect(of: track.box, aim: aim),
                faceRect: track.face.map { camera.normalizedRect(of: $0.box, aim: aim) },
                speakingConfidence: track.speakingConfidence,
                lookingAtCameraConfidence: track.lookingAtCameraConfidence,
                facing: track.facing,
                lastSeen: track.lastSeen))
        }
        return states
    }

    /// Select-at-point with a normalized image point (upper-left origin) seen with the camera at `aim`.
    @discardableResult
    public mutating func selectSubject(atNormalizedX x: Double, y: Double, aim: Aim) throws -> SubjectIdentifier {
        let point = camera.angularPoint(normalizedX: x, normalizedY: y, aim: aim)
        return try selector.selectSubject(atX: point.x, y: point.y, among: tracker.subjects)
    }
}
