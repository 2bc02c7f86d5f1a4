import NIOCore
import NIOPosix

/// Where a stand is reached: serial ttys (USB-CDC, UART, a simulator's pty), Unix sockets
/// (dock-sim --unix), Bluetooth RFCOMM, and UDP/TCP for network stands (VISCA-over-IP, MAVLink).
public enum StandEndpoint: Sendable, Equatable, CustomStringConvertible {
    case serial(path: String, baud: Int)
    case unix(path: String)
    /// RFCOMM to a paired stand; channel nil = look it up with SDP.
    case bluetooth(address: String, channel: UInt8?)
    case udp(host: String, port: Int)
    case tcp(host: String, port: Int)

    public var description: String {
        switch self {
        case .serial(let path, let baud): "serial:\(path)@\(baud)"
        case .unix(let path): "unix:\(path)"
        case .bluetooth(let address, let channel): "rfcomm:\(address)" + (channel.map { "/\($0)" } ?? "")
        case .udp(let host, let port): "udp:\(host.contains(":") ? "[\(host)]" : host):\(port)"
        case .tcp(let host, let port): "tcp:\(host.contains(":") ? "[\(host)]" : host):\(port)"
        }
    }

    /// `unix:/run/x.sock`, `rfcomm:AA:BB:CC:DD:EE:FF[/channel]`, `udp:HOST:PORT`, `tcp:HOST:PORT`,
    /// or a device path with an optional `@baud`.
    public init(parsing text: String, defaultBaud: Int = 115_200) {
        if text.hasPrefix("udp:"), let (host, port) = NetworkTransport.hostPort(text.dropFirst(4)) {
            self = .udp(host: host, port: port)
        } else if text.hasPrefix("tcp:"), let (host, port) = NetworkTransport.hostPort(text.dropFirst(4)) {
            self = .tcp(host: host, port: port)
        } else if text.hasPrefix("unix:") {
            self = .unix(path: String(text.dropFirst(5)))
        } else if text.hasPrefix("rfcomm:") {
            let rest = text.dropFirst(7).split(separator: "/", maxSplits: 1)
            self = .bluetooth(address: String(rest.first ?? ""), channel: rest.count > 1 ? UInt8(rest[1]) : nil)
        } else if let at = text.lastIndex(of: "@"), let baud = Int(text[text.index(after: at)...]) {
            self = .serial(path: String(text[..<at]), baud: baud)
        } else {
            self = .serial(path: text, baud: defaultBaud)
        }
    }
}

public typealias StandChannel = NIOAsyncChannel<ByteBuffer, ByteBuffer>

public enum StandTransport {
    /// Opens the link; the returned channel carries raw bytes both ways.
    public static func connect(_ endpoint: StandEndpoint, group: any EventLoopGroup) async throws -> StandChannel {
        switch endpoint {
        case .serial(let path, let baud):
            let fd = try SerialPort.open(path: path, baud: baud)
            return try await wrap(fd: fd, group: group)
        case .bluetooth(let address, let channel):
            let fd = try await NIOThreadPool.singleton.runIfActive { try Bluetooth.connect(address: address, channel: channel) }
            return try await wrap(fd: fd, group: group)
        case .udp(let host, let port):
            return try await NetworkTransport.connectUDP(host: host, port: port, group: group)
        case .tcp(let host, let port):
            return try await NetworkTransport.connectTCP(host: host, port: port, group: group)
        case .unix(let path):
            return try await ClientBootstrap(group: group)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture { try StandChannel(wrappingChannelSynchronously: channel) }
                }
        }
    }

    private static func wrap(fd: Int32, group: any EventLoopGroup) async throws -> StandChannel {
        try await NIOPipeBootstrap(group: group)
            .takingOwnershipOfDescriptor(inputOutput: fd) { channel in
                channel.eventLoop.makeCompletedFuture { try StandChannel(wrappingChannelSynchronously: channel) }
            }
    }
}
