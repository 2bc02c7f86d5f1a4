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

    /// Makes the directory `path` is in when it is missing: its last component only, mode 0750, as
    /// systemd's StateDirectory= makes the service's. At the first save, not at start: a dockd that
    /// saves nothing leaves no directory behind. When it cannot, the write that follows says why.
    static func makeDirectory(of path: String) {
        let directory = FileManagerLite.directory(of: path)
        if !FileManagerLite.exists(directory) { _ = mkdir(directory, 0o750) }
    }

    /// Why nothing can be saved in `directory` (nil: it can, or it can be made at the first save):
    /// said at start, rather than only when a save fails.
    static func directoryProblem(_ directory: String) -> String? {
        let exists = FileManagerLite.exists(directory)
        let checked = exists ? directory : FileManagerLite.directory(of: directory)
        guard access(checked, W_OK) != 0 else { return nil }
        let reason = String(cString: strerror(errno))
        let what = exists ? "cannot be written: \(reason)" : "is missing and cannot be made: \(checked): \(reason)"
        return "the state directory \(directory) \(what) (\(directorySetting))"
    }
}
