import DockIO
import DockJSON
import NIOCore

/// A JSON file of dockd's in its state directory (`defaults.json`, `presets.json`): read whole, up to
/// a bound (a larger file is not dockd's), and written whole to a temporary file renamed over the old
/// one, so a crash never leaves half a file.
enum StateFile {
    /// The file's JSON, nil when there is no file; what made it unusable is thrown.
    static func read(_ path: String, atMost bound: Int) throws -> JSONValue? {
        guard FileManagerLite.exists(path) else { return nil }
        let bytes = try WholeFile.read(path, atMost: bound)
        return try bytes.withUnsafeBytes { (raw) throws(JSONParser.Failure) in try JSONParser.parse(raw) }
    }

    static func write(_ value: JSONValue, to path: String) throws(RPCError) {
        var text = ByteBuffer()
        text.writeJSON(value)
        do {
            try WholeFile.replace(path, with: Array(text.readableBytesView))
        } catch {
            throw .internal("cannot write \(path): \(error) (the state directory, [daemon] state_directory)")
        }
    }
}
