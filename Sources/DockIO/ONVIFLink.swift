import CV4L2
import DockDrivers
import NIOCore
import NIOHTTP1
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// An ONVIF camera as a byte link: `ONVIFWire` requests from the pure driver become HTTP POSTs of
/// SOAP envelopes (swift-nio's HTTP/1.1 client codec), one at a time on a thread of its own, so a
/// slow or silent camera never blocks a stand's event loop. This end holds the password (read
/// once at open from a file no one else can read) and adds the WS-Security UsernameToken; the
/// driver and everything above it never see it. Each request has a deadline and each reply a size
/// cap: a camera that does not answer, answers garbage or too much is an `E` line, and the driver
/// gives the link up.
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
            defer { close(socket) }
            var decoder = ONVIFWire.Decoder()
            var digest = HTTPDigest()
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(socket, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0, let frames = decoder.feed(Array(chunk[0..<count])) else { return }
                for case .request(let request) in frames {
                    guard DetachedThread.writeAll(socket, ONVIFWire.encode(answer(request, digest: &digest))) else { return }
                }
            }
        }

        /// One request: with a UsernameToken where the driver asks for authentication, and HTTP
        /// Digest where the camera asked for it (a 401 with a Digest challenge is answered once,
        /// then its challenge is kept for the requests after).
        private func answer(_ request: ONVIFWire.Request, digest: inout HTTPDigest) -> ONVIFWire.Reply {
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
                var reply = try post(path: request.path, envelope: envelope, authorization: authorization())
                if reply.status == 401, request.authenticate, address.user != nil, password != nil,
                   let challenge = reply.challenge.flatMap(HTTPDigest.challenge) {
                    digest.accept(challenge)
                    reply = try post(path: request.path, envelope: envelope, authorization: authorization())
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

        private func post(path: String, envelope: [UInt8], authorization: String?) throws -> Reply {
            // One loop for the connection, its deadline and its promise.
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let promise = loop.makePromise(of: Reply.self)
            let channel: any Channel
            do {
                channel = try ClientBootstrap(group: loop)
                    .connectTimeout(.seconds(ONVIFLink.requestTimeout))
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHTTPClientHandlers()
                            try channel.pipeline.syncOperations.addHandler(ReplyCollector(promise: promise, limit: ONVIFWire.maximumBody))
                        }
                    }
                    .connect(host: address.host, port: address.port).wait()
            } catch {
                // A promise must be completed before it goes (NIO traps on a leaked one).
                promise.fail(error)
                throw LinkError(description: "cannot connect to \(address.host):\(address.port): \(error)")
            }
            let deadline = channel.eventLoop.scheduleTask(in: .seconds(ONVIFLink.requestTimeout)) {
                promise.fail(LinkError(description: "no reply in \(ONVIFLink.requestTimeout) s"))
            }
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: address.host.contains(":") ? "[\(address.host)]:\(address.port)" : "\(address.host):\(address.port)")
            headers.add(name: "Content-Type", value: "application/soap+xml; charset=utf-8")
            headers.add(name: "Content-Length", value: "\(envelope.count)")
            headers.add(name: "Connection", value: "close")
            if let authorization { headers.add(name: "Authorization", value: authorization) }
            let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path, headers: headers)
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: envelope))), promise: nil)
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            defer {
                deadline.cancel()
                channel.close(promise: nil)
            }
            return try promise.futureResult.wait()
        }

        private func wallClock() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }
    }

    /// An HTTP response: its status, body and Digest challenge (WWW-Authenticate), if any.
    struct Reply: Sendable {
        var status: Int
        var body: [UInt8]
        var challenge: String?
    }

    struct LinkError: Error, CustomStringConvertible {
        let description: String
    }

    /// Gathers one HTTP response (status, body of at most `limit` bytes, Digest challenge) into
    /// `promise`; a connection that closes first, a parse error or a body over the limit fails it.
    private final class ReplyCollector: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        let promise: EventLoopPromise<Reply>
        let limit: Int
        private var reply = Reply(status: 0, body: [], challenge: nil)

        init(promise: EventLoopPromise<Reply>, limit: Int) { self.promise = promise; self.limit = limit }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                reply.status = Int(head.status.code)
                reply.challenge = head.headers["WWW-Authenticate"].first { $0.lowercased().hasPrefix("digest ") }
            case .body(let buffer):
                guard reply.body.count + buffer.readableBytes <= limit else {
                    promise.fail(LinkError(description: "a reply over \(limit) bytes"))
                    context.close(promise: nil)
                    return
                }
                reply.body += buffer.readableBytesView
            case .end:
                promise.succeed(reply)
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(LinkError(description: "the camera closed the connection before its reply ended"))
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(LinkError(description: "a reply that is not HTTP (\(error))"))
            context.close(promise: nil)
        }
    }
}
