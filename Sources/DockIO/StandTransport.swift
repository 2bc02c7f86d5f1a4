import NIOCore
import NIOPosix

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
