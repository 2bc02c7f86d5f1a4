#if canImport(Glibc)
import Glibc
#endif
import DockIO
import DockJSON
import Logging
import NIOCore

/// One API connection, on its channel's event loop: splits what arrives into lines, runs each
/// request (APIMethods), and writes the replies in request order, gathered into one write per read.
/// A request a stand must answer (a command, a read of its state) completes later; the replies
/// behind it wait for it. Notifications (EventHub) are written as they come, between replies.
///
/// Back-pressure: reading stops while `maxInFlight` requests wait for a stand or while the socket
/// does not take what was written (the client is not reading). A subscriber whose notifications keep
/// arriving while its socket is full is dropped after `EventHub.queueLimit` of them.
final class APIClientHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let maxLineLength = 1 << 20
    /// Requests of one connection that may wait for a stand at once.
    static let maxInFlight = 128

    private let id: Int
    private let api: APIMethods
    private let hub: EventHub
    private let logger: Logger
    private var session: ClientSession
    private var context: ChannelHandlerContext?

    private var lines = LineFrameDecoder(maximumLength: APIClientHandler.maxLineLength)
    /// Bytes received and not yet split into lines.
    private var inbound: ByteBuffer?
    /// Replies gathered while handling one read, written and flushed together.
    private var output: ByteBuffer?
    /// Replies in request order from the first one still waiting for a stand; `firstSlot` numbers it.
    private var slots = CircularBuffer<Slot>()
    private var firstSlot = 0
    private var inRead = false
    private var inputClosed = false
    /// A read NIO asked for while reading was paused: forwarded once it resumes.
    private var readHeld = false
    /// Notifications written while the socket was full.
    private var blockedNotifications = 0
    private var closing = false

    private struct Slot {
        /// The reply's bytes once known (nil and `done`: a notification request, nothing to send).
        var bytes: ByteBuffer?
        var done: Bool
    }

    init(id: Int, api: APIMethods, hub: EventHub, logger: Logger) {
        self.id = id
        self.api = api
        self.hub = hub
        self.logger = logger
        self.session = ClientSession(id: id, peer: nil)
    }

    // MARK: - Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        // SO_PEERCRED, read on the channel's own loop: the future is complete before any request.
        if let provider = context.channel as? any SocketOptionProvider {
            provider.unsafeGetSocketOption(level: .socket, name: .init(rawValue: SO_PEERCRED)).assumeIsolated()
                .whenSuccess { (cred: KernelUcred) in
                    self.session = ClientSession(id: self.id, peer: PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid))
                }
        }
        hub.register(client: id, sink: EventHub.Sink(loop: context.eventLoop, handler: NIOLoopBound(self, eventLoop: context.eventLoop)))
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        hub.remove(client: id)
        api.clientGone(id)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("client \(id): \(error)")
        context.close(promise: nil)
    }

    // MARK: - Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if inbound == nil || inbound!.readableBytes == 0 {
            inbound = bytes
        } else {
            inbound!.writeBuffer(&bytes)
        }
        inRead = true
        processLines()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        inRead = false
        flush()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case ChannelEvent.inputClosed = event else { return context.fireUserInboundEventTriggered(event) }
        // `echo REQUEST | socat - UNIX-CONNECT:…` shuts its side down after the request: the
        // replies still go out, then the connection closes.
        inputClosed = true
        // (an empty buffer still lets the splitter report a line cut off over the limit)
        if inbound == nil { inbound = context.channel.allocator.buffer(capacity: 0) }
        processLines()
        closeWhenAnswered()
    }

    /// Handles the lines received so far, while reading is not paused.
    private func processLines() {
        while !closing, !paused, let item = nextLine() {
            switch item {
            case .oversize(let bytes):
                reply(nil, .failure(.lineTooLong(bytes, limit: Self.maxLineLength)))
            case .line(let line):
                handle(line)
            }
        }
        if let buffer = inbound {
            if buffer.readableBytes == 0 {
                inbound = nil
            } else if buffer.readerIndex > 65536 {
                inbound!.discardReadBytes()
            }
        }
        if !inRead { flush() }
    }

    private func nextLine() -> ClientLine? {
        guard var buffer = inbound else { return nil }
        inbound = nil  // the buffer stays uniquely referenced while the decoder moves its reader index
        defer { inbound = buffer }
        return inputClosed ? try? lines.decodeLast(buffer: &buffer, seenEOF: true) : try? lines.decode(buffer: &buffer)
    }

    private func handle(_ line: ByteBuffer) {
        let parsed = line.withUnsafeReadableBytes { JSONRPCRequest.parse($0) }
        let request: JSONRPCRequest
        switch parsed {
        case .failure(let failure):
            if !failure.isNotification { reply(failure.id ?? .null, .failure(failure.error)) }
            return
        case .success(let r):
            request = r
        }
        let answer: APIMethods.Answer
        do {
            answer = try api.call(request.method, Params(request.params), session: session)
        } catch {
            if let id = request.id { reply(id, .failure(error)) }
            return
        }
        guard let id = request.id else { return }  // a notification: carried out, never answered
        switch answer {
        case .value(let value): reply(id, .success(.value(value)))
        case .encoded(let bytes): reply(id, .success(.encoded(bytes)))
        case .later(let future):
            let slot = firstSlot + slots.count
            slots.append(Slot(bytes: nil, done: false))
            guard let loop = context?.eventLoop else { return }
            future.hop(to: loop).assumeIsolated().whenComplete { result in
                self.complete(slot, id: id, result.mapError { RPCError(any: $0) })
            }
        }
    }

    /// A reply known now: behind the ones still waiting, or straight into this read's output.
    private func reply(_ id: RequestID?, _ result: Result<APIMethods.Answer.Known, RPCError>) {
        guard let context else { return }
        if slots.isEmpty {
            if output == nil { output = context.channel.allocator.buffer(capacity: 512) }
            Self.write(id ?? .null, result, into: &output!)
        } else {
            var bytes = context.channel.allocator.buffer(capacity: 256)
            Self.write(id ?? .null, result, into: &bytes)
            slots.append(Slot(bytes: bytes, done: true))
        }
    }

    private func complete(_ slot: Int, id: RequestID, _ result: Result<JSONValue, RPCError>) {
        guard !closing, let context else { return }
        var bytes = context.channel.allocator.buffer(capacity: 256)
        Self.write(id, result.map { .value($0) }, into: &bytes)
        slots[offset: slot - firstSlot] = Slot(bytes: bytes, done: true)
        let wasPaused = paused
        while let first = slots.first, first.done {
            slots.removeFirst()
            firstSlot += 1
            if var bytes = first.bytes {
                if output == nil { output = context.channel.allocator.buffer(capacity: bytes.readableBytes) }
                output!.writeBuffer(&bytes)
            }
        }
        if !inRead { flush() }
        if wasPaused, !paused { resume() }
        if inputClosed { closeWhenAnswered() }
    }

    private static func write(_ id: RequestID, _ result: Result<APIMethods.Answer.Known, RPCError>, into buffer: inout ByteBuffer) {
        switch result {
        case .success(let known):
            buffer.writeStaticString("{\"id\":")
            buffer.writeString(id.text)
            buffer.writeStaticString(",\"jsonrpc\":\"2.0\",\"result\":")
            switch known {
            case .value(let value): buffer.writeJSON(value)
            case .encoded(var bytes): buffer.writeBuffer(&bytes)
            }
            buffer.writeStaticString("}\n")
        case .failure(let error):
            buffer.writeStaticString("{\"error\":")
            buffer.writeJSON(error.json)
            buffer.writeStaticString(",\"id\":")
            buffer.writeString(id.text)
            buffer.writeStaticString(",\"jsonrpc\":\"2.0\"}\n")
        }
    }

    private func flush() {
        guard let context, let bytes = output, bytes.readableBytes > 0 else { return }
        output = nil
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    // MARK: - Back-pressure

    private var paused: Bool {
        slots.count >= Self.maxInFlight || !(context?.channel.isWritable ?? false)
    }

    func read(context: ChannelHandlerContext) {
        if paused || inputClosed {
            readHeld = true
        } else {
            context.read()
        }
    }

    /// Reading may go on: the lines already received first, then more from the socket (the
    /// buffer may still hold the start of a line, which only more bytes complete).
    private func resume() {
        processLines()
        if readHeld, !paused {
            readHeld = false
            context?.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            blockedNotifications = 0
            resume()
        }
        context.fireChannelWritabilityChanged()
    }

    /// After a half-close: once every reply is out, the connection closes.
    private func closeWhenAnswered() {
        guard let context, !closing, slots.isEmpty, inbound == nil else { return }
        closing = true
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(output ?? context.channel.allocator.buffer(capacity: 0)), promise: written)
        output = nil
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
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
