#if canImport(Glibc)
import Glibc
#endif
import DockAPI
import DockJSON

/// A blocking JSON-RPC client over dockd's Unix socket: what a command-line tool needs, nothing more.
/// Shared by dockctl and dock-bench's live mode. Requests and replies are DockJSON values, the
/// methods DockAPI's: no Foundation.
public final class APIClient {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// The exit code a command-line tool reports it with (sysexits).
        public let exitCode: Int32
        /// The JSON-RPC error code when dockd answered the call with an error.
        public let code: Int?

        public init(description: String, exitCode: Int32, code: Int? = nil) {
            self.description = description
            self.exitCode = exitCode
            self.code = code
        }
    }

    /// Where the packaged dockd serves its API (dockd.socket).
    public static let defaultSocketPath = "/run/dockd/dockd.sock"

    private let fd: Int32
    /// What has arrived and is not yet a whole line.
    private var buffer: [UInt8] = []
    private var nextID = 1

    public init(socketPath: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "cannot create a socket: \(String(cString: strerror(errno)))", exitCode: ExitStatus.notRunning) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard socketPath.utf8.count < capacity else { throw Failure(description: "socket path too long: \(socketPath)", exitCode: ExitStatus.usage) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: socketPath.utf8)
            raw[socketPath.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if result != 0 {
            let code = errno
            close(fd)
            switch code {
            case ENOENT, ECONNREFUSED:
                throw Failure(description: "dockd is not running (no socket at \(socketPath)); \(Self.howToStart(socketPath))", exitCode: ExitStatus.notRunning)
            case EACCES, EPERM:
                throw Failure(description: "permission denied on \(socketPath): add yourself to the 'dock' group (then log in again)", exitCode: ExitStatus.permission)
            default:
                throw Failure(description: "cannot connect to \(socketPath): \(String(cString: strerror(code)))", exitCode: ExitStatus.notRunning)
            }
        }
    }

    deinit { close(fd) }

    /// systemd's socket unit serves only the default path; a dockd on another was started by hand.
    private static func howToStart(_ socketPath: String) -> String {
        if socketPath == defaultSocketPath { return "start it with 'systemctl start dockd.socket'" }
        return "start one with 'dockd --socket \(socketPath)', or name the socket a running dockd serves (--socket; dockctl also reads $DOCKD_SOCKET)"
    }

    /// Whether a call of a method that takes `force` (a leased one) takes the stand from another
    /// client that holds it, unless the call says otherwise.
    public var takesOver = false

    /// Calls `method` and waits for its result; notifications that arrive meanwhile go to `onNotification`.
    public func call(_ method: APIMethod, _ params: [String: JSONValue] = [:], onNotification: ((JSONValue) -> Void)? = nil) throws -> JSONValue {
        var params = params
        if takesOver, params["force"] == nil, method.declaration.params.contains(where: { $0.name == "force" }) { params["force"] = true }
        let id = nextID
        nextID += 1
        try send(["jsonrpc": "2.0", "id": JSONValue(id), "method": JSONValue(method.name), "params": .object(params)])
        while true {
            let message = try receive()
            if message["id"]?.double == Double(id) {
                if let error = message["error"] {
                    let code = Int(error["code"]?.double ?? 0)
                    throw Failure(description: error["message"]?.string ?? "error \(code)", exitCode: ExitStatus.forRPCError(code), code: code)
                }
                return message["result"] ?? .null
            }
            if message["method"] != nil { onNotification?(message) }
        }
    }

    public func send(_ message: JSONValue) throws {
        var line = JSONBytes()
        line.writeJSON(message)
        line.bytes.append(UInt8(ascii: "\n"))
        try line.bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw Failure(description: "dockd closed the connection", exitCode: ExitStatus.notRunning) }
                offset += n
            }
        }
    }

    /// The next message, or nil if none arrives within `seconds`.
    public func receive(within seconds: Double) throws -> JSONValue? {
        let deadline = ContinuousClock.now + .nanoseconds(Int64(max(0, seconds) * 1e9))
        while !buffer.contains(UInt8(ascii: "\n")) {
            let left = ContinuousClock.now.duration(to: deadline).components
            let ms = max(0, left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(clamping: ms)) > 0 else { return nil }
            try fill()
        }
        return try receive()
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = read(fd, &chunk, chunk.count)
        if n < 0, errno == EINTR { return }
        guard n > 0 else { throw Failure(description: "dockd closed the connection", exitCode: ExitStatus.notRunning) }
        buffer.append(contentsOf: chunk[0..<n])
    }

    /// The next message from dockd (a JSON object).
    public func receive() throws -> JSONValue {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let parsed = buffer[..<newline].withUnsafeBytes { raw in
                    Result { () throws(JSONParser.Failure) in try JSONParser.parse(raw) }
                }
                buffer.removeSubrange(...newline)
                guard case .success(let message) = parsed, message.object != nil else {
                    throw Failure(description: "dockd sent something that is not a JSON object", exitCode: ExitStatus.protocolError)
                }
                return message
            }
            try fill()
        }
    }
}
