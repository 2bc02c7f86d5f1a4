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
        } catch let error as DecodingError {
            throw ValidationError("\(path): not a scenario: \(explained(error)) (Benchmarks/Scenarios/README.md)")
        }
    }

    /// A decoding error as where in the file and what is wrong, not the error's dump.
    private static func explained(_ error: DecodingError) -> String {
        func place(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
            return keys.isEmpty ? "" : "\(keys.dropFirst(keys.hasPrefix(".") ? 1 : 0)): "
        }
        switch error {
        case .keyNotFound(let key, let context): return place(context) + "\(key.stringValue) is missing"
        case .typeMismatch(let type, let context): return place(context) + "not a \(type)"
        case .valueNotFound(let type, let context): return place(context) + "a \(type) is missing"
        case .dataCorrupted(let context): return place(context) + context.debugDescription
        @unknown default: return "\(error)"
        }
    }

    /// Why `path` cannot be read, as the system says it.
    private static func unreadable(_ path: String) -> String {
        access(path, R_OK) == 0 ? "unreadable" : String(cString: strerror(errno))
    }
}
