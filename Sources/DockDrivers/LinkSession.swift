/// What a host runs over one stand link: a pure state machine fed the link's events with the time
/// they happened, answering with what to write. The host (an I/O shell, or a virtual one) only moves
/// bytes and time: it opens the link, hands over what arrives, ticks the session when `nextTick`
/// comes, and writes what each step returns. dockd's engine is one (StandEngine+LinkSession.swift),
/// dock-driver-probe's run another; the virtual link (VirtualTime) runs either in virtual time,
/// `LinkSessionHost` (DockIO) either on a real link.
public protocol LinkSession: Sendable {
    associatedtype Output: LinkSessionOutput
    mutating func handle(link event: LinkEvent, at now: Double) -> Output
    /// When the session next needs `.tick` (host seconds; at or before now: at once); nil: never.
    var nextTick: Double? { get }
    /// Whether something the session wrote waits for the peer's answer (a command's acknowledgement,
    /// a probe timing the link): a host reading the link in batches then reads the next bytes as
    /// they come, not with its next batch. False: nothing written asks for an answer.
    var awaitsAnswer: Bool { get }
}

extension LinkSession {
    /// Every write may be answered.
    public var awaitsAnswer: Bool { true }
}

public enum LinkEvent: Sendable, Equatable {
    /// The transport is open: a driver starts its handshake.
    case opened
    case received([UInt8])
    /// The timer: `nextTick` has come (an earlier call does no harm).
    case tick
    /// The transport closed (EOF, hangup, an error, or the `closeLink` the session asked for).
    case closed(reason: String)
}

public protocol LinkSessionOutput: Sendable {
    /// What each driver call returned, in order: one write each (on a datagram link, one datagram
    /// each: a VISCA-over-IP camera reads one message per datagram).
    var writes: [[UInt8]] { get }
    /// Close the link, for this reason.
    var closeLink: String? { get }
}
