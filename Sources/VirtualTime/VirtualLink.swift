import DockDrivers

/// Any `LinkSession` joined to a virtual peer over the session's wire, in virtual time: every
/// millisecond the peer runs and its bytes go to the session, the session's writes go to the
/// peer, and the session is ticked when it says a tick is due (`nextTick`), as a real host's timer
/// would. What runs dockd's engine in `VirtualHost`, and dock-driver-probe's run in its tests;
/// only the clock and the transport are virtual.
public struct VirtualLink<Session: LinkSession, Peer: VirtualPeer> {
    public private(set) var peer: Peer
    /// The session; `VirtualHost` hands it the engine's other events (commands, clients) directly.
    public internal(set) var session: Session
    /// Peer time, µs; host time is `epoch` seconds ahead of it, so the two are never confused.
    public private(set) var micros: UInt64 = 0
    public let epoch: Double
    /// The link is open (a real host would have a channel).
    public private(set) var linkOpen = false
    /// Every write of the session to the peer since the records were last cleared, with its host time.
    public private(set) var written: [(time: Double, bytes: [UInt8])] = []
    /// Ticks the session was given: the wake-ups of a real host's timer.
    public private(set) var ticks = 0
    /// The session's outputs not yet taken (`takeOutputs`), each after those of the steps it caused.
    private var outputs: [Session.Output] = []
    /// The session's `nextTick` after the last event: it changes only when the session handles one.
    private var tickDue: Double?
    private var reopenAt: Double?

    public init(session: Session, peer: Peer, epoch: Double = 1000) {
        self.session = session
        self.peer = peer
        self.epoch = epoch
    }

    /// Host time now, s.
    public var now: Double { epoch + Double(micros) / 1e6 }

    public mutating func open() {
        linkOpen = true
        apply(session.handle(link: .opened, at: now))
    }

    /// The cable is pulled: the peer ends its session (a stand's motors stop), the session hears the close.
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
        if linkOpen && !bytes.isEmpty { apply(session.handle(link: .received(bytes), at: now)) }
        if linkOpen, let due = tickDue, due <= now {
            ticks += 1
            apply(session.handle(link: .tick, at: now))
        }
    }

    /// Something happens at the peer (a button, a fault injected): `change` returns what it sends.
    public mutating func atPeer(_ change: (inout Peer, UInt64) -> [UInt8]) {
        let bytes = change(&peer, micros)
        if linkOpen && !bytes.isEmpty { apply(session.handle(link: .received(bytes), at: now)) }
    }

    /// Bytes as if the peer had sent them (a crafted frame), to the session now.
    public mutating func inject(_ bytes: [UInt8]) {
        if linkOpen { apply(session.handle(link: .received(bytes), at: now)) }
    }

    public mutating func clearWritten() { written.removeAll() }

    /// The outputs since the last call, in order, into `buffer`, which must be empty: the two
    /// arrays swap, so that a caller that empties its buffer keeping its capacity allocates none at
    /// each step.
    public mutating func takeOutputs(into buffer: inout [Session.Output]) {
        swap(&buffer, &outputs)
    }

    /// Carries out what the session asked: its writes to the peer (and the peer's answer back to the
    /// session at once), and a close of the link, which the peer notices and reopens after the
    /// backoff.
    mutating func apply(_ out: Session.Output) {
        if !out.writes.isEmpty && linkOpen {
            let bytes = out.writes.flatMap { $0 }
            written.append((now, bytes))
            let reply = peer.receive(bytes, atMicros: micros)
            if !reply.isEmpty { apply(session.handle(link: .received(reply), at: now)) }
        }
        outputs.append(out)
        if let reason = out.closeLink {
            peer.endSession(atMicros: micros)
            closeLink(reason)
            reopenAt = now + 0.25
        }
        tickDue = session.nextTick
    }

    private mutating func closeLink(_ reason: String) {
        guard linkOpen else { return }
        linkOpen = false
        apply(session.handle(link: .closed(reason: reason), at: now))
    }
}

extension VirtualLink: Sendable where Session: Sendable, Peer: Sendable {}
