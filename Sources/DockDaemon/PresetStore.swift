#if canImport(Glibc)
import Glibc
#endif
import DockAPI
import DockDrivers
import DockJSON
import NIOCore
import Synchronization

/// A pose a stand can be sent back to: the measured yaw, pitch and zoom when it was saved (nil for
/// an axis the stand lacks), and where the camera keeps its own copy (nil: it keeps none).
struct Preset: Sendable, Equatable {
    var yaw: Double?
    var pitch: Double?
    var zoom: Double?
    var camera: CameraPresetSlot? = nil

    /// `home` until a client saves its own: the pose every axis starts from. Never stored in the camera.
    static let homeName = "home"
    static let home = Preset(yaw: 0, pitch: 0, zoom: nil)

    var json: JSONValue {
        ["yaw": yaw.map { JSONValue($0) } ?? .null, "pitch": pitch.map { JSONValue($0) } ?? .null, "zoom": zoom.map { JSONValue($0) } ?? .null,
         "camera": camera.map(\.json) ?? .null]
    }
}

extension CameraPresetSlot {
    /// `{"memory": n}` (VISCA) or `{"token": "…"}` (ONVIF).
    var json: JSONValue {
        switch self {
        case .memory(let number): ["memory": JSONValue(number)]
        case .token(let token): ["token": JSONValue(token)]
        }
    }

    init(json value: JSONValue, field: String) throws(RPCError) {
        let p = Params(value.object ?? [:], path: field)
        if value.object?.count == 1, let number = try p.optionalNumber("memory", in: 0...0xFF, unit: ""), number == number.rounded() {
            self = .memory(Int(number))
        } else if value.object?.count == 1, let token = try p.optionalString("token"), (1...64).contains(token.utf8.count) {
            self = .token(token)
        } else {
            throw .invalidParams("\(field) must be {\"memory\": 0…255} or {\"token\": 1…64 bytes}", field: field)
        }
    }
}

/// Every stand's presets, by the stand's stable id (the serial number it reports, or a camera's
/// configured `name`: what `stands.list` shows as `id`), kept in the state directory
/// (`presets.json`, a `StateFile`) so they survive a restart of dockd and a stand's reconnect. Its
/// changes are the `StateWriter`'s, off the event loop and one at a time: memory changes only once
/// the file holds the change, and reads meanwhile see what the file held before it.
final class PresetStore: Sendable {
    let path: String
    private let writer: StateWriter
    /// Stand id → preset name → pose.
    private let table: Mutex<[String: [String: Preset]]>
    /// Stand id → camera memory → how many camera operations hold it until the camera answers: a
    /// save's Set (so two saves at once never pick the same free memory) and a delete's Reset (so
    /// no save of another name Sets the memory before the Reset that would wipe it).
    private let reserved = Mutex<[String: [Int: Int]]>([:])

    static let maxPerStand = 100
    /// 100 presets of ~70 bytes for each of many stands; a larger file is not dockd's.
    static let largestFile = 1 << 20

    /// Loads `presets.json` from `directory`. A file that cannot be used is renamed aside
    /// (`presets.json.unreadable`, so the next save does not destroy it) and reported.
    /// Each stand's saves and deletes (`PresetMethods`), each from its camera operation to its
    /// write, one at a time: the table changes only once the file holds a change, so a save asked
    /// while a delete of the same name was on its way would take the camera slot the delete then
    /// empties. Its lists wait their turn too, so they show every change asked before them. Per
    /// stand: a camera slow to store a preset holds back no other stand's.
    func operations(of stand: String) -> OneAtATime {
        chains.withLock { chains in
            if let chain = chains[stand] { return chain }
            let chain = OneAtATime(loop: writer.loop)
            chains[stand] = chain
            return chain
        }
    }
    private let chains = Mutex<[String: OneAtATime]>([:])

    init(directory: String, writer: StateWriter) {
        path = directory + "/presets.json"
        self.writer = writer
        let loaded = Self.load(path)
        table = Mutex(loaded.table)
        problem = loaded.problem
    }

    /// Why the stored presets were not used, if they were not.
    let problem: String?

    /// A stand's presets by name, `home` among them whether saved or not.
    func presets(of stand: String) -> [String: Preset] {
        var presets = table.withLock { $0[stand] ?? [:] }
        if presets[Preset.homeName] == nil { presets[Preset.homeName] = .home }
        return presets
    }

    /// Whether the stand has a saved preset of that name (false for the built-in `home`).
    func isSaved(_ name: String, of stand: String) -> Bool {
        table.withLock { $0[stand]?[name] != nil }
    }

    /// Throws when saving `name` would take the stand past the most presets it keeps.
    func checkRoom(for name: String, of stand: String) throws(RPCError) {
        try Self.checkRoom(for: name, of: stand, in: table.withLock { $0[stand] ?? [:] })
    }

    private static func checkRoom(for name: String, of stand: String, in presets: [String: Preset]) throws(RPCError) {
        guard presets[name] != nil || presets.count < maxPerStand else {
            throw .invalidParameter("stand \(stand) has \(maxPerStand) presets, the most it keeps; delete one first", field: "name")
        }
    }

    /// Saved once the file holds it; fails with an `RPCError`.
    func save(_ preset: Preset, as name: String, for stand: String) -> EventLoopFuture<Void> {
        change { table throws(RPCError) in
            var presets = table[stand] ?? [:]
            try Self.checkRoom(for: name, of: stand, in: presets)
            presets[name] = preset
            table[stand] = presets
        }
    }

    /// Forgets a saved preset (`home` then is the built-in home pose again); what it was, once the
    /// file no longer holds it. A camera memory it had is held from then until `release` (once the
    /// camera has answered its Reset).
    func delete(_ name: String, for stand: String) -> EventLoopFuture<Preset> {
        change(committed: { (deleted: Preset) in
            // Under the table's lock: no save picks the memory between the two.
            if case .memory(let number)? = deleted.camera { self.hold(memory: number, of: stand) }
        }) { table throws(RPCError) in
            guard let deleted = table[stand]?.removeValue(forKey: name) else {
                let why = name == Preset.homeName ? "home is the built-in home pose (nothing saved to delete)" : "no preset '\(name)'"
                throw .invalidParameter("stand \(stand): \(why)", field: "name")
            }
            if table[stand]?.isEmpty == true { table[stand] = nil }
            return deleted
        }
    }

    /// The camera memory a save of `name` stores into, held until `release`: the one it has if it
    /// has one in `range`, else the lowest in `range` no other preset of the stand has or holds
    /// (so a name keeps its number for good, and numbers are given in order); nil when none is free.
    func reserveMemory(for name: String, of stand: String, in range: ClosedRange<Int>) -> Int? {
        table.withLock { table in
            reserved.withLock { reserved in
                let presets = table[stand] ?? [:]
                let held = reserved[stand] ?? [:]
                let own = if case .memory(let n)? = presets[name]?.camera, range.contains(n), held[n] == nil { n } else { nil as Int? }
                let taken = Set(presets.compactMap { entry -> Int? in
                    guard entry.key != name, case .memory(let n)? = entry.value.camera else { return nil }
                    return n
                }).union(held.keys)
                guard let number = own ?? range.first(where: { !taken.contains($0) }) else { return nil }
                reserved[stand, default: [:]][number] = 1
                return number
            }
        }
    }

    private func hold(memory: Int, of stand: String) {
        reserved.withLock { $0[stand, default: [:]][memory, default: 0] += 1 }
    }

    /// One hold of a camera memory let go: a save's or a delete's camera operation is answered.
    func release(memory: Int, of stand: String) {
        reserved.withLock { reserved in
            guard let holds = reserved[stand]?[memory] else { return }
            reserved[stand]?[memory] = holds > 1 ? holds - 1 : nil
            if reserved[stand]?.isEmpty == true { reserved[stand] = nil }
        }
    }

    /// `body` changes the table as the file holds it; the change is written (off the event loop, after
    /// every change asked before it: only changes change the table) and then made in memory, with
    /// `committed` under the table's lock.
    private func change<T: Sendable>(committed: @escaping @Sendable (T) -> Void = { _ in },
                                     _ body: @escaping @Sendable (inout [String: [String: Preset]]) throws(RPCError) -> T) -> EventLoopFuture<T> {
        writer.change { [self] () throws(RPCError) -> T in
            var next = table.withLock { $0 }
            let result = try body(&next)
            try writer.write(Self.json(next), to: path)
            table.withLock { table in
                table = next
                committed(result)
            }
            return result
        }
    }

    /// `{"stands": {id: {name: {"yaw", "pitch", "zoom", "camera"}}}}`
    static func json(_ table: [String: [String: Preset]]) -> JSONValue {
        ["stands": .object(table.mapValues { .object($0.mapValues(\.json)) })]
    }

    private static func load(_ path: String) -> (table: [String: [String: Preset]], problem: String?) {
        do {
            guard let value = try StateFile.read(path, atMost: largestFile) else { return ([:], nil) }
            return (try decode(value), nil)
        } catch {
            let aside = path + ".unreadable"
            let moved = rename(path, aside) == 0 ? "moved to \(aside)" : "left in place (\(String(cString: strerror(errno))))"
            return ([:], "\(path) not used (\(moved)): \(error)")
        }
    }

    /// The file's table; every name and number checked as the API checks them.
    static func decode(_ value: JSONValue) throws(RPCError) -> [String: [String: Preset]] {
        guard let stands = value["stands"]?.object else { throw .invalidParams("not {\"stands\": {…}}", field: "stands") }
        var table: [String: [String: Preset]] = [:]
        for (stand, entries) in stands {
            guard let entries = entries.object else { throw .invalidParams("stands.\(stand) must be an object", field: "stands.\(stand)") }
            var presets: [String: Preset] = [:]
            for (name, pose) in entries {
                try PresetName.check(name, field: "stands.\(stand).\(name)")
                guard let fields = pose.object else { throw .invalidParams("stands.\(stand).\(name) must be an object", field: "stands.\(stand).\(name)") }
                let p = Params(fields, path: "stands.\(stand).\(name)")
                let angle = -APIParam.angleLimit...APIParam.angleLimit
                let camera = try fields["camera"].flatMap { value throws(RPCError) in
                    value == .null ? nil : try CameraPresetSlot(json: value, field: "stands.\(stand).\(name).camera")
                }
                presets[name] = Preset(yaw: try p.optionalNumber("yaw", in: angle, unit: "rad"), pitch: try p.optionalNumber("pitch", in: angle, unit: "rad"),
                                       zoom: try p.optionalNumber("zoom", in: 0...APIParam.angleLimit, unit: ""), camera: camera)
            }
            table[stand] = presets
        }
        return table
    }
}

/// What a preset may be called: 1…32 letters, digits, `-` and `_`, starting with a letter or digit
/// (a word for a command line and a file, never a path or an option).
enum PresetName {
    static let maxLength = 32

    static func check(_ name: String, field: String) throws(RPCError) {
        let ascii = name.unicodeScalars
        guard (1...maxLength).contains(ascii.count),
              ascii.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }),
              let first = ascii.first, first != "-", first != "_" else {
            throw .invalidParams("\(field) must be 1…\(maxLength) letters, digits, '-' or '_', starting with a letter or digit", field: field)
        }
    }
}
