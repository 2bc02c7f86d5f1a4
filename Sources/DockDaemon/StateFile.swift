#if canImport(Glibc)
import Glibc
#endif
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

    /// How an administrator names the state directory, for the messages about it.
    static let directorySetting = "--state-directory or [daemon] state_directory"

    /// Makes the state directory when it is missing (its last component, mode 0750, as systemd's
    /// StateDirectory= does for the service): dockd started by hand with a directory of its own then
    /// saves presets instead of failing each save. nil when it is there now, else why not.
    static func makeDirectory(_ path: String) -> String? {
        guard !FileManagerLite.exists(path), mkdir(path, 0o750) != 0 else { return nil }
        let code = errno
        guard code != EEXIST else { return nil }
        return "the state directory \(path) cannot be made: \(String(cString: strerror(code))) (\(directorySetting))"
    }
}
