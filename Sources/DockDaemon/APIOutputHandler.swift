import Logging
import NIOCore

/// The stage of an API connection next to the socket. Reading stops while the socket does not take what
/// was written (the client is not reading). Notifications (EventHub) go out as they come, between
/// replies; a subscriber whose notifications keep arriving while its socket is full is dropped after
/// `EventHub.queueLimit` of them.
final class APIOutputHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let id: Int
    private let hub: EventHub
    private let logger: Logger
    private var context: ChannelHandlerContext?
    /// A read NIO asked for while the socket was full: forwarded once it takes bytes again.
    private var readHeld = false
    /// Notifications written while the socket was full.
    private var blockedNotifications = 0
    private var closing = false

    init(id: Int, hub: EventHub, logger: Logger) {
        self.id = id
        self.hub = hub
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        hub.register(client: id, sink: EventHub.Sink(loop: context.eventLoop, handler: NIOLoopBound(self, eventLoop: context.eventLoop)))
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        hub.remove(client: id)
        context.fireChannelInactive()
    }

    // MARK: - Back-pressure

    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            context.read()
        } else {
            readHeld = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { blockedNotifications = 0 }
        // The stages behind run what waited for the socket first; then more is read from it.
        context.fireChannelWritabilityChanged()
        if readHeld, context.channel.isWritable {
            readHeld = false
            context.read()
        }
    }

    // MARK: - Notifications

    /// One encoded notification for this client (on its loop).
    func deliver(_ line: ByteBuffer) {
        guard let context, !closing else { return }
        if !context.channel.isWritable {
            blockedNotifications += 1
            if blockedNotifications > EventHub.queueLimit {
                closing = true
                hub.dropped(client: id)
                logger.warning("a client stopped reading its notifications; dropping it", metadata: ["client": "\(id)"])
                // Closed from a task of its own: this call may come from inside a stand's step.
                context.eventLoop.assumeIsolated().execute { context.close(promise: nil) }
                return
            }
        }
        context.writeAndFlush(wrapOutboundOut(line), promise: nil)
    }
}
