#if canImport(Glibc)
import Glibc
#endif
import DockTracking
import Foundation
import NIOCore
import StandEngine

/// The stands' defaults (what they do while no client controls them), kept in the state directory
/// (`defaults.json`) so an administrator's choice survives restarts. Written whole, to a temporary
/// file renamed over the old one, so a crash never leaves half a file.
struct DefaultsStore: Sendable {
    let directory: String
    var path: String { directory + "/defaults.json" }

    /// The state directory systemd made (StateDirectory=), else the configuration's.
    static func directory(configured: String) -> String {
        ProcessInfo.processInfo.environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) } ?? configured
    }

    /// The stored defaults; DockKit's when nothing is stored. A file that cannot be read is reported
    /// and ignored (the defaults are a convenience, never a reason not to start).
    func load() -> (defaults: StandDefaults, problem: String?) {
        guard FileManager.default.fileExists(atPath: path) else { return (StandDefaults(), nil) }
        do {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let value = try bytes.withUnsafeBytes { (raw) throws(JSONParser.Failure) in try JSONParser.parse(raw) }
            guard let fields = value.object else { return (StandDefaults(), "\(path) not used: not a JSON object") }
            return (try Self.defaults(from: Params(fields), over: StandDefaults()), nil)
        } catch {
            return (StandDefaults(), "\(path) not used: \(error)")
        }
    }

    func save(_ defaults: StandDefaults) throws(RPCError) {
        var text = ByteBuffer()
        text.writeJSON(Self.json(defaults))
        let data = Data(text.readableBytesView)
        let temporary = path + ".new"
        guard FileManager.default.createFile(atPath: temporary, contents: data), rename(temporary, path) == 0 else {
            throw .internal("cannot write \(path): \(String(cString: strerror(errno))) (the state directory, [daemon] state_directory)")
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
