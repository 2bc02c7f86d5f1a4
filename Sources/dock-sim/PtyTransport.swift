#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// The stand as a serial device: a fresh pty per plug-in, its master driven through a NIO pipe
/// channel. We hold our own slave fd open for the pty's whole life so the master never reads EIO
/// when a host closes the slave and opens it again (as dockd does on reconnect).
final class PtyTransport: HostTransport {
    private let group: EventLoopGroup
    private let linkPath: String?
    private var slave: CInt = -1
    private var channel: Channel?

    init(group: EventLoopGroup, linkPath: String?) {
        self.group = group
        self.linkPath = linkPath
    }

    func open(initializer: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        let loop = group.next()
        let pty: Pty
        do {
            pty = try Pty.open()
            // The link first, then the line: whoever reads the line may use the link at once.
            if let linkPath { try StableLink.point(linkPath, to: pty.path) }
        } catch {
            return loop.makeFailedFuture(error)
        }
        slave = pty.slave
        Console.out("pty \(pty.path)")
        return NIOPipeBootstrap(group: group)
            // Small watermarks: when no host reads, the pty buffer fills and we would rather drop
            // output (like a UART nobody listens to) than queue it without bound.
            .channelOption(.writeBufferWaterMark, value: .init(low: 1024, high: 4096))
            .channelInitializer(initializer)
            .takingOwnershipOfDescriptor(inputOutput: pty.master)
            // We run on the loop the channel lives on (the group has one thread).
            .assumeIsolated()
            .map { channel in self.channel = channel }
            .flatMapErrorThrowing { error in
                // The master is left alone: NIO may already have closed it while failing.
                self.closeSlave()
                throw error
            }
            .nonisolated()
    }

    func close() {
        channel?.close(promise: nil)
        channel = nil
        closeSlave()
    }

    private func closeSlave() {
        if slave >= 0 { closeDescriptor(slave) }
        slave = -1
    }

    var unreadByHost: Int { slave >= 0 ? Pty.unreadBytes(slave) : 0 }

    func removeFiles() {
        if let linkPath { StableLink.remove(linkPath) }
    }
}
