import DockAPI
import DockJSON
import StandEngine

/// `tracking.lost_policy`, `sweep.start`, `tour.start`, `sweep.stop`, `tour.stop` (protocol/API.md):
/// what a stand does once its subject is gone, and its panoramas and tours of presets. The presets
/// they name are looked up here (the store is the daemon's) and go to the engine as poses.
struct PanMethods: Sendable {
    let stands: StandRegistry
    let store: PresetStore

    /// `after` and `search_seconds` when omitted, s.
    static let defaultAfter = 3.0
    static let defaultSearchSeconds = 10.0
    /// A tour visits at most this many stops (a stand keeps at most 100 presets).
    static let maxStops = 100

    func call(_ method: APIMethod, _ p: Params, session: ClientSession) throws(RPCError) -> APIMethods.Answer {
        let named = try p.optionalString(APIParam.stand.name)
        let host: StandHost
        do {
            host = try stands.find(named)
        } catch {
            throw RPCError(error)
        }
        let command: EngineCommand
        switch method {
        case .trackingLostPolicy:
            command = .lostPolicy(try policy(p, stand: host.standID))
        case .sweepStart:
            let from = try p.number(APIParam.sweepFrom), to = try p.number(APIParam.sweepTo)
            guard from != to else { throw .invalidParameter("a sweep needs from and to apart", field: "to") }
            command = .pan(.sweep(Sweep(from: from, to: to, rate: try p.number(APIParam.sweepRate), repeats: try p.optionalBool("repeat") ?? false)))
        case .tourStart:
            command = .pan(.tour(Tour(stops: try stops(p, stand: host.standID), repeats: try p.optionalBool("repeat") ?? false)))
        case .sweepStop, .tourStop:
            command = .endPan
        default:
            throw .methodNotFound(method.name)
        }
        let force = try p.optionalBool(APIParam.force.name) ?? false
        return .later(host.submit(command, from: session.client, force: force).map { _ in ["ok": true] })
    }

    private func policy(_ p: Params, stand: String?) throws(RPCError) -> LostSubjectPolicy {
        guard let kind = LostSubjectPolicy.Kind(rawValue: try p.optionalString("policy") ?? "") else {
            throw .invalidParams("policy must be one of \"hold\", \"preset\", \"search\"", field: "policy")
        }
        let name = try p.optionalString("preset")
        let pose: NamedPose?
        switch kind {
        case .hold:
            guard name == nil else { throw .invalidParameter("policy hold goes to no preset", field: "preset") }
            pose = nil
        case .preset, .search:
            pose = try self.pose(name ?? Preset.homeName, stand: stand, field: "preset")
        }
        return LostSubjectPolicy(kind: kind, after: try p.optionalNumber(APIParam.lostAfter) ?? (kind == .hold ? 0 : Self.defaultAfter), preset: pose,
                                 searchSeconds: try p.optionalNumber(APIParam.searchSeconds) ?? (kind == .search ? Self.defaultSearchSeconds : 0))
    }

    private func stops(_ p: Params, stand: String?) throws(RPCError) -> [Tour.Stop] {
        guard let list = try p.optionalList("stops"), !list.isEmpty, list.count <= Self.maxStops else {
            throw .invalidParams("stops must be a list of 1…\(Self.maxStops) {preset, dwell}", field: "stops")
        }
        var stops: [Tour.Stop] = []
        for (index, value) in list.enumerated() {
            let stop = try Params.element(value, of: "stops", at: index)
            guard let name = try stop.optionalString("preset") else { throw .invalidParams("\(stop.field("preset")) is required", field: stop.field("preset")) }
            stops.append(Tour.Stop(pose: try pose(name, stand: stand, field: stop.field("preset")),
                                   dwell: try stop.number("dwell", in: 0...3600, unit: "s")))
        }
        return stops
    }

    /// The stand's preset of that name as a pose; an unknown one is refused naming `field`.
    private func pose(_ name: String, stand: String?, field: String) throws(RPCError) -> NamedPose {
        guard let stand else { throw .notConnected(nil) }
        try PresetName.check(name, field: field)
        guard let preset = store.presets(of: stand)[name] else {
            throw .invalidParameter("stand \(stand) has no preset '\(name)' (preset.list shows its presets)", field: field)
        }
        return NamedPose(name: name, yaw: preset.yaw, pitch: preset.pitch)
    }
}
