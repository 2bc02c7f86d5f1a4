import CV4L2
import DockDrivers
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An ONVIF camera as a byte link: `ONVIFWire` requests from the pure driver become HTTP POSTs of
/// SOAP envelopes (swift-nio's HTTP/1.1 client codec), one at a time on a thread of its own, so a
/// slow or silent camera never blocks a stand's event loop. This end holds the password (read
/// once at open from a file no one else can read) and adds the WS-Security UsernameToken; the
/// driver and everything above it never see it. Each request has a deadline and each reply a size
/// cap: a camera that does not answer, answers garbage or too much is an `E` line, and the driver
/// gives the link up. A request the driver abandons (`ONVIFWire.abandon`) has its connection
/// closed at once, made or still being made, and the next request goes on a new one.
public enum ONVIFLink {
    public struct OpenError: Error, CustomStringConvertible {
        public let description: String
    }

    /// How long one request may take, connect to last byte, s.
    public static let requestTimeout: Int64 = 5

    /// Reads the password and starts the thread; returns the descriptor of the link's host end.
    public static func open(_ address: ONVIFAddress, environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) throws(OpenError) -> Int32 {
        var password: String?
        if address.user != nil { password = try readPassword(address.credentialsPath(environment: environment)) }
        var ends: [Int32] = [-1, -1]
        guard dockd_stream_socketpair(&ends) == 0 else { throw OpenError(description: "cannot make the link of \(address): \(String(cString: strerror(errno)))") }
        let server = Server(address: address, password: password, socket: ends[1])
        guard DetachedThread.start({ server.serve() }) else {
            close(ends[0]); close(ends[1])
            throw OpenError(description: "cannot start the thread of \(address)")
        }
        return ends[0]
    }

    /// The password file's first line: refused when others may read it (like ssh's keys), so a
    /// password left world-readable is noticed rather than used.
    static func readPassword(_ path: String) throws(OpenError) -> String {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw OpenError(description: "cannot read the camera's password file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw OpenError(description: "\(path) is not a file") }
        guard status.st_mode & 0o077 == 0 else {
            throw OpenError(description: "\(path) may be read by others (mode \(String(status.st_mode & 0o777, radix: 8))): chmod 600 it")
        }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &bytes, bytes.count)
        guard count >= 0 else { throw OpenError(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
        let line = bytes[..<count].prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        guard !line.isEmpty else { throw OpenError(description: "\(path) holds no password") }
        return String(decoding: line, as: UTF8.self)
    }

    private struct Server: Sendable {
        let address: ONVIFAddress
        let password: String?
        let socket: Int32

        /// Answers requests until the host's end closes.
        func serve() {
            var connection: KeptConnection?
            defer {
                connection?.channel.close(promise: nil)
                close(socket)
            }
            guard let host = ONVIFHostRequests(socket: socket) else { return }
            var digest = HTTPDigest()
            while let frame = host.next() {
                // (An abandonment read here came after its request's reply: nothing to give up.)
                guard case .request(let request) = frame else { continue }
                let reply = answer(request, host: host, digest: &digest, connection: &connection)
                guard DetachedThread.writeAll(socket, ONVIFWire.encode(reply)) else { return }
            }
        }

        /// One request: with a UsernameToken where the driver asks for authentication, and HTTP
        /// Digest where the camera asked for it (a 401 with a Digest challenge is answered once,
        /// then its challenge is kept for the requests after).
        private func answer(_ request: ONVIFWire.Request, host: ONVIFHostRequests, digest: inout HTTPDigest,
                            connection: inout KeptConnection?) -> ONVIFWire.Reply {
            var security: String?
            if request.authenticate, let user = address.user, let password {
                let created = ONVIFSOAP.created(wallClock() + request.clockOffset)
                security = ONVIFSOAP.usernameToken(user: user, password: password, nonce: random(16), created: created)
            }
            let envelope = ONVIFSOAP.envelope(body: request.body, security: security)
            func authorization() -> String? {
                guard request.authenticate, let user = address.user, let password else { return nil }
                let cnonce = random(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
                return digest.authorization(user: user, password: password, method: "POST", uri: request.path, cnonce: cnonce)
            }
            do {
                var reply = try post(path: request.path, envelope: envelope, authorization: authorization(), host: host, connection: &connection)
                if reply.status == 401, request.authenticate, address.user != nil, password != nil,
                   let challenge = reply.challenge.flatMap(HTTPDigest.challenge) {
                    digest.accept(challenge)
                    reply = try post(path: request.path, envelope: envelope, authorization: authorization(), host: host, connection: &connection)
                }
                return .response(status: reply.status, wallClock: wallClock(), body: reply.body)
            } catch {
                return .failure("\(error)")
            }
        }

        private func random(_ count: Int) -> [UInt8] {
            var generator = SystemRandomNumberGenerator()
            return (0..<count).map { _ in generator.next() }
        }

        /// One POST on the connection kept from the last (HTTP/1.1 keep-alive: a camera polled at
        /// 10 Hz and steered besides would otherwise take 20 connections a second), or on a new
        /// one. A kept connection found closed by the camera before the request went goes for a
        /// new one; one that closes after it went fails the request (sent again, a RelativeMove
        /// would move twice).
        private func post(path: String, envelope: [UInt8], authorization: String?, host: ONVIFHostRequests,
                          connection: inout KeptConnection?) throws -> Reply {
            if let kept = connection, kept.channel.isActive {
                do {
                    return try exchange(on: kept, path: path, envelope: envelope, authorization: authorization, host: host, connection: &connection)
                } catch let failure as LinkError where failure.neverSent {
                    // (closed by the camera between requests: on a fresh connection)
                }
            }
            connection?.channel.close(promise: nil)
            connection = try connect(host: host)
            return try exchange(on: connection!, path: path, envelope: envelope, authorization: authorization, host: host, connection: &connection)
        }

        /// A new connection, the host's requests read while it is made: a STOP abandoning the
        /// request ends a connect still in progress (a camera whose accept queue is full drops the
        /// SYN, and the kernel sends it again only 1 s, 3 s later) rather than wait up to the
        /// request's timeout.
        private func connect(host: ONVIFHostRequests) throws -> KeptConnection {
            // One loop for the connection, its deadlines and its replies.
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let attempt = ConnectAttempt()
            let connected = ClientBootstrap(group: loop)
                .connectTimeout(.seconds(ONVIFLink.requestTimeout))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try attempt.begin(channel)
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ReplyCollector(limit: ONVIFWire.maximumBody))
                    }
                }
                .connect(host: address.host, port: address.port)
            let (result, abandoned) = host.wait(for: connected) { attempt.abandon() }
            do {
                let channel = try result.get()
                if abandoned {
                    channel.close(promise: nil)
                    throw LinkError.abandoned
                }
                let collector = try channel.eventLoop.submit {
                    NIOLoopBound(try channel.pipeline.syncOperations.handler(type: ReplyCollector.self), eventLoop: channel.eventLoop)
                }.wait()
                return KeptConnection(channel: channel, collector: collector)
            } catch let failure as LinkError {
                throw failure
            } catch {
                throw abandoned ? LinkError.abandoned : LinkError(description: "cannot connect to \(address.host):\(address.port): \(error)")
            }
        }

        /// The request on `kept`, and its reply; the connection is let go after a reply that
        /// ends it (Connection: close), a failure, a timeout (a late reply must not be taken
        /// for the next request's) or the host's abandoning the request (closed before the next
        /// request connects anew, so the camera has one request in flight from dockd).
        private func exchange(on kept: KeptConnection, path: String, envelope: [UInt8], authorization: String?,
                              host: ONVIFHostRequests, connection: inout KeptConnection?) throws -> Reply {
            let channel = kept.channel, collector = kept.collector
            let promise = channel.eventLoop.makePromise(of: Reply.self)
            channel.eventLoop.execute { collector.value.expect(promise) }
            let deadline = channel.eventLoop.scheduleTask(in: .seconds(ONVIFLink.requestTimeout)) {
                promise.fail(LinkError(description: "no reply in \(ONVIFLink.requestTimeout) s"))
            }
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: address.host.contains(":") ? "[\(address.host)]:\(address.port)" : "\(address.host):\(address.port)")
            headers.add(name: "Content-Type", value: "application/soap+xml; charset=utf-8")
            headers.add(name: "Content-Length", value: "\(envelope.count)")
            if let authorization { headers.add(name: "Authorization", value: authorization) }
            let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path, headers: headers)
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: envelope))), promise: nil)
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            defer { deadline.cancel() }
            let (result, abandoned) = host.wait(for: promise.futureResult) { _ = try? channel.close().wait() }
            do {
                if abandoned { throw LinkError.abandoned }
                let reply = try result.get()
                if !reply.keepAlive {
                    channel.close(promise: nil)
                    connection = nil
                }
                return reply
            } catch {
                channel.close(promise: nil)
                connection = nil
                throw error
            }
        }

        private func wallClock() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }
    }

    /// An HTTP response: its status, body and Digest challenge (WWW-Authenticate), if any, and
    /// whether the connection stays open after it.
    struct Reply: Sendable {
        var status = 0
        var body: [UInt8] = []
        var challenge: String?
        var keepAlive = true
    }

    struct LinkError: Error, CustomStringConvertible {
        let description: String
        /// The connection had ended before the request could go.
        var neverSent = false

        /// The host gave the request up (`ONVIFWire.abandon`) before its reply.
        static let abandoned = LinkError(description: "abandoned by dockd before its reply")
    }

    /// A connection to the camera kept between requests, and the handler that gathers its replies.
    struct KeptConnection: Sendable {
        let channel: any Channel
        let collector: NIOLoopBound<ReplyCollector>
    }

    /// The channels of one connect (one per address tried; begun on the loop, abandoned from the
    /// link's thread): an abandonment closes those begun and refuses those after, which fails the
    /// connect.
    final class ConnectAttempt: Sendable {
        private let state = Mutex<(channels: [any Channel], abandoned: Bool)>(([], false))

        func begin(_ channel: any Channel) throws {
            try state.withLock {
                guard !$0.abandoned else { throw LinkError.abandoned }
                $0.channels.append(channel)
            }
        }

        func abandon() {
            let begun = state.withLock {
                $0.abandoned = true
                return $0.channels
            }
            for channel in begun { channel.close(promise: nil) }
        }
    }

    /// Gathers each HTTP response (status, body of at most `limit` bytes, Digest challenge,
    /// keep-alive) into the promise of the request awaiting it; a connection that closes first, a
    /// parse error or a body over the limit fails it and ends the connection.
    final class ReplyCollector: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        let limit: Int
        private var waiting: EventLoopPromise<Reply>?
        private var reply = Reply()
        private var closed = false

        init(limit: Int) { self.limit = limit }

        /// The next response is for `promise`.
        func expect(_ promise: EventLoopPromise<Reply>) {
            guard !closed else {
                promise.fail(LinkError(description: "the camera closed the connection", neverSent: true))
                return
            }
            waiting = promise
            reply = Reply()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                reply.status = Int(head.status.code)
                reply.challenge = head.headers["WWW-Authenticate"].first { $0.lowercased().hasPrefix("digest ") }
                reply.keepAlive = head.isKeepAlive
            case .body(let buffer):
                guard reply.body.count + buffer.readableBytes <= limit else {
                    fail(LinkError(description: "a reply over \(limit) bytes"))
                    context.close(promise: nil)
                    return
                }
                reply.body += buffer.readableBytesView
            case .end:
                waiting?.succeed(reply)
                waiting = nil
                if !reply.keepAlive { context.close(promise: nil) }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            closed = true
            fail(LinkError(description: "the camera closed the connection before its reply ended"))
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            fail(LinkError(description: "a reply that is not HTTP (\(error))"))
            context.close(promise: nil)
        }

        private func fail(_ error: LinkError) {
            waiting?.fail(error)
            waiting = nil
        }
    }
}
