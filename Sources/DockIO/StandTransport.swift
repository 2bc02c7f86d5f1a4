import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

public enum StandTransport {
    /// Opens the link on `group` (an event loop to pin it to one thread); `initializer` sets the new
    /// channel up (its handlers see raw bytes both ways) and makes what this returns. It also gets the
    /// descriptor of a link that is a serial tty's byte stream, which the channel's loop may read itself
    /// while the channel does not (`autoRead` off); nil for the others (network sockets, whose
    /// datagrams keep their bounds, RFCOMM, and the camera links).
    public static func open<Output: Sendable>(_ endpoint: StandEndpoint, group: any EventLoopGroup,
                                              initializer: @escaping @Sendable (any Channel, _ byteStream: Int32?) -> EventLoopFuture<Output>) async throws -> Output {
        switch endpoint {
        case .serial(let path, let baud):
            let fd = try SerialPort.open(path: path, baud: baud)
            return try await wrap(fd: fd, group: group) { initializer($0, fd) }
        case .bluetooth(let address, let channel):
            let fd = try await NIOThreadPool.singleton.runIfActive { try Bluetooth.connect(address: address, channel: channel) }
            // Not read in batches: RFCOMM's round trip (20–40 ms) outlasts a FEEDBACK period, so
            // the one read after a probe would often take a FEEDBACK and leave the ACK to the batch,
            // adding up to a batch period to every round trip measured.
            return try await wrap(fd: fd, group: group) { initializer($0, nil) }
        case .udp(let host, let port):
            return try await NetworkTransport.connectUDP(host: host, port: port, group: group) { initializer($0, nil) }
        case .tcp(let host, let port):
            return try await NetworkTransport.connectTCP(host: host, port: port, group: group) { initializer($0, nil) }
        case .unix(let path):
            return try await ClientBootstrap(group: group).connect(unixDomainSocketPath: path) { initializer($0, nil) }
        case .video(let path):
            return try await wrap(fd: try VideoDeviceLink.open(path: path), group: group) { initializer($0, nil) }
        case .onvif(let address):
            return try await wrap(fd: try ONVIFLink.open(address), group: group) { initializer($0, nil) }
        }
    }

    /// A channel over `fd` (its own: closed here on any failure). NIO's
    /// `takingOwnershipOfDescriptor(inputOutput:)` is not used: it duplicates the descriptor with
    /// `try!` (the process ended when the device's open took the last descriptor there was) and,
    /// when the initializer fails (no descriptor left for the link's timer), closes the duplicate
    /// again with `try!` after the failed channel had closed it (EBADF: the process ended too).
    private static func wrap<Output: Sendable>(fd: Int32, group: any EventLoopGroup,
                                               initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Output>) async throws -> Output {
        let output = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard output >= 0 else {
            let code = errno
            Glibc.close(fd)
            throw IOError(errnoCode: code, reason: "dup (the link's writing side)")
        }
        // Failing once the channel is made (its options, the initializer, its registration), NIO has
        // closed both with it; before (fstat, the channel's allocation), they would be left to us, a
        // failure not seen with descriptors just opened: not closed here, as a second close could take
        // another's descriptor of the same number.
        return try await NIOPipeBootstrap(group: group).takingOwnershipOfDescriptors(input: fd, output: output, channelInitializer: initializer)
    }
}
