import NIOCore

/// How host links come and go: a pty (a serial device) or a Unix socket. Every link a host opens
/// gets `initializer` run on its channel, which installs the handler that feeds the stand. All
/// methods run on the engine's event loop.
protocol HostTransport: AnyObject {
    /// Starts offering a link; the future completes once a host can connect (and the `pty …` or
    /// `unix …` line has been printed).
    func open(initializer: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> EventLoopFuture<Void>
    /// Takes the link down as a pulled cable would: the host sees a hang-up or a closed socket.
    func close()
    /// Deletes files made for hosts to find us (symlink, socket), at exit.
    func removeFiles()
    /// Bytes sent that the host has not read yet, where the kernel keeps them across host
    /// reconnects (a pty); 0 where it does not.
    var unreadByHost: Int { get }
}
