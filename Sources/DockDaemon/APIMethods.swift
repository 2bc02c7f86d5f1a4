#if canImport(Glibc)
import Glibc
#endif
import DockAPI
import DockCore
import DockDrivers
import DockIO
import DockJSON
import DockProtocol
import DockTracking
import DockVersion
import Logging
import NIOCore
import StandEngine

/// The JSON-RPC methods (protocol/API.md), declared in DockAPI's `APIMethod`. A method answers at
/// once, or with a future when a stand must answer (a command, or a read of its state on its own
/// event loop): no task per request.
struct APIMethods: Sendable {
    static let apiVersion = (major: 1, minor: 9)

    let stands: StandRegistry
    let hub: EventHub
    let clock: DaemonClock
    let heartbeatTimeoutMs: UInt16
    /// What new stands start with; `defaults.set` changes their defaults.
    let engineSettings: Shared<EngineSettings>
    let defaultsStore: DefaultsStore
    let presets: PresetMethods
    let pans: PanMethods
    /// Where work that belongs to no stand completes (detaching a stand).
    let loop: any EventLoop
    let logger: Logger
    /// The daemon's own uid: admin methods are for it and for root.
    let daemonUID = UInt32(getuid())

    /// What a method answers.
    enum Answer {
        case value(JSONValue)
        /// A result already encoded (constant ones: `dockd.version`, `rpc.discover`).
        case encoded(ByteBuffer)
        /// A stand answers later; the future fails with an `RPCError` or an `EngineError`.
        case later(EventLoopFuture<JSONValue>)

        enum Known {
            case value(JSONValue)
            case encoded(ByteBuffer)
        }
    }

    private static let version: ByteBuffer = {
        var b = ByteBuffer()
        b.writeJSON(["daemon": "dockd", "version": JSONValue(DockVersion.string),
                     "api": ["major": JSONValue(apiVersion.major), "minor": JSONValue(apiVersion.minor)],
                     "protocol": JSONValue("\(ProtocolVersion.major).\(ProtocolVersion.minor)")])
        return b
    }()

    /// A client disconnected (or was dropped): its leases end and what it changed reverts.
    func clientGone(_ id: Int) {
        for s in stands.all { s.clientGone(id) }
    }

    /// Runs the method of this name: who may call it and its params' kinds and ranges are checked
    /// as it declares them, then it runs.
    func call(_ name: String, _ p: Params, session: ClientSession) throws(RPCError) -> Answer {
        guard let (method, declared) = APIMethod.declared(name) else { throw .methodNotFound(name) }
        if declared.forAdministrators { try requireAdmin(session, name) }
        try p.check(declared.params)
        typealias P = APIParam
        switch method {
        case .version:
            return .encoded(Self.version)
        case .stats:
            return .value(["clients": JSONValue(hub.clientCount), "dropped_subscribers": JSONValue(hub.droppedSubscribers),
                           "stands": JSONValue(stands.all.count)])
        case .discover:
            return .encoded(try OpenRPCDocument.shared.encoded())
        case .standsList:
            let hosts = stands.all
            guard let first = hosts.first else { return .value([]) }
            return .later(EventLoopFuture.whenAllSucceed(hosts.map(describe), on: first.loop).map { .array($0) })
        case .standGet:
            let host = try find(p)
            let endpoint = "\(host.endpoint)"
            return .later(host.read { engine in
                var d = engine.description.json(endpoint: endpoint).object ?? [:]
                d["counters"] = engine.driverCounters.json(engine: engine.counters)
                d["batteries"] = Self.batteries(engine)
                d["control"] = Self.control(engine)
                d["last_fault"] = engine.lastFault.map { f in
                    ["source": JSONValue(f.report.source.rawValue), "code": JSONValue(f.report.code), "severity": JSONValue(f.report.severity),
                     "text": JSONValue(f.report.text), "time": JSONValue(f.time)]
                } ?? .null
                return .object(d)
            })
        case .batteryGet:
            return .later(try find(p).read { Self.batteries($0) })
        case .subscribe:
            return try subscribe(p, session: session)
        case .unsubscribe:
            hub.unsubscribe(client: session.id, topics: try p.topics())
            return .value(["topics": .array(hub.topics(of: session.id).map { JSONValue.string($0) })])
        case .trackingSet:
            let enabled = try p.bool(P.enabled.name)
            return try command(p, session, .setTracking(enabled)) { _ in ["enabled": JSONValue(enabled)] }
        case .motionVelocity:
            let rates = try p.axes(P.rates)
            guard !rates.isEmpty else { throw .invalidParams("give at least one of yaw, pitch, roll in rad/s, zoom in magnification/s") }
            return try command(p, session, .velocity(rates)) { _ in ["ok": true] }
        case .motionOrient:
            let target = try p.axes(P.positions)
            guard !target.isEmpty else { throw .invalidParams("give at least one of yaw, pitch, roll in rad, zoom in magnification") }
            let relative = try p.optionalBool(P.relative.name) ?? false
            let duration = try p.optionalNumber(P.duration)
            return try command(p, session, .orient(target, relative: relative, duration: duration), answer: Self.motionID)
        case .motionStop:
            return try command(p, session, .stop) { result in
                guard case .stopped(let confirmed) = result else { return ["ok": true] }
                return ["ok": true, "confirmed": JSONValue(confirmed)]
            }
        case .motionResume:
            return try command(p, session, .resume) { _ in ["ok": true] }
        case .motionCancel:
            let id = try p.number(P.motionID)
            guard id == id.rounded() else { throw .invalidParams("id must be a motion id (an integer ≥ 1)", field: "id") }
            return try command(p, session, .cancel(MotionID(rawValue: UInt64(id)))) { _ in ["ok": true] }
        case .motionLimits:
            return try command(p, session, .limits(try p.limits())) { _ in ["ok": true] }
        case .animationPlay:
            return try command(p, session, .play(try p.animation()), answer: Self.motionID)
        case .trackingObserve:
            let frame = ObservedFrame(detections: try p.detections(), captureTime: try p.captureTime(daemonNow: clock.now()), camera: try p.camera())
            return try command(p, session, .observe(frame)) { result in
                guard case .observed(let subjects, let inFrame) = result else { return ["ok": true] }
                return ["subjects": JSONValue(subjects), "in_frame": JSONValue(inFrame)]
            }
        case .trackingGet:
            let now = clock.now()
            return .later(try find(p).read { $0.trackingReport(at: now).json(stand: $0.standID ?? "") })
        case .trackingFraming:
            let request = try p.framingRequest()
            return try command(p, session, .framing(request.mode, shot: request.shot)) { _ in ["ok": true] }
        case .trackingROI:
            let rect = try p.rect("rect")
            guard rect.x >= 0, rect.y >= 0, rect.maxX <= 1 + 1e-9, rect.maxY <= 1 + 1e-9 else {
                throw .invalidParameter("rect must lie inside the frame (0…1, upper-left origin)", field: "rect")
            }
            return try command(p, session, .regionOfInterest(rect)) { _ in ["ok": true] }
        case .trackingSelect:
            if let x = try p.optionalNumber(P.selectX) {
                let y = try p.number(P.selectY)
                return try command(p, session, .selectAt(x: x, y: y), answer: Self.selected)
            }
            return try command(p, session, .select(ids: try p.ids()), answer: Self.selected)
        case .cameraSet:
            guard let camera = try p.camera() else { throw .invalidParams("camera is required", field: "camera") }
            return try command(p, session, .camera(camera)) { _ in ["ok": true] }
        case .leaseRelease:
            let hosts = stands.all
            guard let first = hosts.first else { return .value(["ok": true]) }
            let released = hosts.map { $0.submit(.releaseLease, from: session.client) }
            return .later(EventLoopFuture.whenAllComplete(released, on: first.loop).map { _ in ["ok": true] })
        case .standsAttach:
            let endpoint = try p.device()
            let driverName = try p.optionalString("driver") ?? DriverTable.defaultDriver(for: endpoint.linkKind).name
            let driver: any StandDriver
            do {
                let definition = try DriverTable.definition(driverName)
                guard definition.links.contains(endpoint.linkKind) else {
                    throw DriverFailure("the \(definition.name) driver does not run over \(endpoint.linkKind.rawValue) links")
                }
                driver = try definition.make(endpoint.driverOptions, heartbeatTimeoutMs: heartbeatTimeoutMs)
            } catch {
                throw .invalidParameter("\(error)", field: "driver")
            }
            guard stands.add(endpoint: endpoint, driver: driver) else {
                throw .invalidParameter("\(endpoint) is already attached (or another link on its device is)", field: "device")
            }
            return .value(["endpoint": JSONValue("\(endpoint)")])
        case .defaultsGet:
            return .value(DefaultsStore.json(engineSettings.current.defaults))
        case .defaultsSet:
            let reset = try p.optionalBool("reset") == true
            // Checked now; applied over the defaults in force when the change runs (after any before it).
            _ = try DefaultsStore.defaults(from: p, over: StandDefaults())
            let (stands, store, logger) = (stands, defaultsStore, logger)
            let stored = store.set(in: engineSettings) { inForce throws(RPCError) in
                try DefaultsStore.defaults(from: p, over: reset ? StandDefaults() : inForce)
            }
            return .later(stored.map { defaults in
                for s in stands.all { s.setDefaults(defaults) }
                logger.notice("the stands' defaults are now \(DefaultsStore.json(defaults)) (stored in \(store.path))")
                return DefaultsStore.json(defaults)
            })
        case .presetSave, .presetRecall, .presetList, .presetDelete:
            return try presets.call(method, p, session: session)
        case .trackingLostPolicy, .sweepStart, .sweepStop, .tourStart, .tourStop:
            return try pans.call(method, p, session: session)
        case .standsDetach:
            let endpoint = try p.device()
            let stands = self.stands
            let promise = loop.makePromise(of: JSONValue.self)
            promise.completeWithTask {
                guard await stands.remove(endpoint: endpoint, because: "the stand was detached") else { throw RPCError.invalidParameter("\(endpoint) is not attached", field: "device") }
                return ["ok": true]
            }
            return .later(promise.futureResult)
        }
    }

    /// A command for the stand the params name (or the only connected one); `answer` turns the
    /// engine's reply into the result.
    private func command(_ p: Params, _ session: ClientSession, _ command: EngineCommand,
                         answer: @escaping @Sendable (CommandResult) throws(RPCError) -> JSONValue) throws(RPCError) -> Answer {
        let host = try find(p)
        let force = try p.optionalBool(APIParam.force.name) ?? false
        return .later(host.submit(command, from: session.client, force: force).flatMapThrowing { try answer($0) })
    }

    private func find(_ p: Params) throws(RPCError) -> StandHost {
        let id = try p.optionalString(APIParam.stand.name)
        do {
            return try stands.find(id)
        } catch {
            throw RPCError(error)
        }
    }

    /// Methods that change the daemon itself: root or the daemon's own user only.
    private func requireAdmin(_ session: ClientSession, _ method: String) throws(RPCError) {
        guard let peer = session.peer else { throw .permissionDenied("\(method): the caller's credentials are unknown", uid: nil) }
        guard peer.uid == 0 || peer.uid == daemonUID else {
            throw .permissionDenied("\(method) is for root or the daemon's user (uid \(daemonUID)); you are uid \(peer.uid)", uid: peer.uid)
        }
    }

    private static func motionID(_ result: CommandResult) throws(RPCError) -> JSONValue {
        guard case .motion(let id) = result else { throw .internal("no motion id") }
        return ["id": JSONValue(id.rawValue)]
    }

    private static func selected(_ result: CommandResult) throws(RPCError) -> JSONValue {
        guard case .selected(let ids) = result else { throw .internal("no selection") }
        return ["ids": .array(ids.map { JSONValue.string($0) })]
    }

    private func describe(_ host: StandHost) -> EventLoopFuture<JSONValue> {
        let endpoint = "\(host.endpoint)"
        return host.read { $0.description.json(endpoint: endpoint) }
    }

    private static func batteries(_ engine: StandEngine) -> JSONValue {
        .array(engine.batteryReports.map { $0.json(stand: engine.standID ?? "") })
    }

    /// Who controls the stand and what is in force: what a client can read back of what it set.
    private static func control(_ engine: StandEngine) -> JSONValue {
        let framing = engine.tracking.pipeline.framer
        let roi = framing.regionOfInterest
        var limits: [String: JSONValue] = [:]
        for l in engine.effectiveLimits ?? [] {
            limits[l.axis.description] = ["min": l.min.isFinite ? JSONValue(l.min) : .null, "max": l.max.isFinite ? JSONValue(l.max) : .null,
                                          "max_speed": JSONValue(shortest: l.maxSpeed)]
        }
        let camera = engine.tracking.camera
        return ["lease_holder_client": engine.leaseHolder.map { JSONValue($0.id) } ?? .null,
                "lease_holder_pid": engine.leaseHolder?.pid.map { JSONValue($0) } ?? .null,
                "stopped": JSONValue(engine.stoppedBy != nil),
                "stopped_by_pid": engine.stoppedBy?.pid.map { JSONValue($0) } ?? .null,
                "framing": JSONValue(framing.mode.name), "shot": engine.tracking.shot.map { JSONValue($0.rawValue) } ?? .null,
                "roi": roi.json, "limits": .object(limits),
                "camera": ["horizontal_fov": JSONValue(camera.horizontalFieldOfView), "vertical_fov": JSONValue(camera.verticalFieldOfView)],
                "motion": engine.motionState.map { JSONValue($0.activity.name) } ?? .null,
                "lost_policy": engine.lostPolicy.map(\.json) ?? .null, "pan": engine.runningPan.map { $0.pan.json(stop: $0.stop) } ?? .null]
    }

    /// Adds topics, then sends a snapshot of each as notifications before any change (from each
    /// stand's loop, so the snapshot is the stand's state at one instant).
    private func subscribe(_ p: Params, session: ClientSession) throws(RPCError) -> Answer {
        let topics = try p.topics()
        let rate = try p.optionalNumber(APIParam.motionRate)
        if rate == 0 { throw .invalidParams("motion_rate must be in (0, 1000] Hz", field: "motion_rate") }
        hub.subscribe(client: session.id, topics: topics, motionRate: rate)
        let (hub, client) = (self.hub, session.id)
        for host in stands.all {
            let endpoint = "\(host.endpoint)"
            host.read { engine in
                let stand = engine.standID ?? ""
                if topics.contains(.stands) { hub.send(client: client, method: "stand.state", params: engine.description.json(endpoint: endpoint)) }
                if topics.contains(.battery) {
                    for b in engine.batteryReports { hub.send(client: client, method: "battery.state", params: b.json(stand: stand)) }
                }
                if topics.contains(.motion), let m = engine.motionSnapshot {
                    hub.send(client: client, method: "motion.state", params: m.json(stand: stand))
                }
            }.whenFailure { _ in }
        }
        return .value(["topics": .array(hub.topics(of: session.id).map { JSONValue.string($0) })])
    }
}

extension FramingMode {
    var name: String {
        switch self {
        case .automatic: "automatic"
        case .center: "center"
        case .left: "left"
        case .right: "right"
        }
    }
}

extension MotionState.Activity {
    var name: String {
        switch self {
        case .idle: "idle"
        case .velocity: "velocity"
        case .orientation: "orientation"
        case .animation: "animation"
        }
    }
}

