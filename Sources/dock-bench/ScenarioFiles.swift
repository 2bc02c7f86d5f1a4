#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
// FoundationEssentials (files, JSONDecoder), not Foundation: no ICU in the package's one binary (issue 26).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ArgumentParser
import DockSim

/// The scenario files `scenario` and `live` read, with what keeps one from being read said plainly
/// (Foundation's errors print as a dump of their userInfo).
enum ScenarioFiles {
    /// The suite's files in `folder`, sorted; a folder that cannot be read is a usage error: the
    /// default one is relative to the repository's root.
    static func suite(in folder: String) throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw ValidationError("cannot read \(folder): \(unreadable(folder)) (the suite's scenarios: run it from the repository root or pass --scenarios)")
        }
        return names.filter { $0.hasSuffix(".json") }.sorted().map { "\(folder)/\($0)" }
    }

    static func load(_ path: String) throws -> SceneScenario {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else {
            throw ValidationError("cannot read \(path): \(unreadable(path))")
        }
        do {
            return try JSONDecoder().decode(SceneScenario.self, from: data)
        } catch {
            throw ValidationError("\(path): \(error)")
        }
    }

    /// Why `path` cannot be read, as the system says it.
    private static func unreadable(_ path: String) -> String {
        access(path, R_OK) == 0 ? "unreadable" : String(cString: strerror(errno))
    }
}
