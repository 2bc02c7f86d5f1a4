import DockAPI
import DockDrivers
import DockJSON
import DockProtocol
import NIOCore
import StandEngine

/// `preset.save`, `preset.recall`, `preset.list`, `preset.delete` (protocol/API.md): named poses per
/// stand. Saving reads the stand's measured pose; recalling is a `motion.orient` to the stored one,
/// so it is leased, refused and cancelled exactly as that is, and answers with its motion id.
/// dockd's store is the truth: where the driver keeps presets in the camera, a save also stores
/// the preset there and a delete removes it, and what the camera refuses is said in the reply
/// (`camera_error`) without undoing dockd's own save or delete.
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
            // Behind the stand's saves and deletes asked before it (in the same write, too): it lists them.
            return .later(store.operations(of: stand).run { [store] in
                let presets = store.presets(of: stand)
                return host.loop.makeSucceededFuture(.array(presets.keys.sorted().map { entry($0, presets[$0]!, stand: stand) }))
            })
        case .presetSave:
            let name = try Self.name(p)
            // Before the camera stores anything: a preset dockd then refuses would be left in it.
            try store.checkRoom(for: name, of: stand)
            let client = session.client
            // The pose measured now; the save in the stand's order from the moment it is asked, so
            // that a list asked after it shows it.
            let read = host.read { engine in (pose: Self.measuredPose(engine), storage: engine.cameraPresets) }
            return .later(store.operations(of: stand).run {
                read.flatMap { (pose: Preset?, storage: CameraPresetStorage?) -> EventLoopFuture<JSONValue> in
                    guard let pose else { return host.loop.makeFailedFuture(RPCError.notConnected(stand)) }
                    return save(pose, as: name, for: stand, in: storage, host: host, client: client)
                }
            })
        case .presetRecall:
            let name = try Self.name(p)
            // At once, not behind the stand's preset changes: a recall waiting there could start
            // after its client had gone, and a motion asked after it could run before it.
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
            let client = session.client, name = try Self.name(p)
            return .later(store.operations(of: stand).run { [store] in
                store.delete(name, for: stand).flatMap { deleted in
                    guard let slot = deleted.camera else { return host.loop.makeSucceededFuture(["ok": true]) }
                    return camera(.remove(slot), host: host, client: client).map { outcome in
                        if case .memory(let number) = slot { store.release(memory: number, of: stand) }
                        if case .failure(let refusal) = outcome { return ["ok": true, "camera_error": JSONValue(refusal.description)] } else { return ["ok": true] }
                    }
                }
            })
        default:
            throw .methodNotFound(method.name)
        }
    }

    /// Saves the pose, first in the camera where its driver keeps presets (`home` excepted): a VISCA
    /// camera in the memory the name has or the lowest free one, an ONVIF camera in the token the
    /// name has or a new one. The preset is saved whatever the camera answers.
    private func save(_ pose: Preset, as name: String, for stand: String, in storage: CameraPresetStorage?,
                      host: StandHost, client: ClientRef) -> EventLoopFuture<JSONValue> {
        @Sendable func saved(_ camera: Result<CameraPresetSlot, CameraPresetRefusal>?) -> EventLoopFuture<JSONValue> {
            var preset = pose
            switch camera {
            case .success(let slot)?: preset.camera = slot
            // The camera kept its old copy: its slot stays the name's, so the next save overwrites
            // that copy and a delete removes it (forgotten, an ONVIF token would be left for good).
            case .failure?: preset.camera = store.presets(of: stand)[name]?.camera
            case nil: break
            }
            return store.save(preset, as: name, for: stand).map { [preset] in
                guard case .failure(let refusal)? = camera else { return entry(name, preset, stand: stand) }
                var fields = entry(name, preset, stand: stand).object ?? [:]
                fields["camera_error"] = JSONValue(refusal.description)
                return .object(fields)
            }
        }
        guard let storage, name != Preset.homeName else { return saved(nil) }
        switch storage {
        case .memories(let range):
            guard let number = store.reserveMemory(for: name, of: stand, in: range) else {
                let full = CameraPresetRefusal("every camera memory dockd may use (\(range.lowerBound)…\(range.upperBound)) holds another preset")
                return saved(.failure(full))
            }
            // Held until the file holds the preset with it (or the save failed): no other save takes it meanwhile.
            return camera(.store(name: name, slot: .memory(number)), host: host, client: client).flatMap { outcome in
                saved(outcome).always { _ in store.release(memory: number, of: stand) }
            }
        case .tokens:
            let existing = store.presets(of: stand)[name]?.camera
            let slot = if case .token? = existing { existing } else { nil as CameraPresetSlot? }
            return camera(.store(name: name, slot: slot), host: host, client: client).flatMap { saved($0) }
        }
    }

    /// The camera's answer to a request, or why there is none (the stand is not connected, …).
    private func camera(_ request: CameraPresetRequest, host: StandHost, client: ClientRef) -> EventLoopFuture<Result<CameraPresetSlot, CameraPresetRefusal>> {
        host.submit(.cameraPreset(request), from: client).map { result in
            guard case .cameraPreset(let slot) = result else { return .failure(CameraPresetRefusal("no slot in the answer")) }
            return .success(slot)
        }.recover { error in
            .failure(CameraPresetRefusal(error is EngineError ? "\(error)" : RPCError(any: error).message))
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
