/// dockd's JSON-RPC methods, each declared once: its params, result, errors, whether it needs the
/// stand's lease or an administrator, whether it starts motion, and the notifications it may cause.
/// dockd dispatches on it and checks params by it; dockctl's `call` builds requests from it; a test
/// checks protocol/dockd.openrpc.json against it field by field. A new method is a case here, its
/// declaration below, its handling in dockd (the compiler asks for it), its entry in the document
/// (DockAPITests fails without it) and its tests.
public enum APIMethod: String, Sendable, CaseIterable {
    case discover = "rpc.discover"
    case version = "dockd.version"
    case stats = "dockd.stats"
    case standsList = "stands.list"
    case standGet = "stand.get"
    case batteryGet = "battery.get"
    case subscribe
    case unsubscribe
    case trackingSet = "tracking.set"
    case motionVelocity = "motion.velocity"
    case motionOrient = "motion.orient"
    case motionStop = "motion.stop"
    case motionResume = "motion.resume"
    case motionCancel = "motion.cancel"
    case motionLimits = "motion.limits"
    case animationPlay = "animation.play"
    case leaseRelease = "lease.release"
    case defaultsGet = "defaults.get"
    case defaultsSet = "defaults.set"
    case standsAttach = "stands.attach"
    case standsDetach = "stands.detach"
    case trackingObserve = "tracking.observe"
    case trackingGet = "tracking.get"
    case trackingFraming = "tracking.framing"
    case trackingROI = "tracking.roi"
    case trackingSelect = "tracking.select"
    case cameraSet = "camera.set"
    case presetSave = "preset.save"
    case presetRecall = "preset.recall"
    case presetList = "preset.list"
    case presetDelete = "preset.delete"
    case trackingLostPolicy = "tracking.lost_policy"
    case sweepStart = "sweep.start"
    case sweepStop = "sweep.stop"
    case tourStart = "tour.start"
    case tourStop = "tour.stop"

    public var name: String { rawValue }

    /// The method of this name, if the API has one.
    public static func named(_ name: String) -> APIMethod? { declared[name]?.method }

    /// The method of this name and its declaration, in one look-up (dockd's per-request dispatch).
    public static func declared(_ name: String) -> (method: APIMethod, declaration: APIMethodDeclaration)? { declared[name] }

    public var declaration: APIMethodDeclaration { Self.declared[rawValue]!.declaration }

    /// Each method's declaration, made once (a call looks its method up here).
    private static let declared: [String: (method: APIMethod, declaration: APIMethodDeclaration)] =
        Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, ($0, $0.declare())) })

    private func declare() -> APIMethodDeclaration {
        typealias P = APIParam
        switch self {
        case .discover: return .init(result: "document", errors: [.internalError])
        case .version: return .init(result: "version")
        case .stats: return .init(result: "stats")
        case .standsList: return .init(result: "stands")
        case .standGet: return .init(params: [P.stand], result: "stand", errors: [.notConnected])
        case .batteryGet: return .init(params: [P.stand], result: "batteries", errors: [.notConnected])
        case .subscribe:
            return .init(params: [P.topics, P.motionRate], result: "topics", notifications: ["stand.state", "battery.state", "motion.state"])
        case .unsubscribe: return .init(params: [P.topics], result: "topics")
        case .trackingSet:
            return .init(params: [P.stand, P.enabled, P.force], result: "tracking", errors: [.notConnected, .busy, .motionFailed],
                         needsLease: true, notifications: ["tracking.changed", "lease.changed", "motion.hold"])
        case .motionVelocity:
            return .init(params: [P.stand] + P.rates + [P.force], result: "ok",
                         errors: [.notConnected, .notSupported, .invalidParameter, .busy, .motionFailed],
                         needsLease: true, startsMotion: true, notifications: ["motion.progress", "lease.changed", "motion.hold"])
        case .motionOrient:
            return .init(params: [P.stand] + P.positions + [P.relative, P.duration, P.force], result: "motion",
                         errors: [.notConnected, .notSupported, .invalidParameter, .frameRateTooHigh, .busy, .motionFailed],
                         needsLease: true, startsMotion: true, notifications: ["motion.progress", "lease.changed", "motion.hold"])
        case .motionStop:
            return .init(params: [P.stand], result: "stopped", errors: [.notConnected], notifications: ["motion.hold", "motion.progress"])
        case .motionResume:
            return .init(params: [P.stand], result: "ok", errors: [.notConnected, .busy], notifications: ["motion.hold"])
        case .motionCancel:
            return .init(params: [P.stand, P.motionID, P.force], result: "ok", errors: [.notConnected, .invalidParameter, .busy],
                         needsLease: true, notifications: ["motion.progress", "lease.changed", "motion.hold"])
        case .motionLimits:
            return .init(params: [P.stand, P.axes, P.force], result: "ok",
                         errors: [.notConnected, .notSupported, .invalidParameter, .busy, .motionFailed],
                         needsLease: true, notifications: ["lease.changed", "motion.hold"])
        case .animationPlay:
            return .init(params: [P.stand, P.animationName, P.keyframes, P.relative, P.force], result: "motion",
                         errors: [.notConnected, .notSupported, .invalidParameter, .frameRateTooHigh, .busy, .motionFailed],
                         needsLease: true, startsMotion: true, notifications: ["motion.progress", "lease.changed", "motion.hold"])
        case .leaseRelease:
            return .init(result: "ok", notifications: ["tracking.changed", "motion.progress", "motion.hold"])
        case .defaultsGet: return .init(result: "defaults")
        case .defaultsSet:
            return .init(params: [P.defaultTracking, P.defaultFraming, P.defaultROI, P.reset], result: "defaults",
                         errors: [.invalidParameter, .permissionDenied, .internalError], forAdministrators: true,
                         notifications: ["tracking.changed"])
        case .standsAttach:
            return .init(params: [P.device, P.driver], result: "attached", errors: [.invalidParameter, .permissionDenied],
                         forAdministrators: true, notifications: ["stand.connected"])
        case .standsDetach:
            return .init(params: [P.device], result: "ok", errors: [.invalidParameter, .permissionDenied],
                         forAdministrators: true, notifications: ["stand.disconnected"])
        case .trackingObserve:
            return .init(params: [P.stand, P.observations, P.timestamp, P.origin, P.orientation, P.camera], result: "observed",
                         errors: [.invalidParameter, .notConnected, .frameRateTooHigh, .frameRateTooLow, .busy])
        case .trackingGet: return .init(params: [P.stand], result: "state", errors: [.notConnected])
        case .trackingFraming:
            return .init(params: [P.stand, P.framing, P.shot, P.force], result: "ok", errors: [.notConnected, .busy],
                         needsLease: true, notifications: ["lease.changed", "motion.hold"])
        case .trackingROI:
            return .init(params: [P.stand, P.rect, P.force], result: "ok", errors: [.invalidParameter, .notConnected, .busy],
                         needsLease: true, notifications: ["lease.changed", "motion.hold"])
        case .trackingSelect:
            return .init(params: [P.stand, P.ids, P.selectX, P.selectY, P.force], result: "selected",
                         errors: [.invalidParameter, .notConnected, .noSubjectFound, .busy],
                         needsLease: true, notifications: ["lease.changed", "motion.hold"])
        case .cameraSet:
            return .init(params: [P.stand, P(P.camera.name, P.camera.kind, required: true), P.force], result: "ok", errors: [.invalidParameter, .notConnected, .busy],
                         needsLease: true, notifications: ["lease.changed", "motion.hold"])
        case .presetSave:
            return .init(params: [P.stand, P.presetName], result: "preset", errors: [.notConnected, .invalidParameter, .internalError])
        case .presetRecall:
            return .init(params: [P.stand, P.presetName, P.duration, P.force], result: "motion",
                         errors: [.notConnected, .notSupported, .invalidParameter, .frameRateTooHigh, .busy, .motionFailed],
                         needsLease: true, startsMotion: true, notifications: ["motion.progress", "lease.changed", "motion.hold"])
        case .presetList: return .init(params: [P.stand], result: "presets", errors: [.notConnected])
        case .presetDelete:
            return .init(params: [P.stand, P.presetName], result: "ok", errors: [.notConnected, .invalidParameter, .internalError])
        case .trackingLostPolicy:
            return .init(params: [P.stand, P.lostPolicy, P.lostAfter, P.lostPreset, P.searchSeconds, P.force], result: "ok",
                         errors: [.notConnected, .invalidParameter, .busy], needsLease: true, notifications: ["tracking.phase", "lease.changed", "motion.hold"])
        case .sweepStart:
            return .init(params: [P.stand, P.sweepFrom, P.sweepTo, P.sweepRate, P.repeats, P.force], result: "ok",
                         errors: [.notConnected, .notSupported, .invalidParameter, .busy, .motionFailed],
                         needsLease: true, startsMotion: true, notifications: ["tracking.phase", "lease.changed", "motion.hold"])
        case .tourStart:
            return .init(params: [P.stand, P.tourStops, P.repeats, P.force], result: "ok",
                         errors: [.notConnected, .invalidParameter, .busy, .motionFailed],
                         needsLease: true, startsMotion: true, notifications: ["tracking.phase", "lease.changed", "motion.hold"])
        case .sweepStop, .tourStop:
            return .init(params: [P.stand, P.force], result: "ok", errors: [.notConnected, .busy],
                         needsLease: true, notifications: ["tracking.phase", "lease.changed", "motion.hold"])
        }
    }
}

/// What one method is, beside its name. A class: dockd's dispatch takes it on every request, and a
/// reference is one retain rather than one per array.
public final class APIMethodDeclaration: Sendable {
    public let params: [APIParam]
    /// The name of the method's result in the document.
    public let result: String
    /// The errors it may answer besides invalid params (every method may: its params are checked).
    public let errors: [APIError]
    /// It changes what a stand does: the caller takes the stand's lease (another client's only with `force`).
    public let needsLease: Bool
    /// It sets the stand in motion (refused while a stop holds).
    public let startsMotion: Bool
    /// Only root and dockd's own user may call it.
    public let forAdministrators: Bool
    /// Notifications a call may cause (to subscribers of their topics).
    public let notifications: [String]

    init(params: [APIParam] = [], result: String, errors: [APIError] = [], needsLease: Bool = false, startsMotion: Bool = false,
         forAdministrators: Bool = false, notifications: [String] = []) {
        self.params = params
        self.result = result
        self.errors = [.invalidParams] + errors
        self.needsLease = needsLease
        self.startsMotion = startsMotion
        self.forAdministrators = forAdministrators
        self.notifications = notifications
    }

    public func param(_ name: String) -> APIParam? { params.first { $0.name == name } }
}

/// The API's errors by the name the document's components/errors gives them.
public enum APIError: String, Sendable, CaseIterable {
    case parseError = "ParseError"
    case invalidRequest = "InvalidRequest"
    case methodNotFound = "MethodNotFound"
    case invalidParams = "InvalidParams"
    case internalError = "InternalError"
    case notConnected = "NotConnected"
    case notSupported = "NotSupported"
    case invalidParameter = "InvalidParameter"
    case frameRateTooHigh = "FrameRateTooHigh"
    case frameRateTooLow = "FrameRateTooLow"
    case noSubjectFound = "NoSubjectFound"
    case permissionDenied = "PermissionDenied"
    case busy = "Busy"
    case motionFailed = "MotionFailed"
    case tooManyClients = "TooManyClients"

    public var code: Int {
        switch self {
        case .parseError: -32700
        case .invalidRequest: -32600
        case .methodNotFound: -32601
        case .invalidParams: -32602
        case .internalError: -32603
        case .notConnected: -32001
        case .notSupported: -32002
        case .invalidParameter: -32003
        case .frameRateTooHigh: -32004
        case .frameRateTooLow: -32005
        case .noSubjectFound: -32006
        case .permissionDenied: -32007
        case .busy: -32008
        case .motionFailed: -32009
        case .tooManyClients: -32010
        }
    }
}
