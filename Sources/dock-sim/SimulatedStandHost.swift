import DockProtocol
import DockSim
import NIOCore

/// Runs the pure stand against the real clock and a real link: a 1 ms tick advances the physics
/// and sends what the stand produced; host bytes are fed in as they arrive. Confined to one event
/// loop: every method runs there (other threads reach it through `NIOLoopBound`, which checks).
final class SimulatedStandHost {
    private enum State { case up, unplugged, shuttingDown }

    private let loop: EventLoop
    private var stand: SimulatedStand
    private let clock = MonotonicClock()
    private let transport: HostTransport
    private let script: [SimScript.Step]
    private var nextStep = 0
    private var pacer: OutputPacer
    private var frameLog: FrameLog?
    private var link: Channel?
    private var state = State.up
    private var ticker: RepeatedTask?
    private let finished: EventLoopPromise<Void>
    private var lastDropReport: UInt64 = 0
    private var warnedNotReading = false
    private static let maxUnreadByHost = 2048

    init(settings: SimulatorSettings, group: EventLoopGroup, loop: EventLoop, finished: EventLoopPromise<Void>) {
        self.loop = loop
        self.stand = settings.stand
        self.script = settings.script
        self.pacer = OutputPacer(baud: settings.baud)
        self.frameLog = settings.logFrames ? FrameLog() : nil
        self.finished = finished
        switch settings.link {
        case .pty(let symlink): transport = PtyTransport(group: group, linkPath: symlink)
        case .unix(let path): transport = UnixTransport(group: group, path: path)
        }
    }

    private var bound: NIOLoopBound<SimulatedStandHost> { NIOLoopBound(self, eventLoop: loop) }

    /// Opens the link and starts the clock ticking.
    func start() -> EventLoopFuture<Void> {
        let bound = self.bound
        // 1 ms: the physics step, well inside a 10 ms feedback period, and cheap enough on 2 cores.
        ticker = loop.scheduleRepeatedTask(initialDelay: .milliseconds(1), delay: .milliseconds(1)) { _ in
            bound.value.tick()
        }
        return transport.open(initializer: initializer)
    }

    /// Installs a handler feeding this engine on every new host link.
    private var initializer: @Sendable (Channel) -> EventLoopFuture<Void> {
        let bound = self.bound
        return { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(HostLinkHandler(engine: bound.value))
            }
        }
    }

    // MARK: - Time

    func tick() {
        guard state != .shuttingDown else { return }
        let now = clock.micros()
        while nextStep < script.count, script[nextStep].time * 1e6 <= Double(now) {
            perform(script[nextStep].action)
            nextStep += 1
        }
        emit(stand.advance(toMicros: now))
        flush(atMicros: now)
    }

    // MARK: - Host link

    func attach(_ channel: Channel) {
        guard state == .up else { channel.close(promise: nil); return }
        if let old = link, old !== channel {
            Console.err("a new host connection replaces the previous one")
            old.close(promise: nil)
            // The new host starts with HELLO; nothing of the old session may reach it first.
            stand.endSession(atMicros: clock.micros())
        }
        link = channel
        pacer.reset()
        frameLog?.reset()
        warnedNotReading = false
    }

    func detach(_ channel: Channel) {
        guard link === channel else { return }
        stand.endSession(atMicros: clock.micros())
        link = nil
        pacer.reset()
    }

    func receive(_ bytes: [UInt8], from channel: Channel) {
        // Bytes still arriving on a replaced connection are not the current host's.
        guard link === channel, state == .up else { return }
        let now = clock.micros()
        frameLog?.host(bytes, atMicros: now)
        emit(stand.receive(bytes, atMicros: now))
        flush(atMicros: now)
    }

    /// Queues the stand's bytes for the link; with no host they go nowhere, as on a cable with
    /// nothing at the other end.
    private func emit(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, link != nil, state == .up else { return }
        pacer.enqueue(bytes)
    }

    private func flush(atMicros now: UInt64) {
        guard let link else { return }
        reportDrops(atMicros: now)
        // A pty keeps what nobody reads (up to ~68 KB in Linux's buffers) and would serve it,
        // seconds stale, to the next host that opens it; a USB stand's bytes are simply lost
        // while the port is closed. So past ~250 ms of output unread, drop instead of writing.
        guard link.isWritable, transport.unreadByHost < Self.maxUnreadByHost else {
            // The host is not reading (a pty nobody has open, a stuck client). Unpaced output
            // would pile up without bound; drop it, like bytes sent down an unread serial line.
            if pacer.bytesPerSecond == nil {
                if frameLog != nil { frameLog?.unread(pacer.take(atMicros: now), atMicros: now) }
                pacer.reset()
            }
            if !warnedNotReading {
                Console.err("the host is not reading; dropping output until it does")
                warnedNotReading = true
            }
            return
        }
        warnedNotReading = false
        let bytes = pacer.take(atMicros: now)
        guard !bytes.isEmpty else { return }
        frameLog?.stand(bytes, atMicros: now)
        link.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
    }

    private func reportDrops(atMicros now: UInt64) {
        guard pacer.droppedFrames > 0, now - lastDropReport >= 1_000_000 else { return }
        Console.err("link too slow for the stand's output: dropped \(pacer.droppedFrames) frames (lower --feedback-hz/--imu-hz or raise --baud)")
        pacer.droppedFrames = 0
        lastDropReport = now
    }

    // MARK: - Commands (stdin and script)

    func command(_ line: String) {
        let text = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard text.contains(where: { !$0.isWhitespace }) else { return }
        do {
            perform(try SimAction.parse(String(text)))
        } catch {
            Console.err("bad command '\(line)': \(error.description)")
        }
    }

    private func perform(_ action: SimAction) {
        guard state != .shuttingDown else { return }
        if case .unplug(let seconds) = action {
            unplug(for: seconds)
            return
        }
        let now = clock.micros()
        emit(stand.apply(action, atMicros: now))
        flush(atMicros: now)
    }

    private func unplug(for seconds: Double) {
        guard state == .up else {
            Console.err("unplug: the link is already down")
            return
        }
        state = .unplugged
        // Unplugging powers a USB stand down: its session with the host is over.
        stand.endSession(atMicros: clock.micros())
        link?.close(promise: nil)
        link = nil
        pacer.reset()
        transport.close()
        Console.err("unplugged; plugging back in after \(seconds) s")
        let bound = self.bound
        loop.scheduleTask(in: .microseconds(Int64(seconds * 1e6))) { bound.value.replug() }
    }

    private func replug() {
        guard state == .unplugged else { return }
        // Up before opening: a pty's channel becomes active (and attaches) while it opens.
        state = .up
        let bound = self.bound
        transport.open(initializer: initializer).whenFailure { error in
            let engine = bound.value
            guard engine.state == .up else { return }
            Console.err("cannot plug back in: \(error); trying again in 1 s")
            engine.state = .unplugged
            engine.loop.scheduleTask(in: .seconds(1)) { bound.value.replug() }
        }
    }

    // MARK: - Exit

    func shutdown() {
        guard state != .shuttingDown else { return }
        state = .shuttingDown
        ticker?.cancel()
        link?.close(promise: nil)
        link = nil
        transport.close()
        transport.removeFiles()
        finished.succeed(())
    }
}
