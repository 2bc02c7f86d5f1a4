import DockDrivers
import DockProtocol
import DockSim
import StandEngine

/// dockd's per-stand engine wired to the simulated stand over the wire protocol, in virtual time:
/// every millisecond the stand runs its physics and its bytes go to the engine, the engine's bytes
/// go back to the stand, and the engine is ticked when it says a tick is due (`nextTick`), as the
/// daemon's shell ticks it. The engine is the one dockd runs, with the driver dockd runs; only the
/// clock and the transport are virtual. What the unit tests, `dock-bench scenario` and the scenario
/// suite drive.
public struct VirtualStandRig: Sendable {
    public private(set) var stand: SimulatedStand
    public private(set) var engine: StandEngine
    /// Stand time, µs; host time is `epoch` seconds ahead of it, so the two are never confused.
    public private(set) var micros: UInt64 = 0
    public let epoch: Double
    /// Notifications so far, with the host time they were published (when `recording`).
    public private(set) var notifications: [(time: Double, notification: StandNotification)] = []
    public var recording = true
    /// Log lines the engine wrote.
    public private(set) var logs: [EngineLog] = []
    /// Replies to commands that were answered later than asked (by token).
    public private(set) var lateReplies: [Int: Result<CommandResult, EngineError>] = [:]
    /// The link is open (the engine's shell would have a channel).
    public private(set) var linkOpen = false
    /// Every frame the engine sent the stand, with its host time (when `recording`).
    public private(set) var sent: [(time: Double, frame: Frame)] = []
    /// VELOCITY messages with a non-zero rate on some axis, in total: motion commands.
    public private(set) var movingCommands = 0
    /// Ticks the engine was given: the wake-ups of the daemon's timer.
    public private(set) var ticks = 0
    private var outgoing = FrameDecoder()
    /// The engine's `nextTick` after the last event: it changes only when the engine handles one.
    private var tickDue: Double?
    private var reopenAt: Double?
    private var nextToken = 1

    public init(stand configuration: StandConfiguration = StandConfiguration(), seed: UInt64 = 1,
                settings: EngineSettings = EngineSettings(), epoch: Double = 1000) {
        stand = SimulatedStand(configuration: configuration, seed: seed)
        engine = StandEngine(driver: NativeDriver(heartbeatTimeoutMs: configuration.defaultHeartbeatTimeoutMs, host: "rig"),
                             settings: settings, fallbackName: "rig")
        self.epoch = epoch
    }

    /// Host time now, s.
    public var now: Double { epoch + Double(micros) / 1e6 }

    /// Opens the link and runs until the stand is connected (or `timeout` s pass).
    @discardableResult
    public mutating func connect(timeout: Double = 2) -> Bool {
        open()
        return run(until: now + timeout) { $0.engine.linkState == .connected }
    }

    public mutating func open() {
        linkOpen = true
        apply(engine.handle(.linkOpened, at: now))
    }

    /// The cable is pulled: the stand ends its session (its motors stop), the engine hears the close.
    public mutating func unplug(reopenAfter seconds: Double? = nil) {
        stand.endSession(atMicros: micros)
        closeLink("the stand closed the link (EOF or hangup)")
        reopenAt = seconds.map { now + $0 }
    }

    /// Advances 1 ms.
    public mutating func step() {
        micros += 1000
        if let at = reopenAt, now >= at {
            reopenAt = nil
            open()
        }
        if linkOpen {
            let bytes = stand.advance(toMicros: micros)
            if !bytes.isEmpty { apply(engine.handle(.received(bytes), at: now)) }
        } else {
            _ = stand.advance(toMicros: micros)
        }
        if linkOpen, let due = tickDue, due <= now {
            ticks += 1
            apply(engine.handle(.tick, at: now))
        }
    }

    /// Runs until `time` (host seconds), or until `done` holds; returns whether it did.
    @discardableResult
    public mutating func run(until time: Double, done: (Self) -> Bool = { _ in false }) -> Bool {
        while now < time - 1e-9 {
            if done(self) { return true }
            step()
        }
        return done(self)
    }

    public mutating func run(for seconds: Double) { run(until: now + seconds) }

    /// A client's command. Returns the reply when it came at once; a later one lands in `lateReplies`
    /// under the returned token.
    @discardableResult
    public mutating func command(_ command: EngineCommand, from client: ClientRef = ClientRef(id: 1), force: Bool = false)
        -> (token: Int, reply: Result<CommandResult, EngineError>?) {
        let token = nextToken
        nextToken += 1
        let out = engine.handle(.command(command, from: client, force: force, token: token), at: now)
        let immediate = out.replies.first { $0.token == token }?.result
        apply(out, answered: immediate == nil ? nil : token)
        return (token, immediate)
    }

    /// A command whose reply comes at once; nil when it was refused or deferred.
    public mutating func send(_ command: EngineCommand, from client: ClientRef = ClientRef(id: 1), force: Bool = false) throws(EngineError) -> CommandResult? {
        guard let reply = self.command(command, from: client, force: force).reply else { return nil }
        return try reply.get()
    }

    public mutating func clientGone(_ client: Int) { apply(engine.handle(.clientGone(client), at: now)) }

    /// Any other event, at the present time.
    public mutating func handle(_ event: StandEngine.Event) { apply(engine.handle(event, at: now)) }

    public mutating func shutdown() { apply(engine.handle(.shutdown, at: now)) }

    /// Something happens to the stand (a button, a fault injected).
    public mutating func stand(_ action: SimAction) {
        let bytes = stand.apply(action, atMicros: micros)
        if linkOpen && !bytes.isEmpty { apply(engine.handle(.received(bytes), at: now)) }
    }

    /// Bytes as if the stand had sent them (a crafted frame), to the engine now.
    public mutating func inject(_ bytes: [UInt8]) {
        if linkOpen { apply(engine.handle(.received(bytes), at: now)) }
    }

    /// Drops what was recorded so far.
    public mutating func clearRecords() {
        notifications.removeAll()
        sent.removeAll()
        logs.removeAll()
    }

    private mutating func closeLink(_ reason: String) {
        guard linkOpen else { return }
        linkOpen = false
        apply(engine.handle(.linkClosed(reason: reason), at: now))
    }

    private mutating func apply(_ out: EngineOutput, answered: Int? = nil) {
        if !out.bytes.isEmpty && linkOpen {
            for case .success(let frame) in outgoing.feed(out.bytes) {
                if recording { sent.append((now, frame)) }
                if case .velocity(let rates) = frame.message, rates.contains(where: { $0.value != 0 }) { movingCommands += 1 }
            }
            let reply = stand.receive(out.bytes, atMicros: micros)
            if !reply.isEmpty { apply(engine.handle(.received(reply), at: now)) }
        }
        if recording { for n in out.notifications { notifications.append((now, n)) } }
        logs += out.logs
        for (token, result) in out.replies where token != answered { lateReplies[token] = result }
        if let reason = out.closeLink {
            // The host closes its side; the stand notices the link is gone and reopens after the backoff.
            stand.endSession(atMicros: micros)
            closeLink(reason)
            reopenAt = now + 0.25
        }
        tickDue = engine.nextTick
    }
}
