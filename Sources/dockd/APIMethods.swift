#if canImport(Glibc)
import Glibc
#endif
import DockCore
import DockDrivers
import DockIO
import DockProtocol
import DockTracking
import DockVersion
import Foundation
import Logging
import NIOCore
import StandEngine

/// The JSON-RPC methods (protocol/API.md). Parses a request line, runs the method, returns the reply
/// (nil for notifications, which get no reply).
struct APIMethods: Sendable {
    static let apiVersion = (major: 1, minor: 1)

    let stands: StandRegistry
    let hub: EventHub
    let clock: DaemonClock
    let heartbeatTimeoutMs: UInt16
    /// What new stands start with; `defaults.set` changes their defaults.
    let engineSettings: Shared<EngineSettings>
    let defaultsStore: DefaultsStore
    let logger: Logger
    /// The daemon's own uid: admin methods are for it and for root.
    let daemonUID = UInt32(getuid())

    func handle(line: ByteBuffer, session: ClientSession) async -> JSONValue? {
        let request: JSONRPCRequest
        switch JSONRPCRequest.parse(line.readableBytesView) {
        case .success(let parsed): request = parsed
        case .failure(let failure): return failure.isNotification ? nil : APIServer.errorReply(id: failure.id, failure.error)
        }
        do {
            let result = try await call(request.method, Params(request.params), session: session)
            return request.id.map { ["jsonrpc": "2.0", "id": $0, "result": result] }
        } catch {
            return request.id.map { APIServer.errorReply(id: $0, error) }
        }
    }

    /// A client disconnected (or was dropped): its leases end and what it changed reverts.
    func clientGone(_ id: Int) {
        for s in stands.all { s.clientGone(id) }
    }

    /// A command for the stand the params name (or the only connected one).
    private func command(_ p: Params, _ session: ClientSession, _ command: EngineCommand) async throws(RPCError) -> CommandResult {
        let host = try find(p)
        let force = try p.optionalBool("force") ?? false
        do {
            return try await host.command(command, from: session.client, force: force)
        } catch {
            throw RPCError(error)
        }
    }

    private func find(_ p: Params) throws(RPCError) -> StandHost {
        let id = try p.optionalString("stand")
        do {
            return try stands.find(id)
        } catch {
            throw RPCError(error)
        }
    }

    /// Methods that change the daemon itself: root or the daemon's own user only.
    private func requireAdmin(_ session: ClientSession, _ method: String) throws(RPCError) {
        guard let peer = session.peer else { throw .permissionDenied("\(method): the caller's credentials are unknown") }
        guard peer.uid == 0 || peer.uid == daemonUID else {
            throw .permissionDenied("\(method) is for root or the daemon's user (uid \(daemonUID)); you are uid \(peer.uid)")
        }
    }

    private func call(_ method: String, _ p: Params, session: ClientSession) async throws(RPCError) -> JSONValue {
        switch method {
        case "dockd.version":
            return ["daemon": "dockd", "version": JSONValue(DockVersion.string),
                    "api": ["major": JSONValue(Self.apiVersion.major), "minor": JSONValue(Self.apiVersion.minor)],
                    "protocol": JSONValue("\(ProtocolVersion.major).\(ProtocolVersion.minor)")]
        case "dockd.stats":
            return ["clients": JSONValue(hub.clientCount), "dropped_subscribers": JSONValue(hub.droppedSubscribers),
                    "stands": JSONValue(stands.all.count)]
        case "rpc.discover":
            return try await OpenRPCDocument.shared.get()
        case "stands.list":
            var list: [JSONValue] = []
            for s in stands.all { list.append(await describe(s)) }
            return .array(list)
        case "stand.get":
            let s = try find(p)
            var d = await describe(s).object ?? [:]
            d["counters"] = await s.read { $0.driverCounters.json(engine: $0.counters) }
            d["batteries"] = await batteries(s)
            d["control"] = await s.read { engine in Self.control(engine) }
            d["last_fault"] = await s.read { engine in
                engine.lastFault.map { f in
                    ["source": JSONValue(f.report.source.rawValue), "code": JSONValue(f.report.code), "severity": JSONValue(f.report.severity),
                     "text": JSONValue(f.report.text), "time": JSONValue(f.time)]
                } ?? .null
            }
            return .object(d)
        case "battery.get":
            return await batteries(try find(p))
        case "subscribe":
            return try await subscribe(p, session: session)
        case "unsubscribe":
            let topics = try p.topics()
            hub.unsubscribe(client: session.id, topics: topics)
            return ["topics": .array(hub.topics(of: session.id).sorted().map { JSONValue.string($0) })]
        case "tracking.set":
            let enabled = try p.bool("enabled")
            _ = try await command(p, session, .setTracking(enabled))
            return ["enabled": JSONValue(enabled)]
        case "motion.velocity":
            let rates = try p.axes()
            guard !rates.isEmpty else { throw .invalidParams("give at least one of yaw, pitch, roll in rad/s") }
            _ = try await command(p, session, .velocity(rates))
            return ["ok": true]
        case "motion.orient":
            let target = try p.axes()
            guard !target.isEmpty else { throw .invalidParams("give at least one of yaw, pitch, roll in rad") }
            let relative = try p.optionalBool("relative") ?? false
            let duration = try p.optionalNumber("duration")
            if let duration, !(0...3600).contains(duration) { throw .invalidParams("duration must be 0…3600 s", field: "duration") }
            return try motionID(await command(p, session, .orient(target, relative: relative, duration: duration)))
        case "motion.stop":
            guard case .stopped(let confirmed) = try await command(p, session, .stop) else { return ["ok": true] }
            return ["ok": true, "confirmed": JSONValue(confirmed)]
        case "motion.resume":
            _ = try await command(p, session, .resume)
            return ["ok": true]
        case "motion.cancel":
            let id = try p.number("id")
            guard id >= 1, id <= 9_007_199_254_740_991, id == id.rounded() else { throw .invalidParams("id must be a motion id", field: "id") }
            _ = try await command(p, session, .cancel(MotionID(rawValue: UInt64(id))))
            return ["ok": true]
        case "motion.limits":
            _ = try await command(p, session, .limits(try p.limits()))
            return ["ok": true]
        case "animation.play":
            return try motionID(await command(p, session, .play(try p.animation())))
        case "tracking.observe":
            let frame = ObservedFrame(detections: try p.detections(), captureTime: try p.captureTime(daemonNow: clock.now()), camera: try p.camera())
            guard case .observed(let subjects, let inFrame) = try await command(p, session, .observe(frame)) else { return ["ok": true] }
            return ["subjects": JSONValue(subjects), "in_frame": JSONValue(inFrame)]
        case "tracking.get":
            let now = clock.now()
            let stand = try find(p)
            return await stand.read { $0.trackingReport(at: now).json(stand: $0.standID ?? "") }
        case "tracking.framing":
            _ = try await command(p, session, .framing(try p.framingMode()))
            return ["ok": true]
        case "tracking.roi":
            let rect = try p.rect("rect")
            guard rect.x >= 0, rect.y >= 0, rect.maxX <= 1 + 1e-9, rect.maxY <= 1 + 1e-9 else {
                throw .invalidParameter("rect must lie inside the frame (0…1, upper-left origin)")
            }
            _ = try await command(p, session, .regionOfInterest(rect))
            return ["ok": true]
        case "tracking.select":
            if let x = try p.optionalNumber("x") {
                let y = try p.number("y")
                guard (0...1).contains(x), (0...1).contains(y) else { throw .invalidParameter("x and y are normalized, upper-left origin") }
                return try selected(await command(p, session, .selectAt(x: x, y: y)))
            }
            guard let list = p.fields["ids"]?.array else { throw .invalidParams("give ids (a list; empty = automatic) or x and y") }
            var ids: [String] = []
            for v in list {
                guard let id = v.string else { throw .invalidParams("ids are strings", field: "ids") }
                ids.append(id)
            }
            return try selected(await command(p, session, .select(ids: ids)))
        case "camera.set":
            guard let camera = try p.camera() else { throw .invalidParams("camera is required", field: "camera") }
            _ = try await command(p, session, .camera(camera))
            return ["ok": true]
        case "lease.release":
            for s in stands.all { _ = try? await s.command(.releaseLease, from: session.client) }
            return ["ok": true]
        case "stands.attach":
            try requireAdmin(session, method)
            guard let device = try p.optionalString("device"), !device.isEmpty else { throw .invalidParams("device is required (a tty path or unix:PATH)") }
            let endpoint = StandEndpoint(parsing: device)
            let driver: any StandDriver
            do {
                driver = try Drivers.make(try p.optionalString("driver") ?? "native", options: [:], heartbeatTimeoutMs: heartbeatTimeoutMs)
            } catch {
                throw .invalidParameter("\(error)")
            }
            guard stands.add(endpoint: endpoint, driver: driver) else { throw .invalidParameter("\(endpoint) is already attached") }
            return ["endpoint": JSONValue("\(endpoint)")]
        case "defaults.get":
            return DefaultsStore.json(engineSettings.current.defaults)
        case "defaults.set":
            try requireAdmin(session, method)
            let base = try p.optionalBool("reset") == true ? StandDefaults() : engineSettings.current.defaults
            let defaults = try DefaultsStore.defaults(from: p, over: base)
            try defaultsStore.save(defaults)
            var settings = engineSettings.current
            settings.defaults = defaults
            engineSettings.set(settings)
            for s in stands.all { s.setDefaults(defaults) }
            logger.notice("the stands' defaults are now \(DefaultsStore.json(defaults)) (stored in \(defaultsStore.path))")
            return DefaultsStore.json(defaults)
        case "stands.detach":
            try requireAdmin(session, method)
            guard let device = try p.optionalString("device"), !device.isEmpty else { throw .invalidParams("device is required") }
            guard await stands.remove(endpoint: StandEndpoint(parsing: device)) else { throw .invalidParameter("\(device) is not attached") }
            return ["ok": true]
        default:
            throw .methodNotFound(method)
        }
    }

    private func motionID(_ result: CommandResult) throws(RPCError) -> JSONValue {
        guard case .motion(let id) = result else { throw .internal("no motion id") }
        return ["id": JSONValue(id.rawValue)]
    }

    private func selected(_ result: CommandResult) throws(RPCError) -> JSONValue {
        guard case .selected(let ids) = result else { throw .internal("no selection") }
        return ["ids": .array(ids.map { JSONValue.string($0) })]
    }

    private func describe(_ host: StandHost) async -> JSONValue {
        let endpoint = "\(host.endpoint)"
        return await host.read { $0.description.json(endpoint: endpoint) }
    }

    private func batteries(_ host: StandHost) async -> JSONValue {
        await host.read { engine in .array(engine.batteryReports.map { $0.json(stand: engine.standID ?? "") }) }
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
                "framing": JSONValue(framing.mode.name), "roi": roi.json, "limits": .object(limits),
                "camera": ["horizontal_fov": JSONValue(camera.horizontalFieldOfView), "vertical_fov": JSONValue(camera.verticalFieldOfView)],
                "motion": engine.motionState.map { JSONValue($0.activity.name) } ?? .null]
    }

    /// Adds topics, then sends a snapshot of each as notifications before any change.
    private func subscribe(_ p: Params, session: ClientSession) async throws(RPCError) -> JSONValue {
        let topics = try p.topics()
        let rate = try p.optionalNumber("motion_rate")
        if let rate, !(rate > 0 && rate <= 1000) { throw .invalidParams("motion_rate must be in (0, 1000] Hz", field: "motion_rate") }
        hub.subscribe(client: session.id, topics: topics, motionRate: rate)
        for s in stands.all {
            if topics.contains("stands") { hub.send(client: session.id, method: "stand.state", params: await describe(s)) }
            if topics.contains("battery") {
                for b in await batteries(s).array ?? [] { hub.send(client: session.id, method: "battery.state", params: b) }
            }
            if topics.contains("motion"), let m = await s.read({ engine in engine.motionSnapshot.map { $0.json(stand: engine.standID ?? "") } }) {
                hub.send(client: session.id, method: "motion.state", params: m)
            }
        }
        return ["topics": .array(hub.topics(of: session.id).sorted().map { JSONValue.string($0) })]
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

/// Typed access to a request's params, with JSON-RPC errors that name the field.
struct Params: Sendable {
    let fields: [String: JSONValue]
    init(_ value: JSONValue) { fields = value.object ?? [:] }

    func optionalString(_ key: String) throws(RPCError) -> String? {
        guard let v = fields[key], v != .null else { return nil }
        guard let s = v.string else { throw .invalidParams("\(key) must be a string") }
        return s
    }
    func optionalNumber(_ key: String) throws(RPCError) -> Double? {
        guard let v = fields[key], v != .null else { return nil }
        guard let n = v.double, n.isFinite else { throw .invalidParams("\(key) must be a number") }
        return n
    }
    func number(_ key: String) throws(RPCError) -> Double {
        guard let n = try optionalNumber(key) else { throw .invalidParams("\(key) is required") }
        return n
    }
    func optionalBool(_ key: String) throws(RPCError) -> Bool? {
        guard let v = fields[key], v != .null else { return nil }
        guard let b = v.bool else { throw .invalidParams("\(key) must be true or false") }
        return b
    }
    func bool(_ key: String) throws(RPCError) -> Bool {
        guard let b = try optionalBool(key) else { throw .invalidParams("\(key) is required") }
        return b
    }

    /// `yaw`, `pitch`, `roll` numbers, any subset.
    func axes() throws(RPCError) -> [Axis: Double] {
        var result: [Axis: Double] = [:]
        for axis in Axis.allCases { if let v = try optionalNumber(axis.description) { result[axis] = v } }
        return result
    }

    func topics() throws(RPCError) -> Set<String> {
        guard let list = fields["topics"]?.array, !list.isEmpty else { throw .invalidParams("topics must be a non-empty list") }
        var topics = Set<String>()
        for t in list {
            guard let name = t.string, EventHub.topics.contains(name) else {
                throw .invalidParams("unknown topic \(t); topics are \(EventHub.topics.sorted().joined(separator: ", "))")
            }
            topics.insert(name)
        }
        return topics
    }

    /// `{"yaw": {"min": …, "max": …, "max_speed": …}, …}`
    func limits() throws(RPCError) -> [Axis: LimitRequest] {
        guard let object = fields["axes"]?.object, !object.isEmpty else { throw .invalidParams("axes must be an object of per-axis limits") }
        var result: [Axis: LimitRequest] = [:]
        for (name, value) in object {
            guard let axis = Axis(name: name) else { throw .invalidParameter("unknown axis \(name)") }
            let p = Params(value)
            result[axis] = LimitRequest(min: try p.optionalNumber("min"), max: try p.optionalNumber("max"),
                                        maxSpeed: try p.optionalNumber("max_speed"))
        }
        return result
    }

    /// `{"name": "yes"}` or `{"keyframes": [{"time": 0.5, "pitch": 0.1, "yaw": 0}, …], "relative": true}`
    func animation() throws(RPCError) -> Animation {
        if let name = try optionalString("name") {
            guard let builtIn = Animation.BuiltIn(rawValue: name) else {
                throw .invalidParameter("unknown animation '\(name)'; built-ins are yes, no, wakeup, kapow")
            }
            return .builtIn(builtIn)
        }
        guard let frames = fields["keyframes"]?.array, !frames.isEmpty else { throw .invalidParams("give name or keyframes") }
        var keyframes: [Keyframe] = []
        for f in frames {
            let p = Params(f)
            keyframes.append(Keyframe(time: try p.number("time"), pitch: try p.optionalNumber("pitch") ?? 0,
                                      yaw: try p.optionalNumber("yaw") ?? 0, roll: try p.optionalNumber("roll")))
        }
        return .custom(keyframes, positioning: try optionalBool("relative") ?? true ? .relative : .absolute)
    }
}
