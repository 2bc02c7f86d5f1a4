#if canImport(Glibc)
import Glibc
#endif
import DockJSON
import DockTracking
import NIOCore
import StandEngine

/// The stands' defaults (what they do while no client controls them), kept in the state directory
/// (`defaults.json`, a `StateFile`) so an administrator's choice survives restarts.
struct DefaultsStore: Sendable {
    let directory: String
    let writer: StateWriter
    var path: String { directory + "/defaults.json" }

    /// The state directory systemd made (StateDirectory=), else the configuration's.
    static func directory(configured: String) -> String {
        getenv("STATE_DIRECTORY").flatMap { String(cString: $0).split(separator: ":").first.map(String.init) } ?? configured
    }

    /// The stored defaults; DockKit's when nothing is stored. A file that cannot be read is reported
    /// and ignored (the defaults are a convenience, never a reason not to start).
    func load() -> (defaults: StandDefaults, problem: String?) {
        do {
            guard let value = try StateFile.read(path, atMost: Self.largestFile) else { return (StandDefaults(), nil) }
            guard let fields = value.object else { return (StandDefaults(), "\(path) not used: not a JSON object") }
            return (try Self.defaults(from: Params(fields), over: StandDefaults()), nil)
        } catch {
            return (StandDefaults(), "\(path) not used: \(error)")
        }
    }

    /// What dockd writes is under 200 bytes; a larger file is not its own.
    static let largestFile = 64 * 1024

    /// Stores the defaults `choose` makes of the ones in force and puts them in force in
    /// `settings`, once the file holds them (changes run one at a time, off the event loop: each
    /// chooses over the one before it). Fails with an `RPCError`.
    func set(in settings: Shared<EngineSettings>,
             _ choose: @escaping @Sendable (StandDefaults) throws(RPCError) -> StandDefaults) -> EventLoopFuture<StandDefaults> {
        writer.change { [self] () throws(RPCError) -> StandDefaults in
            let defaults = try choose(settings.current.defaults)
            try writer.write(Self.json(defaults), to: path)
            settings.update { $0.defaults = defaults }
            return defaults
        }
    }

    /// `{tracking, framing, roi}`, each optional, over `base`.
    static func defaults(from p: Params, over base: StandDefaults) throws(RPCError) -> StandDefaults {
        var d = base
        if let enabled = try p.optionalBool("tracking") { d.systemTracking = enabled }
        if p.fields["framing"] != nil { d.framing = try Params(["mode": p.fields["framing"]!]).framingMode() }
        if p.fields["roi"] != nil {
            let rect = try p.rect("roi")
            guard rect.x >= 0, rect.y >= 0, rect.maxX <= 1 + 1e-9, rect.maxY <= 1 + 1e-9 else {
                throw .invalidParameter("roi must lie inside the frame (0…1, upper-left origin)", field: "roi")
            }
            d.regionOfInterest = rect
        }
        return d
    }

    static func json(_ d: StandDefaults) -> JSONValue {
        ["tracking": JSONValue(d.systemTracking), "framing": JSONValue(d.framing.name), "roi": d.regionOfInterest.json]
    }
}
