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
                throw Failure(description: "dockd is not running (no socket at \(socketPath)); start it with 'systemctl start dockd.socket'", exitCode: ExitStatus.notRunning)
            case EACCES, EPERM:
                throw Failure(description: "permission denied on \(socketPath): add yourself to the 'dock' group (then log in again)", exitCode: ExitStatus.permission)
            default:
                throw Failure(description: "cannot connect to \(socketPath): \(String(cString: strerror(code)))", exitCode: ExitStatus.notRunning)
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
                    throw Failure(description: error["message"] as? String ?? "error \(code)", exitCode: ExitStatus.forRPCError(code), code: code)
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
                guard n > 0 else { throw Failure(description: "dockd closed the connection", exitCode: ExitStatus.notRunning) }
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
        guard n > 0 else { throw Failure(description: "dockd closed the connection", exitCode: ExitStatus.notRunning) }
        buffer.append(contentsOf: chunk[0..<n])
    }

    /// The next JSON message from dockd.
    public func receive() throws -> [String: Any] {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                guard let object = try JSONSerialization.jsonObject(with: line) as? [String: Any] else {
                    throw Failure(description: "dockd sent something that is not a JSON object", exitCode: ExitStatus.protocolError)
                }
                return object
            }
            try fill()
        }
    }
}

/// dockctl's exit statuses, by the class of what went wrong (as nmcli has them): a script tells "dockd
/// is not running" from "no such stand" from "another client holds the stand" without reading text.
/// dockctl(1) lists them.
public enum ExitStatus {
    public static let success: Int32 = 0
    /// Anything not below (an internal error in dockd, a closed connection mid-call).
    public static let failure: Int32 = 1
    /// dockd refused the request: a parameter out of range or the limits, an unknown name, something
    /// the stand cannot do, a call too soon after the last (-32602, -32002…-32006).
    public static let refused: Int32 = 2
    /// Another client holds the stand's lease (-32008).
    public static let busy: Int32 = 3
    /// A motion could not be done or did not complete (-32009; `--wait` saw it fail, cancelled or preempted).
    public static let motionFailed: Int32 = 4
    /// No such stand, or none connected (-32001; `--stand` naming no stand dockd has).
    public static let noSuchStand: Int32 = 10
    /// Bad usage: options, arguments, or several stands connected and no `--stand` for a command that changes one.
    public static let usage: Int32 = 64
    /// dockd is not running (no socket, connection refused) or closed the connection.
    public static let notRunning: Int32 = 69
    /// dockd sent something that is not JSON-RPC.
    public static let protocolError: Int32 = 76
    /// The socket's permissions (not in group `dock`) or an administrator's method (-32007).
    public static let permission: Int32 = 77

    public static func forRPCError(_ code: Int) -> Int32 {
        switch code {
        case -32001: noSuchStand
        case -32007: permission
        case -32008: busy
        case -32009: motionFailed
        case -32602, -32002, -32003, -32004, -32005, -32006: refused
        default: failure
        }
    }
}
