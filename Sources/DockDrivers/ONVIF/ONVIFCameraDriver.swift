import DockProtocol

/// An ONVIF PTZ camera (Profile S/T) as a stand: pan and tilt in the PTZ service's generic spaces
/// (−1…1, mapped linearly to the degrees the settings give), yaw = −pan (ONVIF's positive pan
/// turns right) and pitch = tilt, within the position range the camera advertises
/// (`PanTiltRange`): the stand's limits, and every position target clamped to it.
/// Orientations go as AbsoluteMove where the camera offers it (the camera closes the position
/// loop) or RelativeMove; rates as ContinuousMove with a whole-second
/// Timeout, renewed while they last, and a Stop when they end — on a camera without
/// ContinuousMove, as AbsoluteMoves or RelativeMoves to targets ahead on the rate's path
/// (`RateTargetPath`) at the rate's speed. Where it points comes from GetStatus at `pollHz`; on a
/// camera whose GetStatus gives no pan/tilt position (cheap continuous-only ones), it is
/// dead-reckoned from the moves sent, from yaw 0, pitch 0 where the camera was at connect.
///
/// Zoom, where the settings give its `maxZoom` and the camera offers a zoom space: the stand's
/// zoom axis in magnification (`ONVIFZoomScale`), sent with the pan/tilt in the same AbsoluteMove
/// (Position/Zoom) or ContinuousMove (Velocity/Zoom), or on a relative-only camera as the
/// RelativeMove's Translation/Zoom from the zoom it has to the one asked for — a new move replaces
/// the whole motion in force on ONVIF cameras, so each one carries the zoom's as well — and read
/// back from GetStatus's Position/Zoom (estimated, like the pan/tilt, while a camera's reads stand
/// still).
///
/// Pure: it speaks `ONVIFWire` with DockIO's `ONVIFLink`, which does the HTTP and adds the
/// WS-Security header. One request is in flight at a time; moves coalesce to the newest and go at
/// most once per `commandInterval`, before polls; a STOP abandons a GetStatus or move in flight.
public struct ONVIFCameraDriver: StandDriver {
    public struct Settings: Sendable, Equatable {
        /// What the generic space's −1…1 is, in degrees (ONVIF does not say).
        public var pan = GenericScale(atMinusOne: -170, atOne: 170)
        public var tilt = GenericScale(atMinusOne: -30, atOne: 90)
        /// −1 where a positive ContinuousMove velocity turns the way the position decreases (the
        /// Tapo C220's pan, per its owners' notes).
        public var panVelocitySign = 1.0
        public var tiltVelocitySign = 1.0
        /// The camera's speed at a velocity of 1, degrees/s.
        public var panSpeed = 100.0
        public var tiltSpeed = 60.0
        /// 10 and 0.1 s: at 5 and 0.2 s, tracking through the emulator's 100°/s head rang (the
        /// pose dockd steers by was up to a poll old, the rate it sent up to an interval late).
        public var pollHz = 10.0
        public var commandInterval = 0.1
        /// A ContinuousMove's Timeout, whole seconds: the camera stops by itself this long after
        /// the last command if dockd goes silent.
        public var moveTimeout = 1
        /// The media profile to steer (its token); nil: the first with a PTZ configuration.
        public var profile: String?
        public var name: String?
        /// How far the pose estimated while a ContinuousMove runs on a camera whose reads stand
        /// still may be off (`PoseEstimate.doubt`), degrees, before a brief Stop lets the
        /// camera read where it is (0: never).
        public var readBackDoubt = 1.0
        /// The magnification at the top of the zoom position space; nil: the zoom is not steered.
        public var maxZoom: Double?
        /// Seconds the zoom takes from one end to the other at a ContinuousMove zoom velocity of 1.
        public var zoomSeconds = 3.0
        public init() {}
    }

    /// The degrees at the generic space's −1 and 1, linear between; a camera whose generic
    /// values grow the other way has them reversed (velocities too).
    public struct GenericScale: Sendable, Equatable {
        public var atMinusOne: Double
        public var atOne: Double
        public init(atMinusOne: Double, atOne: Double) { self.atMinusOne = atMinusOne; self.atOne = atOne }
        /// Degrees per generic unit, signed.
        var perUnit: Double { (atOne - atMinusOne) / 2 }
        /// 1 where the generic value grows with the degrees, −1 where it runs the other way.
        var direction: Double { atOne > atMinusOne ? 1 : -1 }
        func degrees(_ g: Double) -> Double { atMinusOne + (g + 1) * perUnit }
        /// Degrees → generic (beyond −1…1 for degrees beyond the ends).
        func generic(_ degrees: Double) -> Double { (degrees - atMinusOne) / perUnit - 1 }
        /// The degrees a generic range spans, lowest first.
        func degrees(over generic: ClosedRange<Double>) -> (low: Double, high: Double) {
            let ends = (degrees(generic.lowerBound), degrees(generic.upperBound))
            return (min(ends.0, ends.1), max(ends.0, ends.1))
        }
    }

    public let name = "onvif"
    public let settings: Settings
    public private(set) var counters = DriverCounters()

    /// `position`: GetStatus after the connect's Stop, asked again until one gives a position, at
    /// most `connectReads` times.
    private enum Step { case clock, capabilities, information, profiles, options, node, connectStop, position, ready }
    /// `zoom`: the zoom's target or velocity sent with the pan/tilt's (nil: none); `speed`: the
    /// pan/tilt's Speed, fractions of the top speeds (nil: none sent, the camera's default).
    private enum Move: Equatable {
        case absolute(x: Double, y: Double, zoom: Double?, speed: MoveSpeed? = nil)
        case relative(x: Double, y: Double, zoom: Double?, speed: MoveSpeed? = nil)
        case continuous(x: Double, y: Double, zoom: Double?)
        case stop
    }
    /// `presetCount`: GetPresets after the camera refused a new preset (`refusal`: why), counting
    /// its presets for the refusal's reason.
    private enum Flight { case setup, status, move(Move), preset(CameraPresetRequest), presetCount(CameraPresetRequest, refusal: String) }

    private var step = Step.clock
    private var decoder = ONVIFWire.Decoder()
    private var clockOffset = 0.0
    private var ptzPath = "/onvif/ptz_service"
    private var mediaPath = "/onvif/media_service"
    private var identity = StandIdentity(model: "ONVIF camera", firmware: "", hardware: "", serial: "", protocolVersion: "onvif")
    private var profile = ""
    /// The profile's PTZ node (its configuration's NodeToken), and the spaces its configuration
    /// options list, read with the node's (a camera listing none there has them on its node).
    private var nodeToken: String?
    private var optionSpaces: XMLElement?
    /// The node's MaximumNumberOfPresets (nil: it gives none) and HomeSupported (shown only:
    /// GotoHomePosition goes to wherever the camera's owner set its home, which ONVIF cannot read,
    /// not to dockd's `home`; docs/HARDWARE.md, ONVIF, "Home").
    private var presetLimit: Int?
    /// Why the profile's node is not known (GetNodes refused, or no node of it listed), shown in
    /// the stand's hardware: the node is optional, the presets are then limited by the camera alone.
    private var nodeUnknown: String?
    private var homeSupported = false
    private var offers: (absolute: Bool, relative: Bool, continuous: Bool) = (false, false, false)
    /// Whether the camera lists a pan/tilt speed space: absolute and relative moves may carry a Speed.
    private var offersSpeed = false
    /// The generic positions the camera takes: its profile's PanTiltLimits, then its absolute space's ranges.
    private var positionRange = PanTiltRange()
    /// The generic translations a RelativeMove may carry: its translation space's ranges (−1…1
    /// where it lists none). Dead-reckoned, the position range is twice as wide as the camera's,
    /// so a target may be up to twice a translation away.
    private var translationRange = PanTiltRange()
    /// A position target on a relative-only camera further than one translation: the rest is sent
    /// once the camera is there by the estimate (a camera clamping a translation silently would
    /// leave the estimate wrong; one refusing it would not move).
    private var relativeGoal: (x: Double, y: Double)?
    /// Where the last step toward `relativeGoal` was sent from: a step from the same pose did not
    /// move it (the estimate holds the camera at the end of where it may go), and the goal ends.
    private var relativeStepFrom: (x: Double, y: Double)?
    private var inFlight: (what: Flight, sentAt: Double)?
    /// Requests abandoned before their answer (`ONVIFWire.abandon`): their replies, which the link
    /// still sends in order, are skipped.
    private var abandonedReplies = 0
    /// A move was abandoned for the Stop in flight: once that Stop is answered, another goes (a
    /// camera serving connections in parallel may have acted on the move after the first).
    private var stopAgain = false
    private var pending: Move?
    private var lastMove: (move: Move, time: Double)?
    private var nextPoll = 0.0
    /// When FEEDBACK is next due from the estimate alone (`estimateOnly`).
    private var nextFeedback = 0.0
    /// The last pose read (generic x, y) and when.
    private var pose: (x: Double, y: Double, time: Double)?
    private var rate: (x: Double, y: Double) = (0, 0)
    /// The last GetStatus position as read, and where the camera is by what it was told: the pose
    /// reported is the estimate while reads stand still and the camera should be moving.
    private var lastRead: (x: Double, y: Double)?
    private var estimate: PoseEstimate?
    /// Whether the last read repeated the one before while the camera should be moving: the pose
    /// reported is the estimate.
    private var onEstimate = false
    /// Whether GetStatus gives the camera's pan/tilt position. Without one the pose is the
    /// estimate alone, dead-reckoned (`PoseEstimate.travel`) from the generic values that are
    /// yaw 0, pitch 0: where the camera was at connect is dockd's forward. Decided at connect.
    private var readsPosition = true
    /// The connect's GetStatus replies without a position so far (a fault counts as one), and the
    /// last fault's reason, shown in the stand's hardware.
    private var positionlessReads = 0
    private var positionlessFault: String?
    /// A Stop asked and not yet answered with nothing asked after it. A move asked before the Stop
    /// went takes its place (`pending`): no Stop is sent, so it stays unconfirmed until a later one is;
    /// a Stop refused leaves it unconfirmed too.
    private var stopPending = false
    /// A Stop sent for a read, not asked for (the estimate's doubt grew too large): `.stopping` until
    /// its reply, `.reading` until the GetStatus after it; the motion asked for then goes again.
    private enum ReadBack { case stopping, reading }
    private var readBack: ReadBack?
    /// The zoom spaces the camera offers: its position space's range, and whether it takes a
    /// velocity and a translation.
    private var zoomOffers: (position: ClosedRange<Double>?, continuous: Bool, relative: Bool) = (nil, false, false)
    /// Where rates steered as targets (a camera without ContinuousMove) have taken each axis.
    private var ratePaths = (x: RateTargetPath(), y: RateTargetPath())
    /// The last pan/tilt rate asked for (generic), kept for a velocity that names only the zoom.
    private var panTiltRate: (x: Double, y: Double) = (0, 0)
    /// What the zoom was last asked for: a velocity (−1…1) or a target in its position space.
    private var zoomAsked: (velocity: Double, target: Double?) = (0, nil)
    /// The zoom's last position read and the estimate of it (its y unused), as for the pan/tilt.
    private var zoomPose: (z: Double, time: Double)?
    private var zoomRate = 0.0
    private var lastZoomRead: Double?
    private var zoomEstimate: PoseEstimate?
    /// The setup's next request and when it is due.
    private var queuedSetup: (path: String, body: String, flight: Flight, due: Double)?
    /// SetPreset / RemovePreset asked for and not sent yet, in the order asked.
    private var queuedPresets: [CameraPresetRequest] = []
    /// A new preset the camera refused, its presets to be counted (GetPresets) before the refusal
    /// is reported: asked only then, since a count before every save costs a round trip.
    private var refusalToCount: (request: CameraPresetRequest, why: String)?
    /// Outcomes known without asking the camera (a VISCA memory number asked of an ONVIF camera).
    private var presetAnswers: [DriverReport] = []

    /// The longest a request may wait for its answer before the link is given up, s (the link's
    /// own timeout is shorter: this only catches an adapter that went quiet).
    static let answerTimeout = 10.0
    /// How many GetStatus replies without a position at connect make the pose dead-reckoned (a
    /// camera just booted may answer its first without one).
    static let connectReads = 3
    /// The least time between the connect's GetStatus reads, s: spread over the link's silence
    /// limit (a second), so that a transient failure or a camera still booting is not taken for one
    /// that gives no position (back to back they spanned three round trips, a few ms); no more than
    /// half of it, for the same reason as `estimateOnlyPollInterval`: the answers are what keeps the
    /// link alive. It delays only the connect of a camera giving none (by a second); one that gives
    /// a position is ready on its first read, and one whose position comes later still is
    /// reconnected then (`feedback`).
    static let connectReadSpacing = ProtocolTiming.linkTimeout / 2
    /// How often GetStatus is asked while it gives nothing the pose needs (`estimateOnly`), s: the
    /// one request slot is kept for the moves, and a read every half second still tells a camera
    /// that went away (its answer times out) or whose position came later (`feedback`). Its answers
    /// are what keeps the link alive (FEEDBACK from the estimate is not heard from the camera): half
    /// the engine's silence limit, so that one late answer does not lose the link.
    static let estimateOnlyPollInterval = ProtocolTiming.linkTimeout / 2
    /// The device service's path: the one ONVIF's Core specification gives it, and the only one this driver asks.
    public static let devicePath = "/onvif/device_service"

    public init(settings: Settings) { self.settings = settings }

    public var closesPositionLoop: Bool { offers.absolute || (offers.relative && !offers.continuous) }
    /// GetStatus, one request in flight.
    public var positionIsPolled: Bool { true }
    /// A velocity-only camera (ContinuousMove and Stop) that reads its position: one dead-reckoned
    /// cannot be brought closer than its estimate, which no read corrects.
    public var wantsFineApproach: Bool { !closesPositionLoop && offers.continuous && readsPosition }
    public var stopConfirmed: Bool { !stopPending }

    public mutating func start(at time: Double) -> [UInt8] {
        step = .clock
        decoder = ONVIFWire.Decoder()
        inFlight = nil
        abandonedReplies = 0
        stopAgain = false
        pending = nil
        lastMove = nil
        pose = nil
        nextFeedback = 0
        rate = (0, 0)
        lastRead = nil
        estimate = nil
        onEstimate = false
        readsPosition = true
        positionlessReads = 0
        positionlessFault = nil
        stopPending = false
        readBack = nil
        ratePaths.x.reset(); ratePaths.y.reset()
        queuedSetup = nil
        positionRange = PanTiltRange()
        translationRange = PanTiltRange()
        relativeGoal = nil
        zoomOffers = (nil, false, false)
        panTiltRate = (0, 0)
        zoomAsked = (0, nil)
        zoomPose = nil
        zoomRate = 0
        lastZoomRead = nil
        zoomEstimate = nil
        queuedPresets = []
        refusalToCount = nil
        presetAnswers = []
        nodeToken = nil
        optionSpaces = nil
        presetLimit = nil
        nodeUnknown = nil
        homeSupported = false
        return request(Self.devicePath, ONVIFRequests.getSystemDateAndTime, authenticate: false, .setup, at: time)
    }

    // MARK: - Answers

    public mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport] {
        guard let frames = decoder.feed(bytes) else { return [.fatal("the ONVIF link sent something that is not its wire format")] }
        var reports: [DriverReport] = []
        for case .reply(let reply) in frames {
            counters.decoder.frames += 1
            if abandonedReplies > 0 {
                abandonedReplies -= 1
                continue
            }
            guard let flight = inFlight else { reports.append(.garbage(.malformed)); continue }
            inFlight = nil
            switch reply {
            case .failure(let text):
                reports.append(.fatal("the camera did not answer: \(text)"))
            case .response(let status, let wallClock, let body):
                counters.roundTrip.sample(time - flight.sentAt)
                reports += handle(status: status, wallClock: wallClock, body: body, flight: flight.what, sent: flight.sentAt, at: time)
            }
        }
        return reports
    }

    private mutating func handle(status: Int, wallClock: Double, body: [UInt8], flight: Flight, sent: Double, at time: Double) -> [DriverReport] {
        let content: Result<XMLElement, ONVIFFault>
        do {
            content = ONVIFSOAP.body(of: try XMLReader.parse(body))
        } catch {
            content = .failure(ONVIFFault(reason: body.isEmpty ? "an empty reply" : "a reply that is not XML (\(error))"))
        }
        let reply: XMLElement
        switch content {
        case .success(let element) where status == 200: reply = element
        case .success: return refused("HTTP \(status)", flight: flight, at: time)
        case .failure(let fault): return refused("HTTP \(status)" + (body.isEmpty && status != 200 ? "" : ", \(fault.reason)"), flight: flight, at: time)
        }
        switch flight {
        case .setup: return setup(reply, wallClock: wallClock, at: time)
        case .status:
            if readBack == .reading { readBack = nil }
            return feedback(reply, at: time)
        case .move(let move):
            if move == .stop, stopAgain {
                stopAgain = false
                if pending == nil { pending = .stop }
            }
            if move == .stop, pending == nil { stopPending = false }
            if move == .stop, readBack == .stopping { readBack = .reading }
            if step == .connectStop {
                step = .position
                return next(ptzPath, ONVIFRequests.getStatus(profile), at: time)
            }
            estimateActed(on: move, sent: sent, at: time)
            return []
        case .preset(let request):
            switch request {
            case .store:
                guard let token = reply.value("PresetToken"), !token.isEmpty else {
                    return [.cameraPreset(request, .failure(CameraPresetRefusal("SetPreset answered no PresetToken")))]
                }
                return [.cameraPreset(request, .success(.token(token)))]
            case .remove(let slot):
                return [.cameraPreset(request, .success(slot))]
            }
        case .presetCount(let request, let why):
            return [.cameraPreset(request, .failure(CameraPresetRefusal(explained(why, listed: reply.children("Preset").count))))]
        }
    }

    private mutating func refused(_ reason: String, flight: Flight, at time: Double) -> [DriverReport] {
        if step == .node { return learned(node: nil, unknownBecause: "GetNodes: \(reason)", at: time) }
        // Cheap cameras' servers answer GetStatus with a fault (ter:NoStatus) where they have no
        // position: a reply without one, not a broken camera.
        if step == .position { return positionless(fault: reason, at: time) }
        if step != .ready { return [.fatal("the camera refused \(stepName): \(reason)")] }
        switch flight {
        case .setup:
            return []  // (none is sent once ready)
        case .status:
            if readBack == .reading { readBack = nil }
            // Dead-reckoned, nothing is read from the reply but the zoom: the pose goes on from the
            // estimate (the engine steers on FEEDBACK, and some cameras fault on every GetStatus).
            if !readsPosition { return feedback(nil, at: time) }
            counters.commandsFailed += 1
            return [.rejected("GetStatus failed: \(reason)")]
        case .move(let move):
            counters.refused += 1
            // A position's rest goes no further than its refused step (it would be the same refusal).
            relativeGoal = nil
            // A refused Stop may have left the camera moving: the stop stays unconfirmed until a
            // later one is answered (a read-back's Stop refused leaves a user's STOP unconfirmed too).
            if move == .stop, readBack == .stopping { readBack = nil }
            if move == .stop { stopAgain = false }
            let type: MessageType = switch move {
            case .stop: .stop
            case .continuous: .velocity
            case .absolute, .relative: .position
            }
            return [.refused(command: type.rawValue, reason: reason)]
        case .preset(let request):
            counters.refused += 1
            let why = "\(request.isStore ? "SetPreset" : "RemovePreset"): \(reason)"
            // A new preset refused where the node says how many it takes: the camera's presets are
            // counted, so that a refusal for want of room says so beside the camera's fault.
            if case .store(_, nil) = request, presetLimit != nil {
                refusalToCount = (request, why)
                return []
            }
            return [.cameraPreset(request, .failure(CameraPresetRefusal(why)))]
        case .presetCount(let request, let why):
            // The count only explains the refusal: without it, the camera's fault alone.
            counters.commandsFailed += 1
            return [.cameraPreset(request, .failure(CameraPresetRefusal(why)))]
        }
    }

    /// A new preset's refusal, with the count of the camera's presets where it lists as many as its
    /// node takes. The count only explains a refusal, never stands for one: some cameras list every
    /// slot, set or not (Hikvision's "Preset N"; an Ellinet listed its 10 with 2 set).
    private func explained(_ why: String, listed: Int) -> String {
        guard let limit = presetLimit, listed >= limit else { return why }
        return why + "; the camera lists \(listed) presets, the most its PTZ node takes (MaximumNumberOfPresets \(limit)): delete one first"
    }

    private var stepName: String {
        switch step {
        case .clock: "GetSystemDateAndTime"
        case .capabilities: "GetCapabilities"
        case .information: "GetDeviceInformation"
        case .profiles: "GetProfiles"
        case .options: "GetConfigurationOptions"
        case .node: "GetNodes"
        case .connectStop: "the Stop sent at connect"
        case .position: "GetStatus"
        case .ready: "a request"
        }
    }

    private mutating func setup(_ reply: XMLElement, wallClock: Double, at time: Double) -> [DriverReport] {
        switch step {
        case .clock:
            if let utc = reply.find("UTCDateTime"), let date = utc.child("Date"), let clock = utc.child("Time"),
               let y = date.value("Year").flatMap({ Int64($0) }), let mo = date.value("Month").flatMap({ Int64($0) }),
               let d = date.value("Day").flatMap({ Int64($0) }), let h = clock.value("Hour").flatMap({ Int64($0) }),
               let mi = clock.value("Minute").flatMap({ Int64($0) }), let s = clock.value("Second").flatMap({ Int64($0) }) {
                clockOffset = ONVIFSOAP.unixSeconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s) - wallClock
            }
            step = .capabilities
            return next(Self.devicePath, ONVIFRequests.getCapabilities, at: time)
        case .capabilities:
            guard let ptz = reply.find("PTZ")?.value("XAddr").map(Self.path) else { return [.fatal("the camera has no PTZ service")] }
            ptzPath = ptz
            if let media = reply.find("Media")?.value("XAddr").map(Self.path) { mediaPath = media }
            step = .information
            return next(Self.devicePath, ONVIFRequests.getDeviceInformation, at: time)
        case .information:
            let maker = reply.value("Manufacturer") ?? "", model = reply.value("Model") ?? "ONVIF camera"
            let serial = reply.value("SerialNumber") ?? ""
            identity = StandIdentity(model: maker.isEmpty ? model : "\(maker) \(model)", firmware: reply.value("FirmwareVersion") ?? "",
                                     hardware: reply.value("HardwareId") ?? "",
                                     serial: settings.name ?? "onvif-" + String((serial.isEmpty ? model : serial).filter { $0.isLetter || $0.isNumber || $0 == "-" }),
                                     protocolVersion: "onvif")
            step = .profiles
            return next(mediaPath, ONVIFRequests.getProfiles, at: time)
        case .profiles:
            let profiles = reply.children("Profiles")
            let chosen = settings.profile.map { wanted in profiles.first { $0.attributes["token"] == wanted } }
                ?? profiles.first { $0.child("PTZConfiguration") != nil }
            guard let chosen, let token = chosen.attributes["token"] else {
                return [.fatal(settings.profile.map { "the camera has no profile \($0)" } ?? "no media profile of the camera has a PTZ configuration")]
            }
            guard let configurationToken = chosen.child("PTZConfiguration")?.attributes["token"] else {
                return [.fatal("profile \(token) has no PTZ configuration")]
            }
            profile = token
            nodeToken = chosen.child("PTZConfiguration")?.value("NodeToken")
            positionRange = PanTiltRange().narrowed(by: chosen.child("PTZConfiguration")?.child("PanTiltLimits")?.children("Range") ?? [])
            step = .options
            return next(ptzPath, ONVIFRequests.getConfigurationOptions(configurationToken), at: time)
        case .options:
            optionSpaces = reply.find("Spaces")
            step = .node
            return next(ptzPath, ONVIFRequests.getNodes, at: time)
        case .node:
            let nodes = reply.children("PTZNode")
            let node = nodes.first { $0.attributes["token"] == nodeToken } ?? (nodes.count == 1 ? nodes.first : nil)
            return learned(node: node, unknownBecause: "GetNodes lists no node \(nodeToken ?? "(the profile's PTZ configuration names none)") of profile \(profile)",
                           at: time)
        case .position:
            if Self.panTilt(in: reply) != nil { return becomeReady(at: time) }
            return positionless(fault: nil, at: time)
        case .connectStop, .ready:
            return []
        }
    }

    /// A connect read without a position (`fault`: a fault's reason): read again
    /// `connectReadSpacing` later, `connectReads` times in all, then dead-reckoned.
    private mutating func positionless(fault: String?, at time: Double) -> [DriverReport] {
        positionlessReads += 1
        positionlessFault = fault
        guard positionlessReads >= Self.connectReads else {
            return next(ptzPath, ONVIFRequests.getStatus(profile), after: Self.connectReadSpacing, at: time)
        }
        return deadReckon(at: time)
    }

    /// A camera whose GetStatus gives no position: its pose is dead-reckoned from the moves sent,
    /// from the generic values that are yaw 0, pitch 0, its place in its range unknown, so it may
    /// turn the range's whole width either way (the stand's limits). An AbsoluteMove names a place
    /// in the range: only relative and continuous moves steer it.
    private mutating func deadReckon(at time: Double) -> [DriverReport] {
        guard offers.relative || offers.continuous else {
            return [.fatal("profile \(profile) offers only absolute moves and its GetStatus gives no position: where the camera points cannot be known")]
        }
        readsPosition = false
        offers.absolute = false
        let origin = (x: settings.pan.generic(0), y: settings.tilt.generic(0))
        let travel = (x: positionRange.x.upperBound - positionRange.x.lowerBound, y: positionRange.y.upperBound - positionRange.y.lowerBound)
        positionRange = PanTiltRange(x: origin.x - travel.x...origin.x + travel.x, y: origin.y - travel.y...origin.y + travel.y)
        estimate = PoseEstimate(topSpeed: topSpeed, at: origin, time: time, range: positionRange, travel: travel)
        return becomeReady(at: time)
    }

    /// The top speeds (`panSpeed`, `tiltSpeed` at a velocity of 1), generic units/s.
    private var topSpeed: (x: Double, y: Double) {
        (settings.panSpeed / abs(settings.pan.perUnit), settings.tiltSpeed / abs(settings.tilt.perUnit))
    }

    /// The setup from the profile's PTZ node (nil: not known, `unknownBecause`): the moves its
    /// spaces offer, then the Stop every connect sends.
    private mutating func learned(node: XMLElement?, unknownBecause: String, at time: Double) -> [DriverReport] {
        nodeUnknown = node == nil ? unknownBecause : nil
        presetLimit = node?.value("MaximumNumberOfPresets").flatMap { Int($0) }
        homeSupported = node?.value("HomeSupported") == "true"
        let spaces = optionSpaces ?? node?.child("SupportedPTZSpaces")
        offers = (spaces?.child("AbsolutePanTiltPositionSpace") != nil, spaces?.child("RelativePanTiltTranslationSpace") != nil,
                  spaces?.child("ContinuousPanTiltVelocitySpace") != nil)
        offersSpeed = spaces?.child("PanTiltSpeedSpace") != nil
        guard offers.absolute || offers.relative || offers.continuous else {
            return [.fatal("profile \(profile) offers no pan/tilt move dockd can steer")]
        }
        positionRange = positionRange.narrowed(by: spaces?.children("AbsolutePanTiltPositionSpace") ?? [])
        translationRange = PanTiltRange().narrowed(by: spaces?.children("RelativePanTiltTranslationSpace") ?? [],
                                                         uri: PanTiltRange.translationSpace)
        let zoomPosition = spaces?.child("AbsoluteZoomPositionSpace")?.child("XRange")
        let low = zoomPosition?.value("Min").flatMap(Double.init), high = zoomPosition?.value("Max").flatMap(Double.init)
        zoomOffers = (low.flatMap { l in high.flatMap { h in l < h ? l...h : nil } }, spaces?.child("ContinuousZoomVelocitySpace") != nil,
                      spaces?.child("RelativeZoomTranslationSpace") != nil)
        // Every connect leaves the camera still.
        step = .connectStop
        stopPending = true
        return next(ptzPath, ONVIFRequests.stop(profile), flight: .move(.stop), at: time)
    }

    private mutating func becomeReady(at time: Double) -> [DriverReport] {
        step = .ready
        nextPoll = time
        let pan = settings.pan.degrees(over: positionRange.x), tilt = settings.tilt.degrees(over: positionRange.y)
        let axes = [
            AxisCapability(axis: .yaw, continuous: false, min: Float(-radians(pan.high)), max: Float(-radians(pan.low)),
                           maxSpeed: Float(radians(settings.panSpeed)), maxAccel: Float(4 * radians(settings.panSpeed)), countsPerRev: 360 * 3600),
            AxisCapability(axis: .pitch, continuous: false, min: Float(radians(tilt.low)), max: Float(radians(tilt.high)),
                           maxSpeed: Float(radians(settings.tiltSpeed)), maxAccel: Float(4 * radians(settings.tiltSpeed)), countsPerRev: 360 * 3600),
        ]
        let how = [offers.absolute ? "absolute" : nil, offers.relative ? "relative" : nil, offers.continuous ? "continuous" : nil].compactMap { $0 }
        let zoomed = zoomScale.map { ", zoom to \($0.maxZoom == $0.maxZoom.rounded() ? String(Int($0.maxZoom)) : String($0.maxZoom))x" } ?? ""
        let presets = nodeUnknown.map { "preset limit unknown (\($0)); " }
            ?? presetLimit.map { "\($0 == 0 ? "no" : String($0)) presets" + (homeSupported ? ", a home position" : "") + "; " } ?? ""
        let pose = readsPosition ? "pose read back; "
            : "pose estimated from the moves (GetStatus gives no position\(positionlessFault.map { ": it answered \($0)" } ?? "")); "
        identity.hardware = (identity.hardware.isEmpty ? "" : identity.hardware + "; ") + pose + "profile \(profile); " + presets
            + how.joined(separator: ", ") + " moves" + zoomed
        let zoomAxis = zoomScale.map { zoom in
            AxisCapability(axis: .zoom, continuous: false, min: 1, max: Float(zoom.maxZoom), maxSpeed: Float(zoom.topRate),
                           maxAccel: Float(4 * zoom.topRate), countsPerRev: 0)
        }
        let capabilities = Capabilities(feedbackHz: UInt16(max(1, settings.pollHz.rounded())), imuHz: 0, features: [], buttons: [],
                                        customButtons: 0, axes: axes + (zoomAxis.map { [$0] } ?? []), batteries: [])
        return [.ready(identity, capabilities)]
    }

    /// GetStatus's pan/tilt position, nil where it gives none.
    private static func panTilt(in reply: XMLElement) -> (x: Double, y: Double)? {
        guard let panTilt = reply.find("Position")?.child("PanTilt"), let x = panTilt.attributes["x"].flatMap(Double.init),
              let y = panTilt.attributes["y"].flatMap(Double.init), x.isFinite, y.isFinite else { return nil }
        return (x, y)
    }

    /// FEEDBACK from a GetStatus reply (nil: a refused one, dead-reckoned).
    private mutating func feedback(_ reply: XMLElement?, at time: Double) -> [DriverReport] {
        let now: (x: Double, y: Double)
        if !readsPosition, let estimate {
            if let read = reply.flatMap(Self.panTilt(in:)) {
                // Changing the pose's frame mid-link (yaw 0 where the camera was at connect) would
                // move every target and limit: the connect decides again, and reads it.
                return [.reconnect("GetStatus gives a position now (\(read.x), \(read.y)) where it gave none at connect: reconnecting to steer on it")]
            }
            // Nothing to read: the pose and its rate are the estimate's.
            now = estimate.pose(at: time)
            rate = estimate.rate(at: time)
            pose = (now.x, now.y, time)
        } else {
            guard let read = reply.flatMap(Self.panTilt(in:)) else {
                counters.commandsFailed += 1
                return [.rejected("GetStatus gave no pan/tilt position")]
            }
            now = follow(read, at: time)
        }
        nextFeedback = time + 1 / settings.pollHz
        let yaw = -radians(settings.pan.degrees(now.x)), pitch = radians(settings.tilt.degrees(now.y))
        let yawRate = -radians(rate.x * settings.pan.perUnit), pitchRate = radians(rate.y * settings.tilt.perUnit)
        var axes = [
            AxisFeedback(axis: .yaw, position: Float(yaw), velocity: Float(yawRate)),
            AxisFeedback(axis: .pitch, position: Float(pitch), velocity: Float(pitchRate)),
        ]
        if let zoom = zoomScale {
            let read = reply?.find("Position")?.child("Zoom")?.attributes["x"].flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil }
            let z = zoomFeedback(read, scale: zoom, at: time)
            axes.append(AxisFeedback(axis: .zoom, position: Float(zoom.magnification(z)), velocity: Float(zoomRate * (zoom.maxZoom - 1) / (zoom.range.upperBound - zoom.range.lowerBound))))
        }
        return [.feedback(Feedback(timeUs: UInt64(max(0, time) * 1e6), axes: axes))]
    }

    /// The pose from a position read: the read, or the estimate while reads repeat and the camera
    /// should be moving; its rate is kept in `rate`.
    private mutating func follow(_ read: (x: Double, y: Double), at time: Double) -> (x: Double, y: Double) {
        var now = read
        var corrected = false
        if var estimate {
            // The same position again while the camera should be moving is no news: the camera
            // has not moved yet, or its reads do not follow the head (some report where a motion
            // began until it ends). The pose is the estimate until a read moves again: taking a
            // repeat for the pose, however soon after the move, would set the estimate back by
            // what the head had turned meanwhile, and the head would overshoot by it.
            let repeated = lastRead.map { $0 == read } == true && estimate.moving(at: time)
            corrected = onEstimate && !repeated
            onEstimate = repeated
            if repeated {
                now = estimate.pose(at: time)
            } else {
                estimate.read(x: read.x, y: read.y, at: time)
            }
            self.estimate = estimate
        } else {
            estimate = PoseEstimate(topSpeed: topSpeed, at: read, time: time)
        }
        lastRead = read
        if corrected, let estimate {
            // The step from the estimate to the read is the estimate's error, not motion: taken for
            // a rate, it made the tracker see the subject jump and chase it (the loop rang).
            rate = estimate.rate(at: time)
            pose = (now.x, now.y, time)
        } else {
            if let last = pose, time - last.time >= 0.5 / settings.pollHz {
                rate = ((now.x - last.x) / (time - last.time), (now.y - last.y) / (time - last.time))
            }
            if (pose.map { time - $0.time >= 0.5 / settings.pollHz }) ?? true { pose = (now.x, now.y, time) }
        }
        return now
    }

    /// The zoom's position now from a read: the read, or the estimate while reads repeat and
    /// the zoom should be moving (the same rule as the pan/tilt's), or without a read (a GetStatus
    /// with no Position/Zoom) the estimate from the wide end: every FEEDBACK carries the zoom, since
    /// the controller moves no axis while one is unknown. Its rate is kept in `zoomRate`.
    private mutating func zoomFeedback(_ read: Double?, scale: ONVIFZoomScale, at time: Double) -> Double {
        let clamped = { (z: Double) in min(scale.range.upperBound, max(scale.range.lowerBound, z)) }
        guard let read else {
            if zoomEstimate == nil { zoomEstimate = PoseEstimate(topSpeed: (scale.topSpeed, 0), at: (scale.range.lowerBound, 0), time: time) }
            let now = clamped(zoomEstimate?.pose(at: time).x ?? scale.range.lowerBound)
            zoomPose = (now, time)
            return now
        }
        var now = read
        if var estimate = zoomEstimate {
            if lastZoomRead == read && estimate.moving(at: time) {
                now = clamped(estimate.pose(at: time).x)
            } else {
                estimate.read(x: read, y: 0, at: time)
            }
            zoomEstimate = estimate
        } else {
            zoomEstimate = PoseEstimate(topSpeed: (scale.topSpeed, 0), at: (read, 0), time: time)
        }
        lastZoomRead = read
        if let last = zoomPose, time - last.time >= 0.5 / settings.pollHz { zoomRate = (now - last.z) / (time - last.time) }
        if (zoomPose.map { time - $0.time >= 0.5 / settings.pollHz }) ?? true { zoomPose = (now, time) }
        return now
    }

    /// The zoom as a stand axis: where the settings give its magnification and the camera offers
    /// a zoom position space (to read it back and steer it to), a velocity or a translation.
    private var zoomScale: ONVIFZoomScale? {
        guard let maxZoom = settings.maxZoom, maxZoom > 1, zoomOffers.position != nil || zoomOffers.continuous || zoomOffers.relative else { return nil }
        return ONVIFZoomScale(range: zoomOffers.position ?? 0...1, maxZoom: maxZoom, fullRangeSeconds: settings.zoomSeconds)
    }

    // MARK: - Commands

    public mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        guard step == .ready else { return [] }
        switch command {
        case .position(_, let targets):
            // Dead-reckoned, where the estimate says now (the last poll's may be a poll old).
            let now = (readsPosition ? nil : estimate?.pose(at: time)) ?? pose.map { (x: $0.x, y: $0.y) } ?? (0, 0)
            var x = now.x, y = now.y
            // A move replaces the motion in force: a zoom velocity ends with it.
            zoomAsked.velocity = 0
            panTiltRate = (0, 0)
            ratePaths.x.reset(); ratePaths.y.reset()
            relativeGoal = nil
            for target in targets {
                if target.axis == .yaw { x = settings.pan.generic(-degrees(radians: Double(target.position))) }
                if target.axis == .pitch { y = settings.tilt.generic(degrees(radians: Double(target.position))) }
                if target.axis == .zoom, let zoom = zoomScale, zoomOffers.position != nil || zoomOffers.relative {
                    zoomAsked.target = zoom.position(magnification: Double(target.position))
                }
            }
            // An axis not named stays where it is read, which may be a hair past the range's end.
            (x, y) = positionRange.clamped(x: x, y: y)
            if offers.absolute { pending = .absolute(x: x, y: y, zoom: zoomOffers.position != nil ? zoomAsked.target : nil) }
            else if offers.relative {
                relativeGoal = (x, y)
                relativeStepFrom = nil
                pending = relativeStep(from: now, at: time)
            }
        case .velocity(let rates):
            relativeGoal = nil
            var x = 0.0, y = 0.0
            let namesPanTilt = rates.contains { $0.axis == .yaw || $0.axis == .pitch }
            if !namesPanTilt { (x, y) = panTiltRate }
            for rate in rates {
                // A velocity of 1 is the top speed, the way the generic position grows.
                if rate.axis == .yaw { x = clamp(-degrees(radians: Double(rate.value)) / settings.panSpeed * settings.pan.direction) }
                if rate.axis == .pitch { y = clamp(degrees(radians: Double(rate.value)) / settings.tiltSpeed * settings.tilt.direction) }
                if rate.axis == .zoom, let zoom = zoomScale, zoomOffers.continuous || zoomOffers.relative {
                    zoomAsked = (zoom.velocity(Double(rate.value)), nil)
                }
            }
            panTiltRate = (x, y)
            if x == 0 && y == 0 && zoomAsked.velocity == 0 {
                pending = .stop
                stopPending = true
                ratePaths.x.reset(); ratePaths.y.reset()
            } else {
                pending = velocityMove(x: x, y: y, at: time)
            }
        case .stop:
            pending = .stop
            stopPending = true
            relativeGoal = nil
            panTiltRate = (0, 0)
            ratePaths.x.reset(); ratePaths.y.reset()
            zoomAsked = (0, nil)
            return abandonInFlight(at: time) + pump(at: time)
        default:
            break  // LIMITS: the camera keeps its own range; no LED, no MOTORS
        }
        return pump(at: time)
    }

    /// A STOP (a client's, a lost lease's, dockd's exit) does not wait behind a GetStatus or a
    /// move in flight: the request is abandoned (its connection let go, so the camera still has one
    /// request from dockd) and the Stop goes at once — it reached the camera up to a round trip and
    /// a half after the STOP otherwise. A read moves nothing, and the next poll's answer replaces
    /// it. A move is counted in the estimate as acted on now (its reply, the usual bound, would
    /// have come within the round trip), and the Stop is sent a second time once the first is
    /// answered: a camera serving connections in parallel may act on the move after the first
    /// Stop, never after one sent a round trip later. A preset's request, whose answer the engine
    /// awaits, and a Stop are waited for. The end of a rate (a zero velocity) waits as before:
    /// tracking ends rates often, and each abandonment costs a new connection.
    private mutating func abandonInFlight(at time: Double) -> [UInt8] {
        guard step == .ready, let flight = inFlight else { return [] }
        switch flight.what {
        case .status: break
        case .move(let move) where move != .stop:
            estimateActed(on: move, sent: flight.sentAt, at: time)
            stopAgain = true
        default: return []
        }
        inFlight = nil
        abandonedReplies += 1
        return ONVIFWire.abandon
    }

    /// A rate (`x`, `y`: the generic position's way) as the camera can take it: a ContinuousMove,
    /// else a target ahead on the rate's path (`RateTargetPath`): an AbsoluteMove to it, or a
    /// RelativeMove from where the camera is by the estimate.
    private mutating func velocityMove(x: Double, y: Double, at time: Double) -> Move? {
        if offers.continuous {
            return .continuous(x: x * settings.panVelocitySign, y: y * settings.tiltVelocitySign,
                               zoom: zoomScale != nil && zoomOffers.continuous ? zoomVelocity : nil)
        }
        // No read yet: no pose to set a target ahead of (the engine sends no rate before feedback).
        guard let now = estimate?.pose(at: time) ?? pose.map({ (x: $0.x, y: $0.y) }) else { return nil }
        // A move at the rate's speed goes a horizon ahead (two command intervals and a poll: the
        // link carries one request at a time, and reads go between moves), so that it runs until
        // the next; one at the camera's own speed only an interval ahead, so that it leaps no
        // further than the rate goes in an interval (as the v4l2 driver's).
        let horizon = 2 * settings.commandInterval + 1 / settings.pollHz
        let lead = offersSpeed ? horizon : settings.commandInterval
        let target = positionRange.clamped(
            x: ratePaths.x.target(rate: x * settings.panSpeed / abs(settings.pan.perUnit), from: now.x, lead: lead, pause: horizon, at: time),
            y: ratePaths.y.target(rate: y * settings.tiltSpeed / abs(settings.tilt.perUnit), from: now.y, lead: lead, pause: horizon, at: time))
        // At the rate's own speed the camera moves on smoothly toward the target ahead; at its
        // default (the top speed) it leaps there and waits, and the pose it reports jerks
        // between a standstill and the top speed. ONVIF's generic speed is one number for the
        // combined pan/tilt move: the faster axis's fraction (both targets are a horizon ahead, so
        // a camera that brings both axes in together moves each at its own rate).
        let speed = offersSpeed ? MoveSpeed(max(abs(x), abs(y))) : nil
        if offers.absolute {
            return .absolute(x: target.x, y: target.y, zoom: zoomOffers.position != nil ? zoomAsked.target : nil, speed: speed)
        }
        let zoomAhead = zoomScale.map { zoomAsked.velocity * $0.topSpeed * horizon }.flatMap { $0 == 0 ? nil : $0 }
        let step = translationRange.clamped(x: target.x - now.x, y: target.y - now.y)
        return .relative(x: step.x, y: step.y, zoom: zoomOffers.relative ? zoomAhead ?? zoomTranslation(at: time) : nil, speed: speed)
    }

    /// The RelativeMove from `now` toward `relativeGoal`, within the translation space; the goal
    /// is kept while it is further than that.
    private mutating func relativeStep(from now: (x: Double, y: Double), at time: Double) -> Move? {
        guard let goal = relativeGoal else { return nil }
        if let from = relativeStepFrom, abs(from.x - now.x) < 1e-9, abs(from.y - now.y) < 1e-9 {
            relativeGoal = nil
            return nil
        }
        relativeStepFrom = now
        let wanted = (x: goal.x - now.x, y: goal.y - now.y)
        let step = translationRange.clamped(x: wanted.x, y: wanted.y)
        if step == wanted { relativeGoal = nil }
        return .relative(x: step.x, y: step.y, zoom: zoomTranslation(at: time))
    }

    /// A RelativeMove's zoom: from where the zoom is by the estimate (the last read, and the moves
    /// acted on since) to the target asked for; nil without a target or a zoom translation space.
    private func zoomTranslation(at time: Double) -> Double? {
        guard zoomOffers.relative, let target = zoomAsked.target, let now = zoomEstimate?.pose(at: time).x else { return nil }
        return target - now
    }

    /// The zoom velocity a ContinuousMove carries: the one asked for, or, for a zoom target still
    /// being approached (a ContinuousMove would end its AbsoluteMove), one toward it that slows
    /// to nothing there (a second away at full speed).
    private var zoomVelocity: Double {
        guard let target = zoomAsked.target, let zoom = zoomScale, let now = zoomPose?.z else { return zoomAsked.velocity }
        return clamp((target - now) / zoom.topSpeed)
    }

    public mutating func tick(at time: Double) -> DriverOutput {
        if let flight = inFlight, time - flight.sentAt > Self.answerTimeout {
            return DriverOutput(reports: [.fatal("the camera did not answer in \(Self.answerTimeout) s")])
        }
        defer { presetAnswers = [] }
        var reports = presetAnswers
        if estimateOnly, step == .ready, time >= nextFeedback { reports += feedback(nil, at: time) }
        return DriverOutput(bytes: pump(at: time), reports: reports)
    }

    // MARK: - Presets

    /// ONVIF cameras name their presets: dockd keeps the PresetToken SetPreset answers. A camera
    /// whose PTZ node takes none (MaximumNumberOfPresets 0) is asked to store none.
    public var cameraPresets: CameraPresetStorage? { presetLimit == 0 ? nil : .tokens }

    public mutating func cameraPreset(_ request: CameraPresetRequest, at time: Double) -> [UInt8] {
        if let slot = request.slot, slot.token == nil {
            presetAnswers.append(.cameraPreset(request, .failure(CameraPresetRefusal("an ONVIF camera keeps presets by token, not \(slot)"))))
            return []
        }
        queuedPresets.append(request)
        return pump(at: time)
    }

    public var nextDeadline: Double? {
        // A request in flight: nothing is due but its answer's timeout, judged with `>` (the
        // answer itself comes as bytes).
        if let flight = inFlight {
            let timeout = flight.sentAt + Self.answerTimeout + 1e-6
            return estimateOnly && step == .ready ? min(timeout, nextFeedback) : timeout
        }
        if !presetAnswers.isEmpty || readBack == .reading || readBackDue { return -.infinity }
        if let setup = queuedSetup { return setup.due }
        guard step == .ready else { return nil }
        if !queuedPresets.isEmpty || refusalToCount != nil { return -.infinity }
        var deadline = estimateOnly ? min(nextPoll, nextFeedback) : nextPoll
        if let move = pending { deadline = min(deadline, move == .stop ? -.infinity : (lastMove?.time ?? -.infinity) + settings.commandInterval) }
        if let renewal = renewalTime { deadline = min(deadline, renewal) }
        return deadline
    }

    /// When a ContinuousMove in force must be sent again so that its Timeout does not end it.
    private var renewalTime: Double? {
        guard let last = lastMove, case .continuous = last.move, pending == nil else { return nil }
        return last.time + Double(settings.moveTimeout) / 2
    }

    /// The next request when none is in flight: a stop or a due move first, then a due renewal, else a due poll.
    private mutating func pump(at time: Double) -> [UInt8] {
        guard inFlight == nil else { return [] }
        if let setup = queuedSetup {
            guard time >= setup.due else { return [] }
            queuedSetup = nil
            return request(setup.path, setup.body, authenticate: true, setup.flight, at: time)
        }
        guard step == .ready else { return [] }
        if pending != .stop {
            if readBack == .reading { return poll(at: time) }
            if readBackDue, let last = lastMove {
                // The motion asked for goes again after the read (a newer one asked meanwhile instead).
                readBack = .stopping
                if pending == nil { pending = last.move }
                return sendMove(.stop, at: time)
            }
        }
        // The rest of a position further than one translation, once the camera is there.
        if pending == nil, relativeGoal != nil, let estimate, !estimate.moving(at: time) {
            pending = relativeStep(from: estimate.pose(at: time), at: time)
        }
        // A stop waits for nothing but the request in flight.
        if let move = pending, move == .stop || time >= (lastMove?.time ?? -.infinity) + settings.commandInterval {
            pending = nil
            // The same rate again is no news to the camera until its renewal is due.
            if let last = lastMove, last.move == move, case .continuous = move, time < last.time + Double(settings.moveTimeout) / 2 {
                return pump(at: time)
            }
            return sendMove(move, at: time)
        }
        if let refused = refusalToCount {
            refusalToCount = nil
            return request(ptzPath, ONVIFRequests.getPresets(profile), authenticate: true, .presetCount(refused.request, refusal: refused.why), at: time)
        }
        if !queuedPresets.isEmpty { return sendPreset(queuedPresets.removeFirst(), at: time) }
        if let renewal = renewalTime, time >= renewal, let last = lastMove { return sendMove(last.move, at: time) }
        guard time >= nextPoll else { return [] }
        return poll(at: time)
    }

    private mutating func sendPreset(_ preset: CameraPresetRequest, at time: Double) -> [UInt8] {
        let body = switch preset {
        case .store(let name, let slot):
            ONVIFRequests.setPreset(profile, name: name, token: slot?.token)
        case .remove(let slot):
            ONVIFRequests.removePreset(profile, token: slot.token ?? "")  // a memory number was answered when asked
        }
        return request(ptzPath, body, authenticate: true, .preset(preset), at: time)
    }

    /// Dead-reckoned with no zoom to read: GetStatus gives nothing FEEDBACK needs, which comes from
    /// the estimate at `pollHz` (ticks), GetStatus only every `estimateOnlyPollInterval`.
    private var estimateOnly: Bool { !readsPosition && zoomScale == nil }

    private mutating func poll(at time: Double) -> [UInt8] {
        nextPoll = time + (estimateOnly ? max(Self.estimateOnlyPollInterval, 1 / settings.pollHz) : 1 / settings.pollHz)
        return request(ptzPath, ONVIFRequests.getStatus(profile), authenticate: true, .status, at: time)
    }

    /// Whether the pan/tilt estimated under a ContinuousMove may be too far off, and stopping for
    /// a read costs less than that: the camera is to be stopped for one. A read-back holds the head
    /// for about two command intervals, which at the rate told turns it further than the doubt
    /// while it slews: stopped then, tracking through a loaded emulator rang (0.4–0.6 of the frame
    /// off) where it had not. (Where reads follow the head the next poll clears the doubt.)
    private var readBackDue: Bool {
        guard onEstimate, readBack == nil, pending != .stop, settings.readBackDoubt > 0, let estimate, let last = lastMove,
              case .continuous = last.move else { return false }
        let doubt = max(estimate.doubt.x * abs(settings.pan.perUnit), estimate.doubt.y * abs(settings.tilt.perUnit))
        let told = estimate.rate(at: estimate.base.time)
        let speed = max(abs(told.x * settings.pan.perUnit), abs(told.y * settings.tilt.perUnit))
        return doubt >= settings.readBackDoubt && speed * 2 * settings.commandInterval <= doubt
    }

    private mutating func sendMove(_ move: Move, at time: Double) -> [UInt8] {
        lastMove = (move, time)
        let body = switch move {
        case .absolute(let x, let y, let zoom, let speed): ONVIFRequests.absoluteMove(profile, x: x, y: y, zoom: zoom, speed: speed)
        case .relative(let x, let y, let zoom, let speed): ONVIFRequests.relativeMove(profile, x: x, y: y, zoom: zoom, speed: speed)
        case .continuous(let x, let y, let zoom): ONVIFRequests.continuousMove(profile, x: x, y: y, zoom: zoom, timeout: settings.moveTimeout)
        case .stop: ONVIFRequests.stop(profile)
        }
        return request(ptzPath, body, authenticate: true, .move(move), at: time)
    }

    /// The estimates follow a move from its reply: the camera acts on a request somewhere between
    /// its send and its reply, and a loaded camera's server queues it before acting and answers
    /// right after, so the reply is the nearer bound; taking it for every move, the Stop and the
    /// rate changes alike, also cancels a steady network delay. A move refused changes nothing.
    private mutating func estimateActed(on move: Move, sent: Double, at time: Double) {
        if var estimate {
            let now = estimate.pose(at: time)
            switch move {
            case .absolute(let x, let y, _, let speed):
                estimate.told(.toward(x: x, y: y, speed: speed?.fraction ?? 1), sent: sent, at: time)
            case .relative(let dx, let dy, _, let speed):
                let target = positionRange.clamped(x: now.x + dx, y: now.y + dy)
                estimate.told(.toward(x: target.x, y: target.y, speed: speed?.fraction ?? 1), sent: sent, at: time)
            case .continuous(let x, let y, _):
                // What was sent carries the velocity signs; the generic position moves the way they undo.
                estimate.told(.rate(x: x * settings.panVelocitySign * estimate.topSpeed.x, y: y * settings.tiltVelocitySign * estimate.topSpeed.y,
                                    until: time + Double(settings.moveTimeout)), sent: sent, at: time)
            case .stop: estimate.told(.still, sent: sent, at: time)
            }
            self.estimate = estimate
        }
        if var zoomEstimate, let zoom = zoomScale {
            // Every move replaces the zoom's motion too: one that names no zoom stops it.
            switch move {
            case .absolute(_, _, let target?, _): zoomEstimate.told(.toward(x: target, y: 0), sent: sent, at: time)
            case .relative(_, _, let translation?, _):
                let now = zoomEstimate.pose(at: time).x
                zoomEstimate.told(.toward(x: min(zoom.range.upperBound, max(zoom.range.lowerBound, now + translation)), y: 0), sent: sent, at: time)
            case .continuous(_, _, let velocity?) where velocity != 0:
                zoomEstimate.told(.rate(x: velocity * zoom.topSpeed, y: 0, until: time + Double(settings.moveTimeout)), sent: sent, at: time)
            default: zoomEstimate.told(.still, sent: sent, at: time)
            }
            self.zoomEstimate = zoomEstimate
        }
    }

    /// The setup's next request, sent with the first tick `after` seconds (`nextDeadline`): a
    /// reply's handling returns reports, not bytes.
    private mutating func next(_ path: String, _ body: String, flight: Flight = .setup, after: Double = 0, at time: Double) -> [DriverReport] {
        queuedSetup = (path, body, flight, time + after)
        return []
    }

    private mutating func request(_ path: String, _ body: String, authenticate: Bool, _ flight: Flight, at time: Double) -> [UInt8] {
        inFlight = (flight, time)
        return ONVIFWire.encode(ONVIFWire.Request(path: path, authenticate: authenticate, clockOffset: clockOffset, body: Array(body.utf8)))
    }

    // MARK: - Units

    private func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
    private func degrees(radians: Double) -> Double { radians * 180 / .pi }
    private func clamp(_ g: Double) -> Double { min(1, max(-1, g)) }

    /// The path of a service address (`http://host:port/path`): the link's host and port are used,
    /// since a camera behind NAT names its own inside address.
    static func path(_ address: String) -> String {
        let parts = address.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        // "http:", "", "host:port", "path…"
        guard parts.count == 4, parts[0].hasSuffix(":"), parts[1].isEmpty else { return "/" }
        return "/" + parts[3]
    }
}
