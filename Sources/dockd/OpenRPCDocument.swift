import Foundation

/// The API's OpenRPC document (protocol/dockd.openrpc.json), which `rpc.discover` returns. It is
/// found at run time and decoded once, on the first call that finds it:
/// 1. `$DOCKD_OPENRPC` when set (then nothing else is tried),
/// 2. `../share/dockd/dockd.openrpc.json` from the executable's directory (an installed dockd),
/// 3. `protocol/dockd.openrpc.json` in the executable's directory or any directory above it (a
///    build in the source tree).
/// Not found or not JSON: `rpc.discover` fails with -32603 naming the paths tried.
actor OpenRPCDocument {
    static let shared = OpenRPCDocument()
    static let environmentVariable = "DOCKD_OPENRPC"
    static let fileName = "dockd.openrpc.json"

    private var document: JSONValue?

    func get() throws(RPCError) -> JSONValue {
        if let document { return document }
        let candidates = Self.candidates()
        guard let path = candidates.first(where: { FileManager.default.isReadableFile(atPath: $0) }) else {
            throw .internal("the OpenRPC document was not found (tried \(candidates.joined(separator: ", "))); "
                            + "install it or point \(Self.environmentVariable) at \(Self.fileName)")
        }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw .internal("the OpenRPC document \(path) could not be read as JSON: \(error)")
        }
        document = value
        return value
    }

    /// Where to look, in order.
    static func candidates(environment: [String: String] = ProcessInfo.processInfo.environment,
                           executable: String? = executablePath()) -> [String] {
        if let path = environment[environmentVariable], !path.isEmpty { return [path] }
        guard let executable else { return [] }
        var dir = URL(fileURLWithPath: executable).deletingLastPathComponent().standardizedFileURL
        var paths = [dir.deletingLastPathComponent().appendingPathComponent("share/dockd/\(fileName)").path]
        while true {
            paths.append(dir.appendingPathComponent("protocol/\(fileName)").path)
            let parent = dir.deletingLastPathComponent().standardizedFileURL
            if parent.path == dir.path || dir.path == "/" { break }
            dir = parent
        }
        return paths
    }

    /// The running binary, symlinks resolved (so a `.build/debug` link leads into the source tree).
    static func executablePath() -> String? {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        return Bundle.main.executablePath.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
    }
}
