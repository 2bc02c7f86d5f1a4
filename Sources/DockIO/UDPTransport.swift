import NIOCore
import NIOPosix

/// UDP and TCP links to network stands (VISCA-over-IP cameras, MAVLink gimbals on UDP): the
/// driver sees plain bytes, one datagram per read, as on a serial link.
public enum NetworkTransport {
    /// Binds an ephemeral local port and exchanges datagrams with `host:port` only; datagrams from
    /// any other address are dropped.
    static func connectUDP<Output: Sendable>(host: String, port: Int, group: any EventLoopGroup,
                                             initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Output>) async throws -> Output {
        let remote = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let any = remote.protocol == .inet6 ? "::" : "0.0.0.0"
        return try await DatagramBootstrap(group: group)
            .bind(host: any, port: 0) { channel in
                do {
                    try channel.pipeline.syncOperations.addHandler(DatagramBytesHandler(remote: remote))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return initializer(channel)
            }
    }

    static func connectTCP<Output: Sendable>(host: String, port: Int, group: any EventLoopGroup,
                                             initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Output>) async throws -> Output {
        try await ClientBootstrap(group: group)
            // A TCP option: at the socket level the same number is SO_DEBUG, which only
            // CAP_NET_ADMIN may set, and the unprivileged daemon's connect failed with EACCES.
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port, channelInitializer: initializer)
    }
}

/// Datagrams ⇄ byte buffers for one peer.
final class DatagramBytesHandler: ChannelDuplexHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private let remote: SocketAddress
    init(remote: SocketAddress) { self.remote = remote }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        guard envelope.remoteAddress == remote else { return }
        context.fireChannelRead(wrapInboundOut(envelope.data))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(wrapOutboundOut(AddressedEnvelope(remoteAddress: remote, data: unwrapOutboundIn(data))), promise: promise)
    }
}
