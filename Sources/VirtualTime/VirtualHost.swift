import DockDrivers
import DockProtocol
import StandEngine

/// dockd's per-stand engine, with any driver of the driver table, joined to a virtual peer over
/// that driver's wire, in virtual time (`VirtualLink`: every millisecond the peer runs, the
/// engine is ticked when it says a tick is due), with what a client does and what the engine tells
/// recorded. The engine and the driver are the ones dockd runs; only the clock and the transport
/// are virtual. What the unit tests, `dock-bench scenario` and the scenario suite drive (the
/// simulated stand: `VirtualHost(stand:)`).
public struct VirtualHost<Peer: VirtualPeer> {
    private var link: VirtualLink<StandEngine, Peer>
    /// Notifications so far, with the host time they were published (when `recordingNotifications`).
    public private(set) var notifications: [(time: Double, notification: StandNotification)] = []
    public var recordingNotifications = true
    /// Log lines the engine wrote.
    public private(set) var logs: [EngineLog] = []
    /// Replies to commands that were answered later than asked (by token).
    public private(set) var lateReplies: [Int: Result<CommandResult, EngineError>] = [:]
    private var nextToken = 1
    /// The link's outputs being recorded (kept between steps for its capacity).
    private var taken: [EngineOutput] = []

    /// `name`: the stand's name until its driver learns its id (the daemon's endpoint).
    public init(driver: any StandDriver, peer: Peer, settings: EngineSettings = EngineSettings(), name: String = "virtual",
                epoch: Double = 1000) {
        link = VirtualLink(session: StandEngine(driver: driver, settings: settings, fallbackName: name), peer: peer, epoch: epoch)
    }

    // Read in place (`_read`): a copy of the engine would retain each of its arrays at every read.
    public var engine: StandEngine { _read { yield link.session } }
    public var peer: Peer { _read { yield link.peer } }
    /// Peer time, µs; host time is `epoch` seconds ahead of it.
    public var micros: UInt64 { link.micros }
    public var epoch: Double { link.epoch }
    /// Host time now, s.
    public var now: Double { link.now }
    /// The link is open (the engine's shell would have a channel).
    public var linkOpen: Bool { link.linkOpen }
    /// Every write of the engine to the peer since the records were last cleared, with its host time.
    public var written: [(time: Double, bytes: [UInt8])] { link.written }
    /// Ticks the engine was given: the wake-ups of the daemon's timer.
    public var ticks: Int { link.ticks }

    /// Opens the link and runs until the stand is connected (or `timeout` s pass).
    @discardableResult
    public mutating func connect(timeout: Double = 2) -> Bool {
        open()
        return run(until: now + timeout) { $0.engine.linkState == .connected }
    }

    public mutating func open() {
        link.open()
        record()
    }

    /// The cable is pulled: the peer ends its session (a stand's motors stop), the engine hears the close.
    public mutating func unplug(reopenAfter seconds: Double? = nil) {
        link.unplug(reopenAfter: seconds)
        record()
    }

    /// Advances 1 ms.
    public mutating func step() {
        link.step()
        record()
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
        let out = link.session.handle(.command(command, from: client, force: force, token: token), at: now)
        let immediate = out.replies.first { $0.token == token }?.result
        link.apply(out)
        record(answered: immediate == nil ? nil : token)
        return (token, immediate)
    }

    /// A command whose reply comes at once; nil when it was refused or deferred.
    public mutating func send(_ command: EngineCommand, from client: ClientRef = ClientRef(id: 1), force: Bool = false) throws(EngineError) -> CommandResult? {
        guard let reply = self.command(command, from: client, force: force).reply else { return nil }
        return try reply.get()
    }

    public mutating func clientGone(_ client: Int) { handle(.clientGone(client)) }

    /// Any other event, at the present time.
    public mutating func handle(_ event: StandEngine.Event) {
        let out = link.session.handle(event, at: now)
        link.apply(out)
        record()
    }

    public mutating func shutdown() { handle(.shutdown) }

    /// Something happens at the peer (a button, a fault injected): `change` returns what it sends.
    public mutating func atPeer(_ change: (inout Peer, UInt64) -> [UInt8]) {
        link.atPeer(change)
        record()
    }

    /// Bytes as if the peer had sent them (a crafted frame), to the engine now.
    public mutating func inject(_ bytes: [UInt8]) {
        link.inject(bytes)
        record()
    }

    /// Drops what was recorded so far.
    public mutating func clearRecords() {
        notifications.removeAll()
        link.clearWritten()
        logs.removeAll()
    }

    /// Records what the engine told since the last call; `answered`: the token whose reply the
    /// caller has already.
    private mutating func record(answered: Int? = nil) {
        link.takeOutputs(into: &taken)
        let time = now
        for out in taken {
            if recordingNotifications { for n in out.notifications { notifications.append((time, n)) } }
            logs += out.logs
            for (token, result) in out.replies where token != answered { lateReplies[token] = result }
        }
        taken.removeAll(keepingCapacity: true)
    }
}

extension VirtualHost: Sendable where Peer: Sendable {}
