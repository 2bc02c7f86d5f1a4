import DockDrivers
import NIOCore
import NIOPosix

/// Runs one `LinkSession` over one real link in real time, pinned to the link's event loop: bytes
/// in → session → bytes out in the same call, and one timer armed for the session's `nextTick` (no
/// periodic tick). It runs until the session asks to close the link or the link closes, and hands
/// back the session as it ended. `now` is the host clock (s) the session's times are on; `deliver`
/// gets every output, on the loop, before its writes go out.
public enum LinkSessionHost {
    public static func run<Session: LinkSession>(_ session: Session, over endpoint: StandEndpoint,
                                                 group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                                                 now: @escaping @Sendable () -> Double,
                                                 deliver: @escaping @Sendable (Session.Output) -> Void) async throws -> Session {
        let ended = try await StandTransport.open(endpoint, group: group) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                let handler = LinkSessionHandler(session: session, now: now, deliver: deliver, loop: channel.eventLoop)
                try channel.pipeline.syncOperations.addHandler(handler)
                return handler.ended.futureResult
            }
        }
        return try await ended.get()
    }
}

/// The session and its timer, confined to the link's event loop.
private final class LinkSessionHandler<Session: LinkSession>: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private var session: Session
    private let now: @Sendable () -> Double
    private let deliver: @Sendable (Session.Output) -> Void
    private let loop: any EventLoop
    let ended: EventLoopPromise<Session>
    private var channel: (any Channel)?
    private var timer: Scheduled<Void>?
    /// Why the link is being closed from our side (the session's reason, or an I/O error).
    private var closeReason: String?

    init(session: Session, now: @escaping @Sendable () -> Double, deliver: @escaping @Sendable (Session.Output) -> Void, loop: any EventLoop) {
        self.session = session
        self.now = now
        self.deliver = deliver
        self.loop = loop
        ended = loop.makePromise(of: Session.self)
    }

    func channelActive(context: ChannelHandlerContext) {
        channel = context.channel
        apply(session.handle(link: .opened, at: now()))
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        // `getBytes` copies with one memcpy (a walk of `readableBytesView` goes byte by byte).
        apply(session.handle(link: .received(buffer.getBytes(at: buffer.readerIndex, length: buffer.readableBytes) ?? []), at: now()))
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        channel = nil
        let reason = closeReason ?? "the stand closed the link (EOF or hangup)"
        deliver(session.handle(link: .closed(reason: reason), at: now()))
        ended.succeed(session)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close("link error: \(error)")
    }

    private func apply(_ out: Session.Output) {
        deliver(out)
        if !out.writes.isEmpty, let channel {
            for bytes in out.writes { channel.write(ByteBuffer(bytes: bytes), promise: nil) }
            channel.flush()
        }
        if let reason = out.closeLink { close(reason) } else { armTimer() }
    }

    private func close(_ reason: String) {
        if closeReason == nil { closeReason = reason }
        timer?.cancel()
        timer = nil
        channel?.close(promise: nil)
    }

    private func armTimer() {
        timer?.cancel()
        timer = nil
        guard closeReason == nil, channel != nil, let due = session.nextTick else { return }
        let delay = Int64((max(0, due - now()) * 1e9).rounded(.up))
        let bound = NIOLoopBound(self, eventLoop: loop)
        timer = loop.scheduleTask(in: .nanoseconds(delay)) { bound.value.timerFired() }
    }

    private func timerFired() {
        timer = nil
        if let due = session.nextTick, due <= now() { apply(session.handle(link: .tick, at: now())) } else { armTimer() }
    }
}
