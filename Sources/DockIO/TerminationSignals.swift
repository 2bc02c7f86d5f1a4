#if canImport(Glibc)
import Glibc
#endif
import CSignalFD
import NIOCore
import NIOPosix

/// SIGTERM and SIGINT as dockd hears them: blocked in every thread from the first line of main, and
/// read through a signalfd on an event loop, so whoever reads them acts in the wake-up the signal
/// makes. Through ServiceLifecycle (a Dispatch signal source, an AsyncStream, then a task on the
/// cooperative pool) the way to the handler took 0.05–0.52 s in the VM, against a 0.1 s command
/// interval for the stop it carried.
///
/// Nothing else may ask for them: libdispatch reads each signal it has a source for through a
/// signalfd of its own, and two signalfds of one signal race for it. So ServiceLifecycle's group is
/// given no signals to trap, and dockd's main thread is not handed to Dispatch, whose `dispatchMain`
/// waits in sigsuspend with no signal blocked (the main thread would take them).
public enum TerminationSignals {
    private static let numbers = [SIGTERM, SIGINT]

    /// Blocks SIGTERM and SIGINT in the calling thread and so in every thread it starts later: call it
    /// before any thread exists. A signal blocked in every thread waits for the signalfd's read; one
    /// that some thread left unblocked would be taken there, by default death. A process dockd starts
    /// would inherit the mask (it starts none).
    public static func blockInEveryThread() {
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Reads them on `loop` from now on (one pending already comes at once): `received` runs on the
    /// loop with the signal's name, and whether it is the first. Closing the returned channel stops
    /// the reading; the signals stay blocked (ignored, then).
    public static func read(on loop: any EventLoop,
                            _ received: @escaping @Sendable (_ name: String, _ first: Bool) -> Void) async throws -> any Channel {
        var set = signalSet()
        let fd = signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC))
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "signalfd") }
        do {
            return try await NIOPipeBootstrap(group: loop)
                // A read of a signalfd needs room for one whole record at least (EINVAL otherwise).
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: SignalRecordHandler.recordSize * 8))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture(withResultOf: { try channel.pipeline.syncOperations.addHandler(SignalRecordHandler(received)) })
                }
                .takingOwnershipOfDescriptor(input: fd)
                .get()
        } catch {
            close(fd)  // a refused descriptor is still ours
            throw error
        }
    }

    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        return set
    }

    static func name(_ number: Int32) -> String {
        switch number {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        default: "signal \(number)"
        }
    }
}

/// The signalfd's records (`struct signalfd_siginfo`, 128 bytes each, the signal's number first).
private final class SignalRecordHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    static let recordSize = 128
    private let received: @Sendable (String, Bool) -> Void
    private var heardBefore = false

    init(_ received: @escaping @Sendable (String, Bool) -> Void) { self.received = received }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var records = unwrapInboundIn(data)
        while let record = records.readSlice(length: Self.recordSize) {
            guard let number = record.getInteger(at: record.readerIndex, endianness: .host, as: UInt32.self) else { continue }
            received(TerminationSignals.name(Int32(number)), !heardBefore)
            heardBefore = true
        }
    }
}
