import DockDrivers
import DockProtocol
import StandEngine

/// dockd's per-stand engine, with any driver of the driver table, joined to a virtual peer over
/// that driver's wire, in virtual time: every millisecond the peer runs and its bytes go to the
/// engine, the engine's bytes go back to the peer, and the engine is ticked when it says a tick is
/// due (`nextTick`), as the daemon's shell ticks it. The engine and the driver are the ones dockd
/// runs; only the clock and the transport are virtual. What the unit tests, `dock-bench scenario`
/// and the scenario suite drive (the simulated stand: `VirtualHost(stand:)`).
public struct VirtualHost<Peer: VirtualPeer> {
    public private(set) var peer: Peer
    public private(set) var engine: StandEngine
    /// Peer time, µs; host time is `epoch` seconds ahead of it, so the two are never confused.
    public private(set) var micros: UInt64 = 0
    public let epoch: Double
    /// Notifications so far, with the host time they were published (when `recordingNotifications`).
    public private(set) var notifications: [(time: Double, notification: StandNotification)] = []
    public var recordingNotifications = true
    /// Log lines the engine wrote.
    public private(set) var logs: [EngineLog] = []
    /// Replies to commands that were answered later than asked (by token).
    public private(set) var lateReplies: [Int: Result<CommandResult, EngineError>] = [:]
    /// The link is open (the engine's shell would have a channel).
    public private(set) var linkOpen = false
    /// Every write of the engine to the peer since the records were last cleared, with its host time.
    public private(set) var written: [(time: Double, bytes: [UInt8])] = []
    /// Ticks the engine was given: the wake-ups of the daemon's timer.
    public private(set) var ticks = 0
    /// The engine's `nextTick` after the last event: it changes only when the engine handles one.
    private var tickDue: Double?
    private var reopenAt: Double?
    private var nextToken = 1

    /// `name`: the stand's name until its driver learns its id (the daemon's endpoint).
    public init(driver: any StandDriver, peer: Peer, settings: EngineSettings = EngineSettings(), name: String = "virtual",
                epoch: Double = 1000) {
        self.peer = peer
        engine = StandEngine(driver: driver, settings: settings, fallbackName: name)
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

    /// The cable is pulled: the peer ends its session (a stand's motors stop), the engine hears the close.
    public mutating func unplug(reopenAfter seconds: Double? = nil) {
        peer.endSession(atMicros: micros)
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
        let bytes = peer.advance(toMicros: micros)
        if linkOpen && !bytes.isEmpty { apply(engine.handle(.received(bytes), at: now)) }
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

    /// Something happens at the peer (a button, a fault injected): `change` returns what it sends.
    public mutating func atPeer(_ change: (inout Peer, UInt64) -> [UInt8]) {
        let bytes = change(&peer, micros)
        if linkOpen && !bytes.isEmpty { apply(engine.handle(.received(bytes), at: now)) }
    }

    /// Bytes as if the peer had sent them (a crafted frame), to the engine now.
    public mutating func inject(_ bytes: [UInt8]) {
        if linkOpen { apply(engine.handle(.received(bytes), at: now)) }
    }

    /// Drops what was recorded so far.
    public mutating func clearRecords() {
        notifications.removeAll()
        written.removeAll()
        logs.removeAll()
    }

    private mutating func closeLink(_ reason: String) {
        guard linkOpen else { return }
        linkOpen = false
        apply(engine.handle(.linkClosed(reason: reason), at: now))
    }

    private mutating func apply(_ out: EngineOutput, answered: Int? = nil) {
        if !out.bytes.isEmpty && linkOpen {
            written.append((now, out.bytes))
            let reply = peer.receive(out.bytes, atMicros: micros)
            if !reply.isEmpty { apply(engine.handle(.received(reply), at: now)) }
        }
        if recordingNotifications { for n in out.notifications { notifications.append((now, n)) } }
        logs += out.logs
        for (token, result) in out.replies where token != answered { lateReplies[token] = result }
        if let reason = out.closeLink {
            // The host closes its side; the peer notices the link is gone and reopens after the backoff.
            peer.endSession(atMicros: micros)
            closeLink(reason)
            reopenAt = now + 0.25
        }
        tickDue = engine.nextTick
    }
}

extension VirtualHost: Sendable where Peer: Sendable {}
