import NIOCore
import NIOPosix

public typealias StandChannel = NIOAsyncChannel<ByteBuffer, ByteBuffer>

public enum StandTransport {
    /// Opens the link; the returned channel carries raw bytes both ways.
    public static func connect(_ endpoint: StandEndpoint, group: any EventLoopGroup) async throws -> StandChannel {
        try await open(endpoint, group: group) { channel in
            channel.eventLoop.makeCompletedFuture { try StandChannel(wrappingChannelSynchronously: channel) }
        }
    }

    /// Opens the link on `group` (an event loop to pin it to one thread); `initializer` sets the new
    /// channel up (its handlers see raw bytes both ways) and makes what this returns.
    public static func open<Output: Sendable>(_ endpoint: StandEndpoint, group: any EventLoopGroup,
                                              initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Output>) async throws -> Output {
        switch endpoint {
        case .serial(let path, let baud):
            let fd = try SerialPort.open(path: path, baud: baud)
            return try await wrap(fd: fd, group: group, initializer: initializer)
        case .bluetooth(let address, let channel):
            let fd = try await NIOThreadPool.singleton.runIfActive { try Bluetooth.connect(address: address, channel: channel) }
            return try await wrap(fd: fd, group: group, initializer: initializer)
        case .udp(let host, let port):
            return try await NetworkTransport.connectUDP(host: host, port: port, group: group, initializer: initializer)
        case .tcp(let host, let port):
            return try await NetworkTransport.connectTCP(host: host, port: port, group: group, initializer: initializer)
        case .unix(let path):
            return try await ClientBootstrap(group: group).connect(unixDomainSocketPath: path, channelInitializer: initializer)
        case .video(let path):
            return try await wrap(fd: try VideoDeviceLink.open(path: path), group: group, initializer: initializer)
        case .onvif(let address):
            return try await wrap(fd: try ONVIFLink.open(address), group: group, initializer: initializer)
        }
    }

    private static func wrap<Output: Sendable>(fd: Int32, group: any EventLoopGroup,
                                               initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Output>) async throws -> Output {
        try await NIOPipeBootstrap(group: group).takingOwnershipOfDescriptor(inputOutput: fd, channelInitializer: initializer)
    }
}
