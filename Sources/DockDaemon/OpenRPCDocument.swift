#if canImport(Glibc)
import Glibc
#endif
import DockIO
import DockJSON
import NIOCore
import Synchronization

/// The API's OpenRPC document (protocol/dockd.openrpc.json), which `rpc.discover` returns. It is
/// found at run time and read once, on the first call that finds it:
/// 1. `$DOCKD_OPENRPC` when set (then nothing else is tried),
/// 2. `../share/dockd/dockd.openrpc.json` from the executable's directory (an installed dockd),
/// 3. `protocol/dockd.openrpc.json` in the executable's directory or any directory above it (a
///    build in the source tree).
/// Not found or not JSON: `rpc.discover` fails with -32603 naming the paths tried.
final class OpenRPCDocument: Sendable {
    static let shared = OpenRPCDocument()
    static let environmentVariable = "DOCKD_OPENRPC"
    static let fileName = "dockd.openrpc.json"
    /// Far above the document's size: a file larger is not it.
    static let largestDocument = 16 << 20

    /// The document as JSON text, written back compactly (keys sorted), once found.
    private let document = Mutex<ByteBuffer?>(nil)

    func encoded() throws(RPCError) -> ByteBuffer {
        if let document = document.withLock({ $0 }) { return document }
        let candidates = Self.candidates()
        guard let path = candidates.first(where: { access($0, R_OK) == 0 }) else {
            throw .internal("the OpenRPC document was not found (tried \(candidates.joined(separator: ", "))); "
                            + "install it or point \(Self.environmentVariable) at \(Self.fileName)")
        }
        guard let bytes = try? WholeFile.read(path, atMost: Self.largestDocument) else { throw .internal("the OpenRPC document \(path) could not be read") }
        let parsed = bytes.withUnsafeBytes { bytes in Result { () throws(JSONParser.Failure) in try JSONParser.parse(bytes) } }
        guard case .success(let value) = parsed else {
            if case .failure(let error) = parsed { throw .internal("the OpenRPC document \(path) is not JSON: \(error.rpcError.message)") }
            throw .internal("the OpenRPC document \(path) is not JSON")
        }
        var buffer = ByteBuffer()
        buffer.writeJSON(value)
        document.withLock { $0 = buffer }
        return buffer
    }

    /// Where to look, in order.
    static func candidates(environment: String? = getenv(environmentVariable).map { String(cString: $0) },
                           executable: String? = executablePath()) -> [String] {
        if let path = environment, !path.isEmpty { return [path] }
        guard let executable else { return [] }
        var dir = FileManagerLite.directory(of: executable)
        var paths = [FileManagerLite.directory(of: dir) + "/share/dockd/\(fileName)"]
        while true {
            paths.append((dir == "/" ? "" : dir) + "/protocol/\(fileName)")
            if dir == "/" { break }
            dir = FileManagerLite.directory(of: dir)
        }
        return paths
    }

    /// The running binary, symlinks resolved (so a `.build/debug` link leads into the source tree).
    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
