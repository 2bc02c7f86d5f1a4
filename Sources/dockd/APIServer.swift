#if canImport(Glibc)
import Glibc
#endif
import DockIO
import Foundation
import Logging
import NIOCore
import NIOPosix
import StandEngine

/// The JSON-RPC 2.0 socket: newline-delimited JSON over a Unix stream socket. Each client runs in
/// its own task; a line over `maxLineLength` is answered with an error and dropped without being
/// buffered; a client that stops reading its notifications is disconnected.
struct APIServer: Sendable {
    static let maxLineLength = 1 << 20

    let api: APIMethods
    let hub: EventHub
    let logger: Logger

    typealias ClientChannel = NIOAsyncChannel<ClientLine, ByteBuffer>

    /// Binds `path` (or adopts a socket systemd passed in) and serves until cancelled.
    func serve(listener: APIListener, group: any EventLoopGroup, ready: @Sendable () -> Void) async throws {
        // Small per-client buffers: a client that stops reading is noticed (and dropped by the hub)
        // within seconds instead of holding megabytes of notifications.
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            .childChannelOption(.socketOption(.so_sndbuf), value: 32 * 1024)
            // `echo REQUEST | socat - UNIX-CONNECT:…` shuts its side down after the request: the
            // reply must still go out.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 8 * 1024, high: 32 * 1024))
        let initializer: @Sendable (any Channel) -> EventLoopFuture<ClientChannel> = { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    ByteToMessageHandler(LineFrameDecoder(maximumLength: Self.maxLineLength)))
                return try ClientChannel(wrappingChannelSynchronously: channel)
            }
        }
        let server: NIOAsyncChannel<ClientChannel, Never>
        switch listener {
        case .path(let path, let mode, let group):
            try? FileManager.default.removeItem(atPath: path)
            server = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true,
                                              childChannelInitializer: initializer)
            try SocketPermissions.apply(path: path, mode: mode, group: group, logger: logger)
        case .inherited(let fd):
            server = try await bootstrap.bind(fd, childChannelInitializer: initializer)
        }
        ready()
        var nextClient = 0
        try await withThrowingDiscardingTaskGroup { tasks in
            try await server.executeThenClose { clients in
                for try await client in clients {
                    nextClient += 1
                    let id = nextClient
                    tasks.addTask { await self.serve(client: client, id: id) }
                }
            }
        }
    }

    private func serve(client: ClientChannel, id: Int) async {
        let peer = await PeerCredentials.of(client.channel)
        let notifications = hub.register(client: id, onDrop: { client.channel.close(promise: nil) })
        do {
            try await client.executeThenClose { inbound, outbound in
                let session = ClientSession(id: id, peer: peer)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await line in notifications { try await outbound.write(line) }
                    }
                    group.addTask {
                        for try await item in inbound {
                            let reply: JSONValue?
                            switch item {
                            case .oversize(let bytes):
                                reply = Self.errorReply(id: .null, RPCError.lineTooLong(bytes, limit: Self.maxLineLength))
                            case .line(let buffer):
                                reply = await api.handle(line: buffer, session: session)
                            }
                            if let reply { try await outbound.write(Self.line(reply)) }
                        }
                        hub.remove(client: id)
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("client \(id) gone", metadata: ["error": "\(error)"])
        }
        hub.remove(client: id)
        api.clientGone(id)
    }

    static func line(_ value: JSONValue) -> ByteBuffer {
        var data = (try? JSONEncoder.api.encode(value)) ?? Data("{}".utf8)
        data.append(UInt8(ascii: "\n"))
        return ByteBuffer(bytes: data)
    }

    static func errorReply(id: JSONValue, _ error: RPCError) -> JSONValue {
        ["jsonrpc": "2.0", "id": id, "error": error.json]
    }
}

enum APIListener: Sendable {
    case path(String, mode: UInt16, group: String?)
    case inherited(Int32)
}

/// Who is on the other end of a client socket, from SO_PEERCRED.
struct PeerCredentials: Sendable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32

    static func of(_ channel: any Channel) async -> PeerCredentials? {
        guard let provider = channel as? any SocketOptionProvider,
              let cred: KernelUcred = try? await provider.unsafeGetSocketOption(level: .socket, name: .init(rawValue: SO_PEERCRED)).get()
        else { return nil }
        return PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid)
    }
}

/// `struct ucred` from <sys/socket.h>, which Swift's Glibc module hides behind _GNU_SOURCE.
private struct KernelUcred: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Per-connection state the methods need: who the client is.
final class ClientSession: Sendable {
    let id: Int
    let peer: PeerCredentials?
    init(id: Int, peer: PeerCredentials?) { self.id = id; self.peer = peer }
    var client: ClientRef { ClientRef(id: id, pid: peer?.pid) }
}

extension JSONEncoder {
    static let api: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()
}
