import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking JSON-RPC client over dockd's Unix socket: what a command-line tool needs, nothing more.
/// Shared by dockctl and dock-bench's live mode.
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

    private let fd: Int32
    private var buffer = Data()
    private var nextID = 1

    public init(socketPath: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "cannot create a socket: \(String(cString: strerror(errno)))", exitCode: 69) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard socketPath.utf8.count < capacity else { throw Failure(description: "socket path too long: \(socketPath)", exitCode: 64) }
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
                throw Failure(description: "dockd is not running (no socket at \(socketPath)); start it with 'systemctl start dockd'", exitCode: 69)
            case EACCES, EPERM:
                throw Failure(description: "permission denied on \(socketPath): add yourself to the 'dock' group (then log in again)", exitCode: 77)
            default:
                throw Failure(description: "cannot connect to \(socketPath): \(String(cString: strerror(code)))", exitCode: 69)
            }
        }
    }

    deinit { close(fd) }

    /// Sends a request and waits for its reply; notifications that arrive meanwhile go to `onNotification`.
    public func call(_ method: String, _ params: [String: Any] = [:], onNotification: (([String: Any]) -> Void)? = nil) throws -> Any {
        let id = nextID
        nextID += 1
        try send(["jsonrpc": "2.0", "id": id, "method": method, "params": params])
        while true {
            let message = try receive()
            if let replyID = message["id"] as? Int, replyID == id {
                if let error = message["error"] as? [String: Any] {
                    let code = error["code"] as? Int ?? 0
                    throw Failure(description: error["message"] as? String ?? "error \(code)", exitCode: code == -32007 ? 77 : 1, code: code)
                }
                return message["result"] ?? NSNull()
            }
            if message["method"] != nil { onNotification?(message) }
        }
    }

    public func send(_ object: [String: Any]) throws {
        var data = try JSONSerialization.data(withJSONObject: object)
        data.append(UInt8(ascii: "\n"))
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                guard n > 0 else { throw Failure(description: "dockd closed the connection", exitCode: 69) }
                offset += n
            }
        }
    }

    /// The next message, or nil if none arrives before `deadline` (nil deadline: wait forever).
    public func receive(until deadline: Date?) throws -> [String: Any]? {
        while !buffer.contains(UInt8(ascii: "\n")) {
            if let deadline {
                let ms = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, ms) > 0 else { return nil }
            }
            try fill()
        }
        return try receive()
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = read(fd, &chunk, chunk.count)
        guard n > 0 else { throw Failure(description: "dockd closed the connection", exitCode: 69) }
        buffer.append(contentsOf: chunk[0..<n])
    }

    /// The next JSON message from dockd.
    public func receive() throws -> [String: Any] {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                guard let object = try JSONSerialization.jsonObject(with: line) as? [String: Any] else {
                    throw Failure(description: "dockd sent something that is not a JSON object", exitCode: 76)
                }
                return object
            }
            try fill()
        }
    }
}
