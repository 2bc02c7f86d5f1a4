import DockCore
import DockDrivers
import DockProtocol
import DockTracking

/// Who sent a command: the API connection's number and, when known, its process id (named in
/// "busy" errors so a user can find the program holding the stand).
public struct ClientRef: Sendable, Hashable {
    public var id: Int
    public var pid: Int32?
    public init(id: Int, pid: Int32? = nil) { self.id = id; self.pid = pid }
}

/// A client's request to one stand, already parsed and range-checked by the API layer.
public enum EngineCommand: Sendable {
    /// System tracking on or off (DockKit's `setSystemTrackingEnabled`); leased.
    case setTracking(Bool)
    case velocity([Axis: Double])
    /// `tolerance`: how close it must come to rest (nil: the controller's own; a preset's recall asks closer).
    case orient([Axis: Double], relative: Bool, duration: Double?, tolerance: Double? = nil)
    case play(Animation)
    case limits([Axis: LimitRequest])
    case cancel(MotionID)
    /// Everything stops, and stays stopped until the issuer or the lease holder says otherwise.
    case stop
    /// Ends a stop: from its issuer or the lease holder.
    case resume
    /// One camera frame's detections.
    case observe(ObservedFrame)
    /// Each given part changes (nil: unchanged): the framing mode, the shot (with a zoom axis).
    case framing(FramingMode?, shot: ShotSize? = nil)
    case regionOfInterest(NormalizedRect)
    case select(ids: [String])
    case selectAt(x: Double, y: Double)
    case camera(CameraModel)
    /// The client gives its lease back: what it changed reverts.
    case releaseLease
    /// What the stand does once its subject is gone (until the lease ends: then the configuration's).
    case lostPolicy(LostSubjectPolicy)
    /// A sweep or a tour, until it ends, `endPan`, a client's motion or a stop.
    case pan(Pan)
    case endPan
    /// Store a preset in the camera or remove one from it (drivers whose `cameraPresets` names a
    /// storage). Not leased: it moves nothing, as `preset.save` reads and moves nothing.
    case cameraPreset(CameraPresetRequest)

    /// Commands that change what the stand does take the client's lease (another client's only with force).
    var isLeased: Bool {
        switch self {
        case .setTracking, .velocity, .orient, .play, .limits, .cancel, .framing, .regionOfInterest, .select, .selectAt, .camera,
             .lostPolicy, .pan, .endPan: true
        case .stop, .resume, .observe, .releaseLease, .cameraPreset: false
        }
    }

    /// Commands that set the stand in motion, refused while a stop holds or the stand refuses drives.
    var startsMotion: Bool {
        switch self {
        case .velocity, .orient, .play, .pan: true
        default: false
        }
    }
}

/// One detection as a client sent it, already turned upright and to an upper-left origin.
public struct Detection: Sendable, Equatable {
    public var kind: ObservationKind
    public var rect: NormalizedRect
    public var confidence: Double
    public var faceYaw: Double?
    public var speaking: Double?
    public var lookingAtCamera: Double?
    /// Bodies only: keypoints, normalized like `rect`.
    public var pose: BodyPose?

    public init(kind: ObservationKind, rect: NormalizedRect, confidence: Double = 1, faceYaw: Double? = nil,
                speaking: Double? = nil, lookingAtCamera: Double? = nil, pose: BodyPose? = nil) {
        self.kind = kind; self.rect = rect; self.confidence = confidence; self.faceYaw = faceYaw
        self.speaking = speaking; self.lookingAtCamera = lookingAtCamera; self.pose = pose
    }
}

/// A camera frame's detections, when it was captured (engine clock; nil: assume the configured
/// latency) and the camera that took it (nil: the one set before).
public struct ObservedFrame: Sendable {
    public var detections: [Detection]
    public var captureTime: Double?
    public var camera: CameraModel?
    public init(detections: [Detection], captureTime: Double? = nil, camera: CameraModel? = nil) {
        self.detections = detections; self.captureTime = captureTime; self.camera = camera
    }
}

/// What an accepted command answers.
public enum CommandResult: Sendable, Equatable {
    case ok
    case tracking(enabled: Bool)
    case motion(MotionID)
    case observed(subjects: Int, inFrame: Bool)
    case selected([String])
    /// `confirmed`: the stand acknowledged the STOP (false: it did not within the bound, or the
    /// link is down — then it stops on its own heartbeat timeout).
    case stopped(confirmed: Bool)
    /// Where the camera stored the preset, or the one it removed.
    case cameraPreset(CameraPresetSlot)
}

/// Why a command was refused; the API turns each into its DockKit-like JSON-RPC error.
public enum EngineError: Error, Sendable, Equatable, CustomStringConvertible {
    case notConnected(stand: String?)
    case notSupported(String)
    case invalidParameter(String)
    case frameRateTooHigh
    case frameRateTooLow
    case noSubjectFound
    /// Another client holds the lease.
    case busy(holder: ClientRef, stand: String)
    case motionFailed(String)
    /// A stop holds the stand: by whom.
    case stopped(by: ClientRef?, stand: String)
    /// The camera did not store or remove a preset: its error, or no answer.
    case cameraRefused(String)

    public var description: String {
        switch self {
        case .notConnected(let stand): stand.map { "stand \($0) is not connected" } ?? "no stand is connected"
        case .notSupported(let detail): "not supported by device: \(detail)"
        case .invalidParameter(let detail): "invalid parameter: \(detail)"
        case .frameRateTooHigh: "frame rate too high"
        case .frameRateTooLow: "frame rate too low"
        case .noSubjectFound: "no subject found"
        case .busy(let holder, let stand):
            "busy: stand \(stand) is controlled by \(holder.pid.map { "process \($0)" } ?? "another client"); pass \"force\": true to take over"
        case .motionFailed(let detail): "motion failed: \(detail)"
        case .cameraRefused(let detail): "the camera refused: \(detail)"
        case .stopped(let by, let stand):
            "motion failed: stand \(stand) was stopped by \(by.map { $0.pid.map { "process \($0)" } ?? "client \($0.id)" } ?? "the daemon"); "
                + "motion.resume (by that client or the lease holder) lets it move again"
        }
    }

    init(motion error: MotionError) {
        switch error {
        case .notSupported: self = .notSupported(error.description)
        case .invalidParameter, .outOfRange: self = .invalidParameter(error.description)
        case .frameRateTooHigh: self = .frameRateTooHigh
        case .noFeedback: self = .notConnected(stand: nil)
        case .linkTooSlow, .wrongDirection: self = .motionFailed(error.description)
        }
    }
}
