#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// The stand behind a Unix stream socket (as a Bluetooth RFCOMM bridge or a network stand would
/// be). One host at a time: the engine lets a new connection replace the previous one, because a
/// host that restarts must get the stand back without waiting for its old socket to be noticed dead.
final class UnixTransport: HostTransport {
    private let group: EventLoopGroup
    private let path: String
    private var server: Channel?

    init(group: EventLoopGroup, path: String) {
        self.group = group
        self.path = path
    }

    func open(initializer: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 1024, high: 4096))
            .childChannelInitializer(initializer)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
            // We run on the loop the channel lives on (the group has one thread).
            .assumeIsolated()
            .map { channel in
                self.server = channel
                Console.out("unix \(self.path)")
            }
            .nonisolated()
    }

    func close() {
        server?.close(promise: nil)
        server = nil
        removeFiles()
    }

    /// A closed connection takes its unread bytes with it; nothing goes stale.
    var unreadByHost: Int { 0 }

    func removeFiles() {
        var info = stat()
        if lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
    }
}
