import DockAPI
import DockCore
import DockIO
import DockJSON
import DockProtocol

/// Typed access to a request's params, with JSON-RPC errors that name the field (`data.field`, a
/// path like `axes.pitch.min` or `observations[2].rect.x`). Every number is checked to be finite
/// and within a range before it reaches a stand's engine: the engine and the motion core then never
/// see a value no client could mean (1e300 rad, a motion id of 1e20).
struct Params: Sendable {
    let fields: [String: JSONValue]
    /// Where these params are in the request (empty at the top).
    let path: String

    init(_ fields: [String: JSONValue], path: String = "") {
        self.fields = fields
        self.path = path
    }

    /// The member `key`, which must be an object (a missing or null one: nil).
    func optionalObject(_ key: String) throws(RPCError) -> Params? {
        guard let v = fields[key], v != .null else { return nil }
        guard case .object(let o) = v else { throw .invalidParams("\(field(key)) must be an object, not \(v.typeName)", field: field(key)) }
        return Params(o, path: field(key))
    }

    func object(_ key: String) throws(RPCError) -> Params {
        guard let p = try optionalObject(key) else { throw .invalidParams("\(field(key)) is required", field: field(key)) }
        return p
    }

    /// Element `index` of a list, which must be an object.
    static func element(_ value: JSONValue, of list: String, at index: Int) throws(RPCError) -> Params {
        let name = "\(list)[\(index)]"
        guard case .object(let o) = value else { throw .invalidParams("\(name) must be an object, not \(value.typeName)", field: name) }
        return Params(o, path: name)
    }

    /// The declared params that are given, checked against their kinds before the method reads
    /// them: numbers finite and in range, booleans, strings. Lists, objects and choices are checked
    /// by the method's reader, whose message says what they take.
    func check(_ declared: [APIParam]) throws(RPCError) {
        for param in declared {
            switch param.kind {
            case .number, .integer: _ = try optionalNumber(param)
            case .boolean: _ = try optionalBool(param.name)
            case .string: _ = try optionalString(param.name)
            case .choice, .list, .object: break
            }
        }
    }

    /// A declared number param, or nil when omitted.
    func optionalNumber(_ param: APIParam) throws(RPCError) -> Double? {
        switch param.kind {
        case .number(let range, let unit): try optionalNumber(param.name, in: range, unit: unit)
        case .integer(let range): try optionalNumber(param.name, in: range, unit: "")
        default: throw .internal("\(param.name) is not declared as a number")
        }
    }

    func number(_ param: APIParam) throws(RPCError) -> Double {
        guard let n = try optionalNumber(param) else { throw .invalidParams("\(field(param.name)) is required", field: field(param.name)) }
        return n
    }

    func field(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func optionalString(_ key: String) throws(RPCError) -> String? {
        guard let v = fields[key], v != .null else { return nil }
        guard let s = v.string else { throw .invalidParams("\(field(key)) must be a string, not \(v.typeName)", field: field(key)) }
        return s
    }

    /// A finite number within `range` (the unit names it in the message), or nil when omitted.
    func optionalNumber(_ key: String, in range: ClosedRange<Double>, unit: String) throws(RPCError) -> Double? {
        guard let v = fields[key], v != .null else { return nil }
        guard let n = v.double else { throw .invalidParams("\(field(key)) must be a number, not \(v.typeName)", field: field(key)) }
        guard n.isFinite, range.contains(n) else {
            let unit = unit.isEmpty ? "" : " \(unit)"
            throw .invalidParams("\(field(key)) must be a number in \(Self.text(range.lowerBound))…\(Self.text(range.upperBound))\(unit)", field: field(key))
        }
        return n
    }

    func number(_ key: String, in range: ClosedRange<Double>, unit: String) throws(RPCError) -> Double {
        guard let n = try optionalNumber(key, in: range, unit: unit) else { throw .invalidParams("\(field(key)) is required", field: field(key)) }
        return n
    }

    func optionalBool(_ key: String) throws(RPCError) -> Bool? {
        guard let v = fields[key], v != .null else { return nil }
        guard let b = v.bool else { throw .invalidParams("\(field(key)) must be true or false, not \(v.typeName)", field: field(key)) }
        return b
    }

    func bool(_ key: String) throws(RPCError) -> Bool {
        guard let b = try optionalBool(key) else { throw .invalidParams("\(field(key)) is required", field: field(key)) }
        return b
    }

    func optionalList(_ key: String) throws(RPCError) -> [JSONValue]? {
        guard let v = fields[key], v != .null else { return nil }
        guard let a = v.array else { throw .invalidParams("\(field(key)) must be a list, not \(v.typeName)", field: field(key)) }
        return a
    }

    /// `yaw`, `pitch`, `roll`, `zoom` numbers, any subset, as declared (APIParam.positions or .rates).
    func axes(_ declared: [APIParam]) throws(RPCError) -> [Axis: Double] {
        var result: [Axis: Double] = [:]
        for param in declared {
            if let axis = Axis(name: param.name), let v = try optionalNumber(param) { result[axis] = v }
        }
        return result
    }

    func topics() throws(RPCError) -> Set<EventHub.Topic> {
        guard let list = try optionalList("topics"), !list.isEmpty else { throw .invalidParams("topics must be a non-empty list", field: "topics") }
        var topics = Set<EventHub.Topic>()
        for (i, t) in list.enumerated() {
            guard let name = t.string, let topic = EventHub.Topic(name: name) else {
                let names = EventHub.Topic.allCases.map(\.name).sorted().joined(separator: ", ")
                throw .invalidParams("topics[\(i)] is not a topic; topics are \(names)", field: "topics[\(i)]")
            }
            topics.insert(topic)
        }
        return topics
    }

    /// `{"yaw": {"min": …, "max": …, "max_speed": …}, …}`
    func limits() throws(RPCError) -> [Axis: LimitRequest] {
        let axes = try object("axes")
        guard !axes.fields.isEmpty else { throw .invalidParams("axes must name at least one axis", field: "axes") }
        var result: [Axis: LimitRequest] = [:]
        for name in axes.fields.keys.sorted() {
            guard let axis = Axis(name: name) else { throw .invalidParameter("unknown axis \(name); axes are yaw, pitch, roll", field: axes.field(name)) }
            let p = try axes.object(name)
            result[axis] = LimitRequest(min: try p.optionalNumber("min", in: -APIParam.angleLimit...APIParam.angleLimit, unit: "rad"),
                                        max: try p.optionalNumber("max", in: -APIParam.angleLimit...APIParam.angleLimit, unit: "rad"),
                                        maxSpeed: try p.optionalNumber("max_speed", in: 0...APIParam.rateLimit, unit: "rad/s"))
        }
        return result
    }

    /// `{"name": "yes"}` or `{"keyframes": [{"time": 0.5, "pitch": 0.1, "yaw": 0}, …], "relative": true}`
    func animation() throws(RPCError) -> Animation {
        if let name = try optionalString("name") {
            guard let builtIn = Animation.BuiltIn(rawValue: name) else {
                throw .invalidParameter("unknown animation '\(name)'; built-ins are yes, no, wakeup, kapow", field: "name")
            }
            return .builtIn(builtIn)
        }
        guard let frames = try optionalList("keyframes"), !frames.isEmpty else { throw .invalidParams("give name or keyframes", field: "keyframes") }
        // The engine refuses more than 256; a 1 MiB line could carry tens of thousands.
        guard frames.count <= 256 else { throw .invalidParameter("at most 256 keyframes", field: "keyframes") }
        var keyframes: [Keyframe] = []
        for (i, f) in frames.enumerated() {
            let p = try Self.element(f, of: "keyframes", at: i)
            let angle = -APIParam.angleLimit...APIParam.angleLimit
            keyframes.append(Keyframe(time: try p.number("time", in: 0...3600, unit: "s"),
                                      pitch: try p.optionalNumber("pitch", in: angle, unit: "rad") ?? 0,
                                      yaw: try p.optionalNumber("yaw", in: angle, unit: "rad") ?? 0,
                                      roll: try p.optionalNumber("roll", in: angle, unit: "rad")))
        }
        return .custom(keyframes, positioning: try optionalBool("relative") ?? true ? .relative : .absolute)
    }

    /// `ids`: a list of subject ids (strings).
    func ids() throws(RPCError) -> [String] {
        guard let list = try optionalList("ids") else { throw .invalidParams("give ids (a list; empty = automatic) or x and y", field: "ids") }
        var ids: [String] = []
        for (i, v) in list.enumerated() {
            guard let id = v.string else { throw .invalidParams("ids[\(i)] must be a string, not \(v.typeName)", field: "ids[\(i)]") }
            ids.append(id)
        }
        return ids
    }

    /// `device` of `stands.attach` / `stands.detach`: an absolute tty path with an optional
    /// `@baud`, `unix:/PATH`, `rfcomm:AA:BB:CC:DD:EE:FF[/channel]`, `udp:HOST:PORT` or `tcp:HOST:PORT`.
    func device() throws(RPCError) -> StandEndpoint {
        guard let text = try optionalString("device"), !text.isEmpty else {
            throw .invalidParams("device is required (a tty path, unix:PATH, rfcomm:ADDRESS, udp:HOST:PORT, tcp:HOST:PORT, video:PATH or onvif://[USER@]HOST[:PORT][/PROFILE])", field: "device")
        }
        let endpoint = StandEndpoint(parsing: text)
        if text.hasPrefix("onvif:"), endpoint.linkKind != .onvif {
            // Not echoed: what was given may hold a password (user:password@host).
            throw .invalidParams("device: onvif:// takes [user@]host[:port][/profile] and never a password (dockd reads it from a file)", field: "device")
        }
        if let problem = endpoint.problem(written: text) { throw .invalidParams("device '\(text)': \(problem)", field: "device") }
        return endpoint
    }

    private static func text(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 9_007_199_254_740_992 ? String(Int64(x)) : "\(x)"
    }
}
