import DockDrivers
import NIOCore
import NIOPosix

/// Sends WS-Discovery Probes from one UDP socket and gathers the ProbeMatches that answer them
/// until the deadline. Each type is probed in its own Probe, and each Probe is sent twice 100 ms
/// apart (SOAP-over-UDP's repeat for multicast: a datagram may be lost); a device answers each
/// message once.
enum ONVIFProbe {
    struct Result: Sendable {
        /// One per device (by endpoint reference), in the order they first answered.
        var matches: [WSDiscovery.Match] = []
        /// Datagrams that answered none of the Probes because they were not WS-Discovery at all.
        var unreadable: [String] = []
    }

    static func run(to target: SocketAddress, seconds: Double) throws -> Result {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        var generator = SystemRandomNumberGenerator()
        let probes = WSDiscovery.DeviceType.allCases.map { type in
            let id = WSDiscovery.messageID(random: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
            return (id: id, datagram: WSDiscovery.probe(for: type, messageID: id))
        }
        let done = group.next().makePromise(of: Result.self)
        let messageIDs = Set(probes.map(\.id))
        let channel = try DatagramBootstrap(group: group)
            .channelOption(.socketOption(.so_broadcast), value: 1)
            // A camera with many scopes answers in more than the 2 KB NIO reads a datagram into by
            // default; SOAP-over-UDP allows up to the UDP maximum, and a cut answer is not XML.
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_507))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collector(messageIDs: messageIDs, done: done)) }
            }
            .bind(host: target.protocol == .inet6 ? "::" : "0.0.0.0", port: 0).wait()
        // One hop: a Probe is for this network only (what the specification's TTL of 1 says). An IP
        // option: at the socket level the same number is SO_RCVBUFFORCE, and a receive buffer of one
        // byte drops all but the first answers of a burst.
        if target.protocol == .inet {
            try channel.setOption(.ipOption(.ip_multicast_ttl), value: 1).wait()
        }
        for repeatAt in [TimeAmount.zero, .milliseconds(100)] {
            channel.eventLoop.scheduleTask(in: repeatAt) {
                for probe in probes {
                    var buffer = channel.allocator.buffer(capacity: probe.datagram.count)
                    buffer.writeBytes(probe.datagram)
                    channel.writeAndFlush(AddressedEnvelope(remoteAddress: target, data: buffer), promise: nil)
                }
            }
        }
        channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) { channel.close(promise: nil) }
        return try done.futureResult.wait()
    }

    /// Lives on the channel's event loop; hands what it gathered over when the channel closes.
    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let messageIDs: Set<String>
        let done: EventLoopPromise<Result>
        var result = Result()

        init(messageIDs: Set<String>, done: EventLoopPromise<Result>) {
            self.messageIDs = messageIDs; self.done = done
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            do {
                for match in try WSDiscovery.matches(in: Array(envelope.data.readableBytesView), answering: messageIDs) {
                    if let known = result.matches.firstIndex(where: { $0.endpoint == match.endpoint }) {
                        // The same device answering the other type's Probe, maybe from another address.
                        for address in match.addresses where !result.matches[known].addresses.contains(address) {
                            result.matches[known].addresses.append(address)
                        }
                    } else {
                        result.matches.append(match)
                    }
                }
            } catch {
                result.unreadable.append("\(envelope.remoteAddress): \(error)")
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // An ICMP "unreachable" for a directed Probe arrives as a read error: no device there.
            result.unreadable.append("\(error)")
        }

        func channelInactive(context: ChannelHandlerContext) {
            done.succeed(result)
        }
    }
}
