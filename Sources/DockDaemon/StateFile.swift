import DockIO
import DockJSON

/// A JSON file of dockd's in its state directory (`defaults.json`, `presets.json`): read whole, up to
/// a bound (a larger file is not dockd's); `StateWriter` writes it.
enum StateFile {
    /// The file's JSON, nil when there is no file; what made it unusable is thrown.
    static func read(_ path: String, atMost bound: Int) throws -> JSONValue? {
        guard FileManagerLite.exists(path) else { return nil }
        let bytes = try WholeFile.read(path, atMost: bound)
        return try bytes.withUnsafeBytes { (raw) throws(JSONParser.Failure) in try JSONParser.parse(raw) }
    }
}
