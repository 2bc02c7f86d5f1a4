// FoundationEssentials (URL, FileManager), not Foundation: dockd links no Foundation or ICU (issue 26).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where drivers find their camera profiles (`profiles/<folder>/*.json`), first match wins:
/// `$DOCKD_<FOLDER>_PROFILES`, the administrator's `/etc/dockd/profiles/<folder>`, then
/// `../share/dockd/profiles/<folder>` from the executable's directory (an installed dockd, whatever
/// its PREFIX: /usr/bin → /usr/share), then `profiles/<folder>` in the executable's directory or any
/// above it (a build in the source tree). Never the working directory, which under systemd is `/`.
public enum ProfileSearch {
    public static func paths(folder: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                             executable: String? = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) -> [String] {
        var paths: [String] = []
        if let env = environment["DOCKD_\(folder.uppercased())_PROFILES"], !env.isEmpty { paths.append(env) }
        paths.append("/etc/dockd/profiles/\(folder)")
        guard let executable else { return paths }
        var dir = URL(fileURLWithPath: executable).deletingLastPathComponent().standardizedFileURL
        paths.append(dir.deletingLastPathComponent().appendingPathComponent("share/dockd/profiles/\(folder)").path)
        while true {
            paths.append(dir.appendingPathComponent("profiles/\(folder)").path)
            let parent = dir.deletingLastPathComponent().standardizedFileURL
            if parent.path == dir.path || dir.path == "/" { break }
            dir = parent
        }
        return paths
    }
}
