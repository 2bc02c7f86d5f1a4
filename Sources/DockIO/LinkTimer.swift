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
/// One per open link (`LinkSessionHost.open`), closed with it. Made, set, disarmed and closed on the
/// loop; `fired` runs there.
final class LinkTimer: Sendable {
    private let fd: CInt
    /// NIO's channel for the descriptor while it reads it; nil before it is registered and once it
    /// is closed (by `close`, or by NIO), when the descriptor is not ours any more and is never set
    /// again (its number may be another's by then).
    private let channel = Mutex<(any Channel)?>(nil)

    private init(fd: CInt) { self.fd = fd }

    /// Makes a timer registered on `loop` (on the loop, at once): `fired` runs there each time it
    /// expires. Fails when the process or the system has no descriptor left (EMFILE, ENFILE), or NIO
    /// cannot register it (epoll_ctl's ENOMEM, ENOSPC): the link cannot be run then (no tick would
    /// ever come: no heartbeat, no silence judged), and its opening fails with this error (dockd
    /// tries again after its backoff, as for a device that would not open).
    static func make(on loop: any EventLoop, _ fired: @escaping @Sendable () -> Void) -> EventLoopFuture<LinkTimer> {
        let fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0 else { return loop.makeFailedFuture(IOError(errnoCode: errno, reason: "timerfd_create (the link's timer)")) }
        let timer = LinkTimer(fd: fd)
        return NIOPipeBootstrap(group: loop)
            // A read of a timerfd needs room for its 8-byte count (EINVAL otherwise); with room for
            // more, the 8 bytes read are less than asked, and NIO does not read again for an EAGAIN.
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 16))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Expiry(fired) { [weak timer] in timer?.channel.withLock { $0 = nil } })
                }
            }
            // Refused: NIO closed the descriptor with the channel it had made (`StandTransport.wrap`
            // says why none is closed here); the timer, never registered, sets nothing.
            .takingOwnershipOfDescriptor(input: fd)
            .map { channel in
                timer.channel.withLock { $0 = channel }
                return timer
            }
    }

    /// Closes the timer: no expiry is told after this, and the descriptor goes with NIO's channel.
    func close() {
        channel.withLock { channel in
            defer { channel = nil }
            return channel
        }?.close(promise: nil)
    }

    deinit { close() }

    /// Expires in `seconds` (at once if not positive, -infinity or NaN: a session's "due now", as
    /// the ONVIF driver says it), in place of whatever it was set to.
    func set(in seconds: Double) {
        // An it_value of zero would disarm it: a due time already past expires in 1 ns. Past a
        // century is as good as never (and stays inside Int64's nanoseconds).
        let ns = seconds > 1e-9 ? Int64((min(seconds, 3e9) * 1e9).rounded(.up)) : 1
        settime(timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000)))
    }

    func disarm() { settime(timespec(tv_sec: 0, tv_nsec: 0)) }

    /// Setting the timer also clears an expiry not read yet: NIO's next read of it finds nothing. Not
    /// to be done while NIO may already have been told of that expiry in this turn: it asserts that
    /// a descriptor it was told is readable reads (`LinkSessionHost.setTimer` waits for the read).
    private func settime(_ value: timespec) {
        channel.withLock { channel in
            guard channel != nil else { return }
            var spec = itimerspec(it_interval: timespec(tv_sec: 0, tv_nsec: 0), it_value: value)
            _ = timerfd_settime(fd, 0, &spec, nil)
        }
    }
}

/// Each read of the timerfd (its count of expiries) is one expiry of the time last set; `closed`
/// when NIO closes the channel (a loop shut down, a read error) as well as when the timer does.
private final class Expiry: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let fired: @Sendable () -> Void
    private let closed: @Sendable () -> Void

    init(_ fired: @escaping @Sendable () -> Void, closed: @escaping @Sendable () -> Void) {
        self.fired = fired
        self.closed = closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { fired() }

    func channelInactive(context: ChannelHandlerContext) {
        closed()
        context.fireChannelInactive()
    }
}
