import DockAPI
import DockJSON
import DockProtocol
import NIOCore
import StandEngine

/// `preset.save`, `preset.recall`, `preset.list`, `preset.delete` (protocol/API.md): named poses per
/// stand. Saving reads the stand's measured pose; recalling is a `motion.orient` to the stored one,
/// so it is leased, refused and cancelled exactly as that is, and answers with its motion id.
struct PresetMethods: Sendable {
    let stands: StandRegistry
    let store: PresetStore

    /// A recall comes to rest within half of this of the stored pose (0.057°): repeatable to 0.1°
    /// with room for an encoder's flickering last count. motion.orient's own 0.01 rad left the
    /// native stand up to 0.23° off.
    static let recallTolerance = 0.002

    func call(_ method: APIMethod, _ p: Params, session: ClientSession) throws(RPCError) -> APIMethods.Answer {
        let named = try p.optionalString("stand")
        let host: StandHost
        do {
            host = try stands.find(named)
        } catch {
            throw RPCError(error)
        }
        guard let stand = host.standID else { throw .notConnected(nil) }
        switch method {
        case .presetList:
            let presets = store.presets(of: stand)
            return .value(.array(presets.keys.sorted().map { entry($0, presets[$0]!, stand: stand) }))
        case .presetSave:
            let name = try Self.name(p)
            return .later(host.read(Self.measuredPose).flatMapThrowing { pose in
                guard let pose else { throw RPCError.notConnected(stand) }
                try store.save(pose, as: name, for: stand)
                return entry(name, pose, stand: stand)
            })
        case .presetRecall:
            let name = try Self.name(p)
            guard let preset = store.presets(of: stand)[name] else {
                throw .invalidParameter("stand \(stand) has no preset '\(name)' (preset.list shows its presets)", field: "name")
            }
            let duration = try p.optionalNumber(APIParam.duration)
            let force = try p.optionalBool("force") ?? false
            let client = session.client
            let axes: EventLoopFuture<[Axis]> = host.read { engine in engine.capabilities?.axes.map(\.axis) ?? [] }
            let motion = axes.flatMap { (axes: [Axis]) -> EventLoopFuture<CommandResult> in
                let target = Self.target(preset, axes: axes)
                guard !target.isEmpty else { return host.loop.makeFailedFuture(EngineError.notConnected(stand: stand)) }
                return host.submit(.orient(target, relative: false, duration: duration, tolerance: Self.recallTolerance), from: client, force: force)
            }
            return .later(motion.flatMapThrowing { (result: CommandResult) -> JSONValue in
                guard case .motion(let id) = result else { throw RPCError.internal("no motion id") }
                return ["id": JSONValue(id.rawValue)]
            })
        case .presetDelete:
            try store.delete(try Self.name(p), for: stand)
            return .value(["ok": true])
        default:
            throw .methodNotFound(method.name)
        }
    }

    private static func name(_ p: Params) throws(RPCError) -> String {
        guard let name = try p.optionalString("name") else { throw .invalidParams("name is required", field: "name") }
        try PresetName.check(name, field: "name")
        return name
    }

    /// The pose the stand measures now (nil before its first FEEDBACK or while it is not connected).
    private static func measuredPose(_ engine: StandEngine) -> Preset? {
        guard engine.linkState == .connected, let feedback = engine.lastFeedback?.feedback else { return nil }
        func measured(_ axis: Axis) -> Double? { feedback.axis(axis).map { Double($0.position) } }
        return Preset(yaw: measured(.yaw), pitch: measured(.pitch), zoom: measured(.zoom))
    }

    /// The preset's angles and zoom on the axes the stand has (`home` names yaw and pitch whatever
    /// the stand, and no zoom: recalling it leaves the zoom where it is).
    private static func target(_ preset: Preset, axes: [Axis]) -> [Axis: Double] {
        var target: [Axis: Double] = [:]
        if let yaw = preset.yaw, axes.contains(.yaw) { target[.yaw] = yaw }
        if let pitch = preset.pitch, axes.contains(.pitch) { target[.pitch] = pitch }
        if let zoom = preset.zoom, axes.contains(.zoom) { target[.zoom] = zoom }
        return target
    }

    /// `{"name", "yaw", "pitch", "zoom", "saved"}`: `saved` false for the built-in `home`.
    private func entry(_ name: String, _ preset: Preset, stand: String) -> JSONValue {
        var fields = preset.json.object ?? [:]
        fields["name"] = JSONValue(name)
        fields["saved"] = JSONValue(store.isSaved(name, of: stand))
        return .object(fields)
    }
}
