import CTimerFD
import NIOCore
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A one-shot timer of its own on an event loop: a timerfd that NIO reads. NIO's scheduled tasks
/// share one timerfd, which NIO keeps armed for the earliest deadline it was asked for, a cancelled
/// one too, so a deadline that moves later with every event (a link's silence limit, the control
/// step a stalled FEEDBACK stream would leave undone) woke the loop once per limit for nothing while
/// the events kept coming (about 20 times a second with a moving stand). This one is moved, later as
/// well as sooner, with one `timerfd_settime` and no wake-up; it wakes the loop only if a deadline comes.
/// Set and disarmed on the loop; `fired` runs there.
final class LinkTimer: Sendable {
    private let fd: CInt
    /// The channel NIO reads the timer through, once registered; closed with the timer.
    private let channel = Mutex<(any Channel)?>(nil)

    init() {
        // Only a failure to allocate a descriptor fails here: the program cannot run its links then.
        fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        precondition(fd >= 0, "timerfd_create: errno \(errno)")
    }

    deinit {
        // A loop shut down has closed it already (and would refuse the close).
        if let channel = channel.withLock({ $0 }), channel.isActive { channel.close(promise: nil) }
    }

    /// Registers the timer on `loop`: `fired` runs there each time it expires. Once.
    func start(on loop: any EventLoop, _ fired: @escaping @Sendable () -> Void) {
        let fd = fd
        let registered = NIOPipeBootstrap(group: loop)
            // A read of a timerfd needs room for its 8-byte count (EINVAL otherwise).
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 8))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Expiry(fired)) }
            }
            .takingOwnershipOfDescriptor(input: fd)
        // Refused only on a loop shut down, where nothing would run anyway; the descriptor is still ours.
        registered.whenFailure { _ in close(fd) }
        registered.whenSuccess { [weak self] channel in
            guard let self else { return channel.close(promise: nil) }  // (the timer went first)
            self.channel.withLock { $0 = channel }
        }
    }

    /// Expires in `seconds` (at once if not positive), in place of whatever it was set to.
    func set(in seconds: Double) {
        // An it_value of zero would disarm it: a due time already past expires in 1 ns.
        let ns = max(1, Int64((seconds * 1e9).rounded(.up)))
        settime(timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000)))
    }

    func disarm() { settime(timespec(tv_sec: 0, tv_nsec: 0)) }

    /// Setting the timer also clears an expiry not read yet: NIO's next read of it finds nothing. Not
    /// to be done while NIO may already have been told of that expiry in this turn: it asserts that
    /// a descriptor it was told is readable reads (`LinkSessionHost.setTimer` waits for the read).
    private func settime(_ value: timespec) {
        var spec = itimerspec(it_interval: timespec(tv_sec: 0, tv_nsec: 0), it_value: value)
        _ = timerfd_settime(fd, 0, &spec, nil)
    }
}

/// Each read of the timerfd (its count of expiries) is one expiry of the time last set.
private final class Expiry: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let fired: @Sendable () -> Void

    init(_ fired: @escaping @Sendable () -> Void) { self.fired = fired }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { fired() }
}
