#if canImport(Glibc)
import Glibc
#endif
import DockCore
import DockDrivers
import DockIO
import DockProtocol
import Foundation
import Logging
import NIOCore

/// The JSON-RPC methods (protocol/API.md). Parses a request line, runs the method, returns the reply
/// (nil for notifications, which get no reply).
struct APIMethods: Sendable {
    static let apiVersion = (major: 1, minor: 0)
    static let daemonVersion = "0.1.0"

    let stands: StandRegistry
    let hub: EventHub
    let clock: DaemonClock
    let settings: SessionSettings
    let logger: Logger
    /// The daemon's own uid: admin methods are for it and for root.
    let daemonUID = UInt32(getuid())

    func handle(line: ByteBuffer, session: ClientSession) async -> JSONValue? {
        let request: JSONRPCRequest
        switch JSONRPCRequest.parse(line.readableBytesView) {
        case .success(let parsed): request = parsed
        case .failure(let failure): return APIServer.errorReply(id: failure.id, failure.error)
        }
        do {
            let result = try await call(request.method, Params(request.params), session: session)
            return request.id.map { ["jsonrpc": "2.0", "id": $0, "result": result] }
        } catch {
            return request.id.map { APIServer.errorReply(id: $0, error) }
        }
    }

    /// A client disconnected (or was dropped): its leases end and what it changed reverts.
    func clientGone(_ id: Int) async {
        for s in await stands.all { await s.release(client: id) }
    }

    /// The stand a controlling method acts on, leased to this client (busy if another holds it).
    private func controlled(_ p: Params, _ session: ClientSession) async throws(RPCError) -> StandSession {
        let s = try await stands.find(try p.optionalString("stand"))
        try await s.acquire(client: session.id, pid: session.peer?.pid, force: try p.optionalBool("force") ?? false)
        return s
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
            return ["daemon": "dockd", "version": JSONValue(Self.daemonVersion),
                    "api": ["major": JSONValue(Self.apiVersion.major), "minor": JSONValue(Self.apiVersion.minor)],
                    "protocol": JSONValue("\(ProtocolVersion.major).\(ProtocolVersion.minor)")]
        case "dockd.stats":
            return ["clients": JSONValue(await hub.clientCount), "dropped_subscribers": JSONValue(await hub.droppedSubscribers),
                    "stands": JSONValue(await stands.all.count)]
        case "rpc.discover":
            return try await OpenRPCDocument.shared.get()
        case "stands.list":
            var list: [JSONValue] = []
            for s in await stands.all { list.append(await s.describe()) }
            return .array(list)
        case "stand.get":
            let s = try await stands.find(try p.optionalString("stand"))
            var d = await s.describe().object ?? [:]
            d["counters"] = await s.counterJSON()
            d["batteries"] = await s.batteryList()
            return .object(d)
        case "battery.get":
            return try await stands.find(try p.optionalString("stand")).batteryList()
        case "subscribe":
            return try await subscribe(p, session: session)
        case "unsubscribe":
            let topics = try p.topics()
            await hub.unsubscribe(client: session.id, topics: topics)
            return ["topics": .array(await hub.topics(of: session.id).sorted().map { JSONValue.string($0) })]
        case "tracking.set":
            let s = try await controlled(p, session)
            await s.setSystemTracking(try p.bool("enabled"))
            return ["enabled": JSONValue(try p.bool("enabled"))]
        case "motion.velocity":
            let s = try await controlled(p, session)
            let rates = try p.axes()
            guard !rates.isEmpty else { throw .invalidParams("give at least one of yaw, pitch, roll in rad/s") }
            try await s.velocity(rates)
            return ["ok": true]
        case "motion.orient":
            let s = try await controlled(p, session)
            let target = try p.axes()
            guard !target.isEmpty else { throw .invalidParams("give at least one of yaw, pitch, roll in rad") }
            let id = try await s.orient(target, relative: try p.optionalBool("relative") ?? false, duration: try p.optionalNumber("duration"))
            return ["id": JSONValue(id.rawValue)]
        case "motion.stop":
            try await stands.find(try p.optionalString("stand")).stop()
            return ["ok": true]
        case "motion.cancel":
            let s = try await controlled(p, session)
            let id = try p.number("id")
            guard id >= 1, id == id.rounded() else { throw .invalidParams("id must be a motion id") }
            try await s.cancel(MotionID(rawValue: UInt64(id)))
            return ["ok": true]
        case "motion.limits":
            let s = try await controlled(p, session)
            try await s.setLimits(try p.limits())
            return ["ok": true]
        case "animation.play":
            let s = try await controlled(p, session)
            let id = try await s.play(try p.animation())
            return ["id": JSONValue(id.rawValue)]
        case "tracking.observe":
            let s = try await stands.find(try p.optionalString("stand"))
            let detections = try p.detections()
            let capture = try p.captureTime(daemonNow: clock.now())
            return try await s.observe(detections, captureTime: capture, camera: try p.camera(), client: session.id, pid: session.peer?.pid)
        case "tracking.get":
            return try await stands.find(try p.optionalString("stand")).trackingState()
        case "tracking.framing":
            let s = try await stands.find(try p.optionalString("stand"))
            try await s.setFraming(try p.framingMode(), client: session.id, pid: session.peer?.pid, force: try p.optionalBool("force") ?? false)
            return ["ok": true]
        case "tracking.roi":
            let s = try await stands.find(try p.optionalString("stand"))
            let rect = try p.rect("rect")
            guard rect.x >= 0, rect.y >= 0, rect.maxX <= 1 + 1e-9, rect.maxY <= 1 + 1e-9 else {
                throw .invalidParameter("rect must lie inside the frame (0…1, upper-left origin)")
            }
            try await s.setRegionOfInterest(rect, client: session.id, pid: session.peer?.pid, force: try p.optionalBool("force") ?? false)
            return ["ok": true]
        case "tracking.select":
            let s = try await stands.find(try p.optionalString("stand"))
            let force = try p.optionalBool("force") ?? false
            if let x = try p.optionalNumber("x") {
                let y = try p.number("y")
                guard (0...1).contains(x), (0...1).contains(y) else { throw .invalidParameter("x and y are normalized, upper-left origin") }
                let id = try await s.select(atX: x, y: y, client: session.id, pid: session.peer?.pid, force: force)
                return ["ids": [JSONValue(id)]]
            }
            guard let list = p.fields["ids"]?.array else { throw .invalidParams("give ids (a list; empty = automatic) or x and y") }
            var ids: [String] = []
            for v in list {
                guard let id = v.string else { throw .invalidParams("ids are strings") }
                ids.append(id)
            }
            try await s.select(ids: ids, client: session.id, pid: session.peer?.pid, force: force)
            return ["ids": .array(ids.map { JSONValue.string($0) })]
        case "camera.set":
            let s = try await stands.find(try p.optionalString("stand"))
            guard let camera = try p.camera() else { throw .invalidParams("camera is required") }
            await s.setCamera(camera)
            return ["ok": true]
        case "lease.release":
            for s in await stands.all { await s.release(client: session.id) }
            return ["ok": true]
        case "stands.attach":
            try requireAdmin(session, method)
            guard let device = try p.optionalString("device"), !device.isEmpty else { throw .invalidParams("device is required (a tty path or unix:PATH)") }
            let endpoint = StandEndpoint(parsing: device)
            let driver: any StandDriver
            do {
                driver = try Drivers.make(try p.optionalString("driver") ?? "native", options: [:], settings: settings)
            } catch {
                throw .invalidParameter("\(error)")
            }
            guard await stands.add(endpoint: endpoint, driver: driver) else { throw .invalidParameter("\(endpoint) is already attached") }
            return ["endpoint": JSONValue("\(endpoint)")]
        case "stands.detach":
            try requireAdmin(session, method)
            guard let device = try p.optionalString("device"), !device.isEmpty else { throw .invalidParams("device is required") }
            guard await stands.remove(endpoint: StandEndpoint(parsing: device)) else { throw .invalidParameter("\(device) is not attached") }
            return ["ok": true]
        default:
            throw .methodNotFound(method)
        }
    }

    /// Adds topics, then sends a snapshot of each as notifications before any change.
    private func subscribe(_ p: Params, session: ClientSession) async throws(RPCError) -> JSONValue {
        let topics = try p.topics()
        let rate = try p.optionalNumber("motion_rate")
        if let rate, !(rate > 0 && rate <= 1000) { throw .invalidParams("motion_rate must be in (0, 1000] Hz") }
        await hub.subscribe(client: session.id, topics: topics, motionRate: rate)
        for s in await stands.all {
            if topics.contains("stands") { await hub.send(client: session.id, method: "stand.state", params: await s.describe()) }
            if topics.contains("battery") {
                for b in await s.batteryList().array ?? [] { await hub.send(client: session.id, method: "battery.state", params: b) }
            }
            if topics.contains("motion"), let m = await s.motionSnapshot() {
                await hub.send(client: session.id, method: "motion.state", params: m)
            }
        }
        return ["topics": .array(await hub.topics(of: session.id).sorted().map { JSONValue.string($0) })]
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
