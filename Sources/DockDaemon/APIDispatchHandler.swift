#if canImport(Glibc)
import Glibc
#endif
import DockJSON
import Logging
import NIOCore

/// What an API connection runs its requests against: dockd's methods, or a test's.
protocol APIRequestRunner {
    func call(_ name: String, _ p: Params, session: ClientSession) throws(RPCError) -> APIMethods.Answer
    /// The client disconnected (or was dropped): its leases end and what it changed reverts.
    func clientGone(_ id: Int)
}

extension APIMethods: APIRequestRunner {}

/// The last stage of an API connection: runs each request and writes the replies in request order,
/// gathered into one write per read. A request a stand must answer (a command, a read of its state) completes
/// later; the replies behind it wait for it.
///
/// Back-pressure: while `maxInFlight` requests wait for a stand, or the socket does not take what was
/// written, the requests that arrive wait here unrun and reading stops. After the client shuts its
/// side down (`echo REQUEST | socat - UNIX-CONNECT:…`), the replies still go out, then the connection
/// closes.
final class APIDispatchHandler: ChannelDuplexHandler {
    typealias InboundIn = ParsedRequest
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let id: Int
    private let methods: any APIRequestRunner
    private let maxInFlight: Int
    private let logger: Logger
    private var session: ClientSession
    private var context: ChannelHandlerContext?

    /// Requests that arrived while paused, in order.
    private var waiting = CircularBuffer<ParsedRequest>()
    /// Replies in request order from the first one still waiting for a stand; `firstSlot` numbers it.
    private var slots = CircularBuffer<Slot>()
    private var firstSlot = 0
    /// Replies gathered while handling one read, written and flushed together.
    private var output: ByteBuffer?
    private var inRead = false
    private var inputClosed = false
    /// A read NIO asked for while reading was paused: forwarded once it resumes.
    private var readHeld = false
    private var closing = false

    private struct Slot {
        /// The reply's bytes once known (nil and `done`: a notification request, nothing to send).
        var bytes: ByteBuffer?
        var done: Bool
    }

    init(id: Int, methods: any APIRequestRunner, maxInFlight: Int, logger: Logger) {
        self.id = id
        self.methods = methods
        self.maxInFlight = maxInFlight
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
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        methods.clientGone(id)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("client \(id): \(error)")
        context.close(promise: nil)
    }

    // MARK: - Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        inRead = true
        let request = unwrapInboundIn(data)
        if paused || !waiting.isEmpty {
            waiting.append(request)
        } else {
            run(request)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        inRead = false
        flush()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            // (the framing stage passed the last line on before this, outside any read)
            inputClosed = true
            inRead = false
            flush()
            closeWhenAnswered()
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func run(_ parsed: ParsedRequest) {
        let request: JSONRPCRequest
        switch parsed {
        case .refused(let id, let error):
            return reply(id, .failure(error))
        case .request(let r):
            request = r
        }
        let answer: APIMethods.Answer
        do {
            answer = try methods.call(request.method, Params(request.params), session: session)
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
    private func reply(_ id: RequestID, _ result: Result<APIMethods.Answer.Known, RPCError>) {
        guard let context else { return }
        if slots.isEmpty {
            if output == nil { output = context.channel.allocator.buffer(capacity: 512) }
            Self.write(id, result, into: &output!)
        } else {
            var bytes = context.channel.allocator.buffer(capacity: 256)
            Self.write(id, result, into: &bytes)
            slots.append(Slot(bytes: bytes, done: true))
        }
    }

    private func complete(_ slot: Int, id: RequestID, _ result: Result<JSONValue, RPCError>) {
        guard !closing, let context else { return }
        var bytes = context.channel.allocator.buffer(capacity: 256)
        Self.write(id, result.map { .value($0) }, into: &bytes)
        slots[offset: slot - firstSlot] = Slot(bytes: bytes, done: true)
        while let first = slots.first, first.done {
            slots.removeFirst()
            firstSlot += 1
            if var bytes = first.bytes {
                if output == nil { output = context.channel.allocator.buffer(capacity: bytes.readableBytes) }
                output!.writeBuffer(&bytes)
            }
        }
        resume()
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
        slots.count >= maxInFlight || !(context?.channel.isWritable ?? false)
    }

    private var mayRead: Bool { !paused && waiting.isEmpty && !inputClosed }

    func read(context: ChannelHandlerContext) {
        if mayRead {
            context.read()
        } else {
            readHeld = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { resume() }
        context.fireChannelWritabilityChanged()
    }

    /// Requests may run again: the ones that waited first, then more from the socket.
    private func resume() {
        while !closing, !paused, let next = waiting.popFirst() { run(next) }
        if !inRead { flush() }
        if readHeld, mayRead {
            readHeld = false
            context?.read()
        }
        if inputClosed { closeWhenAnswered() }
    }

    /// After a half-close: once every reply is out, the connection closes.
    private func closeWhenAnswered() {
        guard let context, !closing, slots.isEmpty, waiting.isEmpty else { return }
        closing = true
        let sent = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(output ?? context.channel.allocator.buffer(capacity: 0)), promise: sent)
        output = nil
        sent.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
