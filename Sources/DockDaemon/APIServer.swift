#if canImport(Glibc)
import Glibc
#endif
import DockJSON
import Logging
import NIOCore
import NIOPosix
import StandEngine
import Synchronization

/// The JSON-RPC 2.0 socket: newline-delimited JSON over a Unix stream socket, each connection an
/// `APIConnection` pipeline on its event loop (no task per client or per request).
///
/// At most `maxClients` connections are served at once; one more is told so in one JSON-RPC error
/// line and closed. Running out of file descriptors anyway (EMFILE/ENFILE on accept) pauses
/// accepting for a moment instead of ending the server.
struct APIServer: Sendable {
    let api: APIMethods
    let hub: EventHub
    let logger: Logger
    let maxClients: Int

    /// Binds `listener` (a path, or a socket systemd passed in) and serves until cancelled, the
    /// listening socket and every connection on `loop`.
    func serve(listener: APIListener, loop: any EventLoop, ready: @Sendable () -> Void) async throws {
        let counter = ClientCounter()
        let bootstrap = ServerBootstrap(group: loop)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // EMFILE/ENFILE: stop accepting for 100 ms (connections wait in the backlog).
                    try channel.pipeline.syncOperations.addHandler(AcceptBackoffHandler(shouldForwardIOErrorCaught: true) { _ in .milliseconds(100) })
                    try channel.pipeline.syncOperations.addHandler(AcceptErrorLogger(logger: logger))
                }
            }
            // Small per-client buffers: a client that stops reading is noticed (and dropped) within
            // seconds instead of holding megabytes of notifications.
            .childChannelOption(.socketOption(.so_sndbuf), value: 32 * 1024)
            // `echo REQUEST | socat - UNIX-CONNECT:…` shuts its side down after the request: the
            // reply must still go out.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 8 * 1024, high: 32 * 1024))
            // One read of at most 16 KiB per wake-up: a client pipelining thousands of requests
            // gets through them a slice at a time, between the stands' frames on the same loop.
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 4096, maximum: 16384))
            .childChannelInitializer { [api, hub, logger, maxClients] channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let id = counter.admit(limit: maxClients) else {
                        try channel.pipeline.syncOperations.addHandler(RefusingHandler(error: .tooManyClients(maxClients)))
                        return
                    }
                    channel.closeFuture.whenComplete { _ in counter.leave() }
                    try APIConnection.addHandlers(to: channel.pipeline.syncOperations, id: id, methods: api, hub: hub, logger: logger)
                }
            }
        let server: any Channel
        switch listener {
        case .path(let path, let mode, let group):
            try SocketPath.claim(path)
            let staging = try SocketPath.staging(for: path)
            server = try await bootstrap.bind(unixDomainSocketPath: staging).get()
            try SocketPermissions.apply(path: staging, mode: mode, group: group, logger: logger)
            try SocketPermissions.move(staging, to: path)
        case .inherited(let fd):
            server = try await bootstrap.withBoundSocket(fd).get()
        }
        ready()
        await withTaskCancellationHandler {
            try? await server.closeFuture.get()
        } onCancel: {
            server.close(promise: nil)
        }
    }
}

enum APIListener: Sendable {
    case path(String, mode: UInt16, group: String?)
    case inherited(Int32)
}

/// Numbers connections and counts the open ones.
private final class ClientCounter: Sendable {
    private let open = Atomic<Int>(0)
    private let lastID = Atomic<Int>(0)

    /// A new connection's id, or nil when `limit` are open already.
    func admit(limit: Int) -> Int? {
        let now = open.wrappingAdd(1, ordering: .relaxed).newValue
        guard now <= limit else { open.wrappingSubtract(1, ordering: .relaxed); return nil }
        return lastID.wrappingAdd(1, ordering: .relaxed).newValue
    }

    func leave() { open.wrappingSubtract(1, ordering: .relaxed) }
}

/// A connection over the limit: one error line (id null), then the connection closes.
private final class RefusingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let error: RPCError
    init(error: RPCError) { self.error = error }

    func channelActive(context: ChannelHandlerContext) {
        var line = context.channel.allocator.buffer(capacity: 160)
        line.writeStaticString("{\"error\":")
        line.writeJSON(error.json)
        line.writeStaticString(",\"id\":null,\"jsonrpc\":\"2.0\"}\n")
        context.writeAndFlush(wrapOutboundOut(line)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}

/// Errors on the listening socket are logged, never fatal: NIO keeps the socket open on EMFILE,
/// ENFILE, ENOBUFS, ENOMEM and ECONNABORTED, and AcceptBackoffHandler paused accepting.
private final class AcceptErrorLogger: ChannelInboundHandler {
    typealias InboundIn = any Channel
    let logger: Logger
    /// One line per kind of error and second, not one per failed accept.
    private var lastLogged: (String, NIODeadline)?
    init(logger: Logger) { self.logger = logger }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { context.fireChannelRead(data) }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let text = "\(error)"
        let now = NIODeadline.now()
        if let (last, at) = lastLogged, last == text, now - at < .seconds(1) { return }
        lastLogged = (text, now)
        logger.warning("accepting an API connection failed; retrying shortly", metadata: ["error": "\(text)"])
    }
}

/// Who is on the other end of a client socket, from SO_PEERCRED.
struct PeerCredentials: Sendable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
}

/// `struct ucred` from <sys/socket.h>, which Swift's Glibc module hides behind _GNU_SOURCE.
struct KernelUcred: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Per-connection state the methods need: who the client is.
struct ClientSession: Sendable {
    let id: Int
    let peer: PeerCredentials?
    var client: ClientRef { ClientRef(id: id, pid: peer?.pid) }
}

extension APIServer {
    /// Connections served at once unless configured: 4096 (half the unit's LimitNOFILE), and always
    /// below the open-file limit less `FileLimit.reserve`, so that refusing one more politely still
    /// has a descriptor to do it with.
    static func defaultMaxClients(openFileLimit: Int = FileLimit.raise()) -> Int {
        clamp(4096, openFileLimit: openFileLimit)
    }

    static func clamp(_ wanted: Int, openFileLimit: Int) -> Int {
        max(1, min(wanted, openFileLimit - FileLimit.reserve))
    }
}
