import DockCore
import DockDrivers
import DockTracking
import DockIO
import DockProtocol
import Logging
import NIOCore
import StandEngine
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One stand, from the daemon's side: its engine pinned to one event loop together with its link,
/// so the control path runs on one thread with no hops (bytes in → engine → bytes out in the same
/// call). The host only moves bytes and time: it opens the link and reopens it with backoff
/// (0.25 s doubling to 8 s, PROTOCOL.md §5), ticks the engine when it says a tick is due (one timer,
/// not a periodic tick), and carries out what the engine asks — writes, notifications, log lines,
/// replies.
///
/// At rest, with nobody subscribed to what each FEEDBACK tells (`motion`, `events`) and no reply
/// awaited, the host reads a serial link itself in batches instead of waking for every
/// FEEDBACK: every `batchPeriod`, before each tick and before each request, so a reply or a
/// subscription's first `motion.state` is as fresh as the bytes the stand has sent.
final class StandHost: Sendable {
    /// How long bytes may wait in a link read in batches, s: below the 50 ms in which a frame that
    /// asks for an ACK must have it (PROTOCOL.md §3.1); the link's silence is judged at most this late.
    static let batchPeriod = 0.03

    let endpoint: StandEndpoint
    let loop: any EventLoop
    private let state: NIOLoopBoundBox<HostState>
    /// What lookups read without going to the loop: the stand's id and link state.
    private let summary: Mutex<Summary>
    private let hub: EventHub
    private let clock: DaemonClock
    private let liveness: Liveness
    private let logger: Logger
    /// Called (on the loop) when the link's state changes: the daemon's STATUS= line follows it.
    private let linkStateChanged: @Sendable () -> Void

    struct Summary: Sendable { var id: String?; var state: LinkState }
    /// The wait before the next reconnection, and whether the device came back before it began: udev
    /// saying so cuts the wait short (a stand back after 2 s would otherwise wait for the 3.75 s try).
    private struct ReconnectWait: Sendable { var cutShort = false; var sleeper: Task<Void, any Error>? }
    private let reconnectWait = Mutex(ReconnectWait())

    /// Loop-confined state of the host. A class, so that reading `state.value` yields a reference: a
    /// struct would be copied at each read, the whole engine with it, several times per FEEDBACK.
    final class HostState {
        var engine: StandEngine
        var channel: (any Channel)?
        /// The one timer, armed for the engine's next tick (or sooner: see `armTimer`).
        var timer: (at: Double, task: Scheduled<Void>)?
        /// Why the link is being closed from our side (the engine's reason, or an I/O error).
        var closeReason: String?
        var nextToken = 0
        var waiting: [Int: EventLoopPromise<CommandResult>] = [:]
        /// The link's descriptor while the host may read it itself (a byte stream of a device).
        var byteStream: Int32?
        /// NIO does not read the link (`autoRead` off): the host reads it in batches.
        var batching = false
        var lastBatchRead = -Double.infinity
        /// A read asked of NIO (after a write) and not done yet: the host does not read the link
        /// itself meanwhile (NIO would find it drained, which it asserts against).
        var nioReadPending = false

        init(engine: StandEngine) { self.engine = engine }
    }

    init(endpoint: StandEndpoint, driver: any StandDriver, settings: EngineSettings, loop: any EventLoop, hub: EventHub,
         clock: DaemonClock, liveness: Liveness, logger: Logger, linkStateChanged: @escaping @Sendable () -> Void = {}) {
        self.endpoint = endpoint
        self.linkStateChanged = linkStateChanged
        endpointName = "\(endpoint)"
        livenessName = "the control loop of \(endpoint)"
        self.loop = loop
        self.hub = hub
        self.clock = clock
        self.liveness = liveness
        var logger = logger
        logger[metadataKey: "stand"] = "\(endpoint)"
        logger[metadataKey: "endpoint"] = "\(endpoint)"
        self.logger = logger
        let engine = StandEngine(driver: driver, settings: settings, fallbackName: "\(endpoint)")
        state = .makeBoxSendingValue(HostState(engine: engine), as: HostState.self, eventLoop: loop)
        summary = Mutex(Summary(id: nil, state: .disconnected))
    }

    var standID: String? { summary.withLock { $0.id } }
    var linkState: LinkState { summary.withLock { $0.state } }
    private let livenessName: String
    private let endpointName: String

    // MARK: - Link lifecycle

    /// Keeps the stand connected until the task is cancelled: open, serve until the link closes,
    /// and reopen after a backoff (a minute for a stand of another protocol version).
    func run() async {
        var backoff = ProtocolTiming.reconnectBackoff.lowerBound
        // The USB device the stand last completed a handshake on, which a reopened node must hold.
        var standDevice: String?
        while !Task.isCancelled {
            do {
                if let node = endpoint.deviceNode, let expected = standDevice, let found = USBIdentity.of(node: node), found != expected {
                    throw USBIdentity.Changed(node: node, expected: expected, found: found)
                }
                let handshakesBefore = await read { $0.counters.handshakes }
                let channel = try await StandTransport.open(endpoint, group: loop) { channel, byteStream in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(StandLinkHandler(host: self, byteStream: byteStream))
                        return channel
                    }
                }
                // Read while the device is there; it becomes the stand's once it has answered as one.
                let openedDevice = endpoint.deviceNode.flatMap(USBIdentity.of(node:))
                try? await withTaskCancellationHandler {
                    try await channel.closeFuture.get()
                } onCancel: {
                    channel.close(promise: nil)
                }
                let handshakes = await read { $0.counters.handshakes }
                if handshakes > 0 { backoff = ProtocolTiming.reconnectBackoff.lowerBound }
                if handshakes > handshakesBefore, let openedDevice { standDevice = openedDevice }
            } catch {
                let reason = "\(error)"
                loop.execute { self.apply(self.state.value.engine.handle(.connectFailed(reason: reason), at: self.clock.now())) }
            }
            if Task.isCancelled { break }
            let reason = await read { $0.lastError } ?? "link closed"
            var metadata: Logger.Metadata = ["reason": "\(reason)"]
            if let id = standID { metadata["stand"] = .string(id) }
            let delay = await read({ $0.incompatible }) ? ProtocolTiming.incompatibleRetry : backoff
            logger.info("reconnecting in \(delay) s", metadata: metadata)
            await waitBeforeReconnecting(seconds: delay)
            backoff = min(ProtocolTiming.reconnectBackoff.upperBound, backoff * 2)
        }
    }

    /// Sleeps `seconds`, or less when `deviceReturned()` comes meanwhile (from udev, or from a watch
    /// of the missing device node); not at all when it came since the last attempt (once: the next
    /// wait is whole again).
    private func waitBeforeReconnecting(seconds: Double) async {
        // A device node that is gone (or not yet ours to open): its return, usable, cuts the wait
        // short too, udev or not.
        let watch = endpoint.deviceNode.flatMap { node in
            NodeWatch.usable(node) ? nil : NodeWatch.start(path: node) { [weak self] in
                self?.logger.info("the device node is back: reconnecting now", metadata: ["device": "\(node)"])
                self?.deviceReturned()
            }
        }
        defer { watch?.stop() }
        let sleeper = Task { try await Task.sleep(for: .seconds(seconds)) }
        let returned = reconnectWait.withLock { wait -> Bool in
            if wait.cutShort {
                wait.cutShort = false
                return true
            }
            wait.sleeper = sleeper
            return false
        }
        if returned { sleeper.cancel() }
        _ = try? await withTaskCancellationHandler { try await sleeper.value } onCancel: { sleeper.cancel() }
        reconnectWait.withLock { $0.sleeper = nil }
    }

    /// udev announced this stand's device node again: reconnect now rather than at the backoff's next
    /// try. Also kept when it comes before the old link has noticed its end (a quick replug); an open
    /// link clears it, so a replayed add (`udevadm trigger`) never cuts a later wait short.
    func deviceReturned() {
        reconnectWait.withLock { wait in
            if let sleeper = wait.sleeper { sleeper.cancel() } else { wait.cutShort = true }
        }
    }

    /// The link is open (on the loop).
    fileprivate func opened(_ channel: any Channel, byteStream: Int32?) {
        reconnectWait.withLock { $0.cutShort = false }
        state.value.channel = channel
        state.value.byteStream = byteStream
        liveness.beat(livenessName, at: clock.now())
        apply(state.value.engine.handle(.linkOpened, at: clock.now()))
    }

    fileprivate func received(_ buffer: ByteBuffer) {
        state.value.nioReadPending = false
        // `getBytes` copies with one memcpy (a walk of `readableBytesView` goes byte by byte).
        let bytes = buffer.getBytes(at: buffer.readerIndex, length: buffer.readableBytes) ?? []
        apply(state.value.engine.handle(.received(bytes), at: clock.now()))
    }

    fileprivate func failed(_ reason: String) {
        if state.value.closeReason == nil { state.value.closeReason = reason }
        state.value.channel?.close(promise: nil)
    }

    fileprivate func closed() {
        let reason = state.value.closeReason ?? "the stand closed the link (EOF or hangup)"
        state.value.closeReason = nil
        state.value.timer?.task.cancel()
        state.value.timer = nil
        state.value.channel = nil
        state.value.byteStream = nil
        state.value.batching = false
        state.value.nioReadPending = false
        liveness.forget(livenessName)
        apply(state.value.engine.handle(.linkClosed(reason: reason), at: clock.now()))
    }

    /// Carries out what the engine asked for (on the loop).
    private func apply(_ out: EngineOutput) {
        if !out.writes.isEmpty, let channel = state.value.channel {
            // One write per driver call: a datagram each on a UDP link.
            for bytes in out.writes { channel.write(ByteBuffer(bytes: bytes), promise: nil) }
            channel.flush()
        }
        let (id, linkState) = inspectEngine { ($0.standID, $0.linkState) }
        let changed = summary.withLock { summary in
            guard summary.id != id || summary.state != linkState else { return false }
            summary = Summary(id: id, state: linkState)
            return true
        }
        if changed { linkStateChanged() }
        for log in out.logs {
            // `stand` is the stand's id once it said who it is (journald: DOCKD_STAND), else its endpoint.
            var metadata = log.metadata.mapValues { Logger.MetadataValue.string($0) }
            if let id { metadata["stand"] = .string(id) }
            logger.log(level: log.level.swiftLog, "\(log.message)", metadata: metadata)
        }
        if !out.notifications.isEmpty {
            let now = clock.now()
            for notification in out.notifications { hub.publish(notification, stand: id ?? "", endpoint: endpointName, time: now) }
        }
        for (token, result) in out.replies {
            guard let promise = state.value.waiting.removeValue(forKey: token) else { continue }
            switch result {
            case .success(let value): promise.succeed(value)
            case .failure(let error): promise.fail(error)
            }
        }
        if let reason = out.closeLink { failed(reason) }
        chooseReading()
        // What was written may be acknowledged (a probe timing the link, a command): the next bytes
        // are read as they come, once, so the round trip is measured on them and not on the batch.
        if state.value.batching && !out.writes.isEmpty, let channel = state.value.channel {
            state.value.nioReadPending = true
            channel.read()
        }
        armTimer()
    }

    /// Reads the link in batches while nothing needs each FEEDBACK as it comes; else NIO reads it.
    private func chooseReading() {
        guard let channel = state.value.channel else { return }
        let batch = state.value.byteStream != nil && state.value.closeReason == nil && state.value.waiting.isEmpty
            && !hub.wants(.motion) && !hub.wants(.events)
            && inspectEngine { $0.linkState == .connected && $0.motionActivity == .idle }
        guard batch != state.value.batching else { return }
        state.value.batching = batch
        if batch { state.value.lastBatchRead = clock.now() }
        try? channel.syncOptions?.setOption(ChannelOptions.autoRead, value: !batch)
        // Turning `autoRead` off drops a read asked of NIO: asked again, or the answer to the last
        // write waits, unread, for the next one (the heartbeat, up to 100 ms).
        if batch && state.value.nioReadPending { channel.read() }
    }

    /// While batching: hands the engine, as one read, what the link holds now. An end of file or an
    /// error is left to NIO to find and report: the host reads this link itself no more.
    private func readBatch() {
        guard state.value.batching, !state.value.nioReadPending, let fd = state.value.byteStream else { return }
        state.value.lastBatchRead = clock.now()
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
        if ended { state.value.byteStream = nil }
        if !bytes.isEmpty {
            apply(state.value.engine.handle(.received(bytes), at: clock.now()))
        } else {
            chooseReading()
        }
    }

    /// Reads the engine where it is. Calling a computed property on `state.value.engine` copies the
    /// whole engine first (the class's field might change during the call), retaining and releasing
    /// each of its arrays and dictionaries: several times for every FEEDBACK.
    private func inspectEngine<T>(_ body: (inout StandEngine) -> T) -> T {
        body(&state.value.engine)
    }

    /// Arms the timer for the engine's next tick (or the next batch read, if sooner). A timer armed
    /// for that time or sooner stays: the due time moves later with every FEEDBACK (the link's
    /// silence limit, the control step a stalled stream would leave undone), and moving the timer
    /// each time would not save its wake-up (NIO keeps its timerfd armed for a cancelled
    /// deadline); an early one only re-arms.
    private func armTimer() {
        // A link being closed is due nothing more (its silence, past, would be judged again and again).
        guard state.value.closeReason == nil, var due = inspectEngine({ $0.nextTick }) else {
            state.value.timer?.task.cancel()
            state.value.timer = nil
            return
        }
        // While a read asked of NIO is pending the host does not read the link itself (`readBatch`):
        // a batch read due would fire the timer again and again, at once, until the stand answers.
        if state.value.batching && !state.value.nioReadPending { due = min(due, state.value.lastBatchRead + Self.batchPeriod) }
        if let armed = state.value.timer, armed.at <= due { return }
        state.value.timer?.task.cancel()
        let delay = Int64((max(0, due - clock.now()) * 1e9).rounded(.up))
        let task = loop.scheduleTask(in: .nanoseconds(delay)) { self.timerFired() }
        state.value.timer = (due, task)
    }

    /// The control loop beats here: the timer fires at least at every heartbeat to the stand and at
    /// the link's silence limit, whatever else comes.
    private func timerFired() {
        state.value.timer = nil
        liveness.beat(livenessName, at: clock.now())
        // What the stand sent meanwhile comes before the tick: its silence is judged on it.
        readBatch()
        let now = clock.now()
        if let due = inspectEngine({ $0.nextTick }), due <= now {
            apply(state.value.engine.handle(.tick, at: now))
        } else {
            armTimer()
        }
    }

    // MARK: - Commands and reads

    /// Runs a client's command on the stand's loop (at once when called on it); the reply may come
    /// later (a STOP waits for its acknowledgement). The future fails with an `EngineError`.
    func submit(_ command: EngineCommand, from client: ClientRef, force: Bool = false) -> EventLoopFuture<CommandResult> {
        let promise = loop.makePromise(of: CommandResult.self)
        onLoop {
            self.readBatch()
            let token = self.state.value.nextToken
            self.state.value.nextToken += 1
            self.state.value.waiting[token] = promise
            self.apply(self.state.value.engine.handle(.command(command, from: client, force: force, token: token), at: self.clock.now()))
        }
        return promise.futureResult
    }

    func command(_ command: EngineCommand, from client: ClientRef, force: Bool = false) async throws(EngineError) -> CommandResult {
        do {
            return try await submit(command, from: client, force: force).get()
        } catch let error as EngineError {
            throw error
        } catch {
            throw .motionFailed("\(error)")
        }
    }

    /// The configuration was reloaded: the camera and lost-subject behaviour from now on.
    func configure(camera: CameraModel, lostBehaviour: LostSubjectBehaviour, lostHold: Double) {
        loop.execute {
            self.apply(self.state.value.engine.handle(.configure(camera: camera, lostBehaviour: lostBehaviour, lostHold: lostHold), at: self.clock.now()))
        }
    }

    /// An administrator's new defaults.
    func setDefaults(_ defaults: StandDefaults) {
        loop.execute { self.apply(self.state.value.engine.handle(.defaults(defaults), at: self.clock.now())) }
    }

    /// A client went away: what it held reverts.
    func clientGone(_ client: Int) {
        loop.execute { self.apply(self.state.value.engine.handle(.clientGone(client), at: self.clock.now())) }
    }

    /// Reads the engine's state on its loop (at once when called on it), after the bytes the
    /// stand has sent.
    func read<T: Sendable>(_ body: @escaping @Sendable (StandEngine) -> T) -> EventLoopFuture<T> {
        if loop.inEventLoop {
            readBatch()
            return loop.makeSucceededFuture(body(state.value.engine))
        }
        return loop.submit {
            self.readBatch()
            return body(self.state.value.engine)
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (StandEngine) -> T) async -> T {
        // The loop runs for as long as the daemon does (the singleton group is never shut down),
        // so the submit cannot fail.
        try! await read(body).get()
    }

    private func onLoop(_ body: @escaping @Sendable () -> Void) {
        if loop.inEventLoop { body() } else { loop.execute(body) }
    }

    /// On daemon shutdown and detach: the motors stop, and the host waits (at most `bound` seconds)
    /// for the stand to confirm the STOP before the link closes.
    func shutdown(bound: Double = 0.5) async {
        let needed = try? await loop.submit {
            self.apply(self.state.value.engine.handle(.shutdown, at: self.clock.now()))
            return self.state.value.engine.linkState == .connected
        }.get()
        guard needed == true else { return }
        let deadline = clock.now() + bound
        while clock.now() < deadline, await read({ !$0.stopConfirmed }) {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if await read({ !$0.stopConfirmed }) { logger.warning("the stand did not confirm the STOP within \(bound) s") }
    }

    /// Blocks this stand's event loop for `seconds`: the watchdog's test stall.
    func stallForTesting(seconds: Double) {
        loop.execute { usleep(UInt32(min(seconds, 60) * 1e6)) }
    }
}

/// Bytes of one stand link to and from its host, on the link's event loop.
private final class StandLinkHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let host: StandHost
    private let byteStream: Int32?
    init(host: StandHost, byteStream: Int32?) {
        self.host = host
        self.byteStream = byteStream
    }

    func channelActive(context: ChannelHandlerContext) {
        host.opened(context.channel, byteStream: byteStream)
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
        host.failed("link error: \(error)")
    }
}

extension EngineLog.Level {
    var swiftLog: Logger.Level {
        switch self {
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        case .critical: .critical
        }
    }
}
