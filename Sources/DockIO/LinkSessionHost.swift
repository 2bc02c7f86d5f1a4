import DockDrivers
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Runs one `LinkSession` over real links in real time, pinned to one event loop: bytes in → session
/// → bytes out in the same call, and one timer of its own set to the session's `nextTick` (no periodic
/// tick), moved as that moves (`LinkTimer`).
/// The session outlives its links: `open` runs it over one link until that closes (a program that
/// reconnects opens again), and `handle` gives it the program's own events, between links too. What
/// the outputs ask beyond their writes is the shell's (`LinkSessionShell`). dockd runs each stand's
/// engine in one (`StandHost`: reconnects, replies, liveness), dock-driver-probe its run over one link.
///
/// When the shell allows it, the host reads a serial link itself in batches instead of waking for
/// every chunk the link delivers (a stand at rest that nobody watches sends a FEEDBACK every 20 ms):
/// at most `batchPeriod` after its last read of the link, at the next tick (which reads first too),
/// and when the program asks (`readHeldBytes`), so that what it reads of the session is as fresh as
/// the bytes the link holds. A read the program asks moves the next batch read later.
public final class LinkSessionHost<Shell: LinkSessionShell>: Sendable {
    public typealias Session = Shell.Session
    /// How long bytes may wait in a link read in batches, s: below the 50 ms in which a frame that
    /// asks for an ACK must have it (PROTOCOL.md §3.1), with 5 ms to spare; the link's silence is
    /// judged at most this late. Above a camera's frame period at 30 frames/s (33 ms), with room for
    /// its jitter: each of its requests reads the link (`read`), so a camera client leaves no batch
    /// read to the timer (at 34 ms, spaced evenly up to the tick, the timer still woke dockd about
    /// 20 ms after each request). Between heartbeats 100 ms apart, two reads as before.
    static var batchPeriod: Double { 0.045 }

    public let loop: any EventLoop
    private let now: @Sendable () -> Double
    private let box: NIOLoopBoundBox<State>

    /// Loop-confined. A class, so that reading `box.value` yields a reference: a struct would be
    /// copied at each read, the whole session with it, several times per chunk read.
    private final class State {
        var session: Session
        let shell: Shell
        /// The link's side, in a class of its own: not generic, so its fields are reached directly,
        /// not through the generic class's metadata (field offsets, value witnesses) at every use.
        let link = LinkState()

        init(session: Session, shell: Shell) {
            self.session = session
            self.shell = shell
        }
    }

    /// `now` is the clock (s) the session's times are on.
    public init(session: Session, shell: sending Shell, loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next(),
                now: @escaping @Sendable () -> Double) {
        self.loop = loop
        self.now = now
        box = .makeBoxSendingValue(State(session: session, shell: shell), as: State.self, eventLoop: loop)
    }

    /// A link the session runs over.
    public struct Link: Sendable {
        fileprivate let channel: any Channel

        /// Waits until the link has closed (the session has heard it); cancelling the wait closes it.
        public func untilClosed() async {
            try? await withTaskCancellationHandler {
                try await channel.closeFuture.get()
            } onCancel: {
                channel.close(promise: nil)
            }
        }
    }

    /// Opens a link to `endpoint` on the host's loop; the session hears it open, and every byte
    /// and the close that follow. Fails as the endpoint's opening fails, or when no descriptor is
    /// left for the link's timer (`LinkTimer`).
    public func open(_ endpoint: StandEndpoint) async throws -> Link {
        let channel = try await StandTransport.open(endpoint, group: loop) { channel, byteStream in
            LinkTimer.make(on: channel.eventLoop) { [weak self] in self?.timerFired() }.flatMapThrowing { timer in
                try channel.pipeline.syncOperations.addHandler(LinkSessionHandler(host: self, byteStream: byteStream, timer: timer))
                return channel
            }
        }
        return Link(channel: channel)
    }

    // MARK: - The program's side (on the loop)

    /// Gives the session one of the program's events (on the loop) and carries out its output; the
    /// shell is there to note what the event awaits (a reply's promise). `event` must not reach the
    /// host: the session is being changed.
    public func handle(_ event: (inout Session, Shell, _ now: Double) -> Session.Output) {
        let state = box.value
        let out = event(&state.session, state.shell, now())
        apply(out)
    }

    /// Closes the link, if one is open, from the program's side (on the loop): the session hears it
    /// closed for `reason`, not as the peer's end of file.
    public func closeLink(because reason: String) {
        close(reason)
    }

    /// Reads the session where it is (on the loop). Calling a computed property on
    /// `box.value.session` copies the whole session first (the class's field might change during
    /// the call), retaining and releasing each of its arrays and dictionaries.
    public func inspect<T>(_ body: (inout Session) -> T) -> T {
        body(&box.value.session)
    }

    /// Reads the session on its loop (at once when called on it), after the bytes the link holds.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Session) -> T) -> EventLoopFuture<T> {
        if loop.inEventLoop {
            readHeldBytes()
            return loop.makeSucceededFuture(body(box.value.session))
        }
        return loop.submit {
            self.readHeldBytes()
            return body(self.box.value.session)
        }
    }

    /// The same, awaited; it fails only if the host's loop was shut down.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Session) -> T) async throws -> T {
        try await read(body).get()
    }

    /// While reading in batches: hands the session, as one read, what the link holds now. An end
    /// of file or an error is left to NIO to find and report: the host reads this link itself no more.
    public func readHeldBytes() {
        let state = box.value
        let link = state.link
        guard link.batching, !link.nioReadPending, let fd = link.byteStream else { return }
        link.lastBatchRead = now()
        var bytes: [UInt8] = []
        var ended = false
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { chunk in
            while true {
                let n = Glibc.read(fd, chunk.baseAddress, chunk.count)
                if n > 0 {
                    bytes.append(contentsOf: chunk[..<n])
                    // Less than asked for is all the link held: a second read would only say EAGAIN.
                    if n < chunk.count { return }
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    ended = !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                    return
                }
            }
        }
        if ended { link.byteStream = nil }
        if !bytes.isEmpty {
            apply(state.session.handle(link: .received(bytes), at: now()))
        } else {
            chooseReading()
            armTimer()  // the next batch read, later now
        }
    }

    // MARK: - The link's side (on the loop)

    fileprivate func opened(_ channel: any Channel, byteStream: Int32?, timer: LinkTimer) {
        let state = box.value
        let link = state.link
        // A close asked while no link was open (an output's, after its write's failure had closed
        // the link) is not this link's.
        link.closeReason = nil
        link.channel = channel
        link.byteStream = byteStream
        link.timer = timer
        state.shell.linkOpened()
        apply(state.session.handle(link: .opened, at: now()))
    }

    fileprivate func received(_ buffer: ByteBuffer) {
        let state = box.value
        let link = state.link
        link.nioReadPending = false
        let now = now()
        if link.batching { link.lastBatchRead = now }
        // `getBytes` copies with one memcpy (a walk of `readableBytesView` goes byte by byte).
        let bytes = buffer.getBytes(at: buffer.readerIndex, length: buffer.readableBytes) ?? []
        apply(state.session.handle(link: .received(bytes), at: now))
    }

    fileprivate func close(_ reason: String) {
        let link = box.value.link
        guard let channel = link.channel else { return }
        if link.closeReason == nil { link.closeReason = reason }
        channel.close(promise: nil)
    }

    fileprivate func closed() {
        let state = box.value
        let link = state.link
        let reason = link.closeReason ?? "the stand closed the link (EOF or hangup)"
        link.closeReason = nil
        // Closed, not disarmed first: a descriptor going needs no timerfd_settime.
        link.timer?.close()
        link.timer = nil
        link.timerDue = nil
        link.timerSet = nil
        link.channel = nil
        link.byteStream = nil
        link.batching = false
        link.nioReadPending = false
        state.shell.linkClosed()
        apply(state.session.handle(link: .closed(reason: reason), at: now()))
    }

    /// Carries out an output: its writes first, then what the shell does with it, then the reading
    /// and the timer the session now needs.
    private func apply(_ out: Session.Output) {
        let state = box.value
        let link = state.link
        if !out.writes.isEmpty, let channel = link.channel {
            // One write per driver call: a datagram each on a UDP link.
            for bytes in out.writes { channel.write(ByteBuffer(bytes: bytes), promise: nil) }
            channel.flush()
        }
        state.shell.carryOut(out, from: self)
        if let reason = out.closeLink { close(reason) }
        chooseReading()
        // What was written may be acknowledged (a probe timing the link, a command): the next bytes
        // are read as they come, once, so the round trip is measured on them and not on the batch.
        // A write that asks for no answer (a heartbeat not timed) leaves the link to the batch.
        if link.batching && !out.writes.isEmpty && state.session.awaitsAnswer, let channel = link.channel {
            link.nioReadPending = true
            channel.read()
        }
        armTimer()
    }

    /// Reads the link in batches while the shell allows it; else NIO reads it.
    private func chooseReading() {
        let state = box.value
        let link = state.link
        guard let channel = link.channel else { return }
        let batch = link.byteStream != nil && link.closeReason == nil
            && state.shell.mayReadInBatches(&state.session)
        guard batch != link.batching else { return }
        link.batching = batch
        if batch { link.lastBatchRead = now() }
        try? channel.syncOptions?.setOption(ChannelOptions.autoRead, value: !batch)
        // Turning `autoRead` off drops a read asked of NIO: ask one, always, and leave the link to it
        // until it has read. Else the answer to the last write waits, unread, for the next one (a
        // heartbeat, up to 100 ms); and NIO may already hold this turn's readable event for the link,
        // which it reads on whether it asked or not, asserting that it found bytes: had the host
        // drained the link meanwhile (a client's request in the same turn: the API fuzzer's
        // reconnects), a debug dockd trapped.
        if batch {
            link.nioReadPending = true
            channel.read()
        }
    }

    /// Sets the timer to the session's next tick (or the next batch read, if sooner), later as well
    /// as sooner: the due time moves later with every chunk read while a stand streams (a link's
    /// silence limit, a control step a stalled stream would leave undone), and a timer left at the
    /// earlier time would wake the loop there for nothing. Left alone when the time did not move.
    private func armTimer() {
        let link = box.value.link
        guard !link.firing else { return }
        // No link is due nothing; a link being closed neither (its silence, past, would be judged
        // again and again).
        guard link.channel != nil, link.closeReason == nil, var due = sessionDue() else {
            disarmTimer()
            return
        }
        // While a read asked of NIO is pending the host does not read the link itself (`readHeldBytes`):
        // a batch read due would fire the timer again and again, at once, until the link answers.
        if link.batching && !link.nioReadPending { due = min(due, nextBatchRead(before: due)) }
        link.timerDue = due
        setTimer()
    }

    /// The session's next tick. A NaN (no driver gives one) would never compare as due: the timer
    /// would be set again at once forever and no tick come; it is taken as "now", as a past time is.
    private func sessionDue() -> Double? {
        inspect { $0.nextTick }.map { $0.isNaN ? -.infinity : $0 }
    }

    private func disarmTimer() {
        box.value.link.timerDue = nil
        setTimer()
    }

    /// Sets the timer to `timerDue`, unless it is set to that already, or it has expired and NIO has
    /// not read it yet: setting it would clear an expiry NIO may already have been told of in this
    /// turn, and NIO asserts that a readable descriptor reads. The expiry's read sets it then.
    private func setTimer() {
        let link = box.value.link
        guard link.timerSet != link.timerDue else { return }
        if let set = link.timerSet, set <= now() { return }
        guard let timer = link.timer else { return }
        if let due = link.timerDue { timer.set(in: due - now()) } else { timer.disarm() }
        link.timerSet = link.timerDue
    }

    /// When to read the link next while reading in batches: `batchPeriod` after the last read (the
    /// host's, NIO's or one the program asked), or at `tick`, which reads the link first.
    private func nextBatchRead(before tick: Double) -> Double {
        let last = box.value.link.lastBatchRead
        return last.isFinite ? min(tick, last + Self.batchPeriod) : tick
    }

    /// The timer expired (NIO read its expiry): at `timerSet`, which is `timerDue` unless that moved meanwhile.
    private func timerFired() {
        let state = box.value
        let link = state.link
        link.timerSet = nil
        // Set for a time that has since moved later, or disarmed (`setTimer` leaves an expiry to its read).
        guard let due = link.timerDue, due <= now() else { return setTimer() }
        link.timerDue = nil
        state.shell.timerWoke()
        // What the link delivered meanwhile comes before the tick: its silence is judged on it.
        link.firing = true
        readHeldBytes()
        let now = now()
        if let due = sessionDue(), due <= now {
            apply(state.session.handle(link: .tick, at: now))
        }
        link.firing = false
        armTimer()
    }
}

/// A `LinkSessionHost`'s link and timer. Loop-confined.
private final class LinkState {
    var channel: (any Channel)?
    /// The open link's timer (one per link: its failure to be made fails the opening, not the host).
    var timer: LinkTimer?
    /// When the host's timer should wake it: the session's next tick, or a batch read before it (see
    /// `armTimer`); nil: not at all.
    var timerDue: Double?
    /// What the timer itself is set to; nil while it is disarmed, or once its expiry has been read.
    var timerSet: Double?
    /// The timer's turn is running: it arms the next once, at its end (the read before the tick
    /// would arm one for the tick, due already: a turn of the loop for nothing).
    var firing = false
    /// Why the link is being closed from our side (the session's reason, or an I/O error).
    var closeReason: String?
    /// The link's descriptor while the host may read it itself (a byte stream of a device).
    var byteStream: Int32?
    /// NIO does not read the link (`autoRead` off): the host reads it in batches.
    var batching = false
    /// The last read of the link, the host's or NIO's: what it held then has been read.
    var lastBatchRead = -Double.infinity
    /// A read asked of NIO (after a write) and not done yet: the host does not read the link
    /// itself meanwhile (NIO would find it drained, which it asserts against).
    var nioReadPending = false
}

/// What a `LinkSessionHost` leaves to its program: carrying out each output beyond its writes (log
/// lines, replies, notifications, printed lines), and the program's own watch of the link. Held by
/// the host and called on its loop. A class: a reply carried out may run, at once, code that gives
/// the host another event, which a shell held as a value being mutated could not take.
public protocol LinkSessionShell: AnyObject {
    associatedtype Session: LinkSession
    /// Every output of the session, after its writes went out; `host.inspect` reads the session.
    func carryOut(_ output: Session.Output, from host: LinkSessionHost<Self>)
    /// A link opened; the session hears it next.
    func linkOpened()
    /// The link closed; the session hears it next.
    func linkClosed()
    /// The host's timer woke it (whether or not the session was due its tick).
    func timerWoke()
    /// Whether the host may read a byte stream in batches now (it asks after each output).
    func mayReadInBatches(_ session: inout Session) -> Bool
}

extension LinkSessionShell {
    public func linkOpened() {}
    public func linkClosed() {}
    public func timerWoke() {}
    public func mayReadInBatches(_ session: inout Session) -> Bool { false }
}

/// Bytes of one link to and from its host, on the link's event loop.
private final class LinkSessionHandler<Shell: LinkSessionShell>: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let host: LinkSessionHost<Shell>
    private let byteStream: Int32?
    private let timer: LinkTimer

    init(host: LinkSessionHost<Shell>, byteStream: Int32?, timer: LinkTimer) {
        self.host = host
        self.byteStream = byteStream
        self.timer = timer
    }

    func channelActive(context: ChannelHandlerContext) {
        host.opened(context.channel, byteStream: byteStream, timer: timer)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        host.received(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        host.closed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        host.close("link error: \(error)")
    }
}
