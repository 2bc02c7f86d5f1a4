import DockCore
import DockDrivers
import DockProtocol

/// Whether a client's command may act now, and the replies that wait for the stand: the control
/// lease (its holder, a stop that holds, the holder's limits), drives the stand refuses (motion
/// held back for a while), and the one queue of replies awaiting the stand's acknowledgement. Pure:
/// what the stand has acknowledged and the time come in, replies and reasons go out.
struct CommandGate: Sendable {
    private(set) var lease = ControlLease()
    private var refusals = RefusalWatch()
    private var acknowledgements = AcknowledgementQueue()
    /// The lease's limits before the LIMITS the stand has not acknowledged yet: what the stand keeps
    /// if it refuses them (LIMITS is all or nothing). nil once none is awaited.
    private var limitsBeforeUnacknowledged: [Axis: LimitRequest]?

    /// What the stand did with a command it was sent.
    enum StandAnswer: Sendable {
        /// The stand has acknowledged by now what it has (and whether its link is still up).
        case state(stopConfirmed: Bool, limitsAcknowledged: Bool, connected: Bool, stand: String)
        /// The stand refused a command (NACK, or no acknowledgement after every resend).
        case refused(MessageType?, reason: String)
        /// The driver's outcome of a camera preset request.
        case cameraPreset(CameraPresetRequest, Result<CameraPresetSlot, CameraPresetRefusal>)
    }

    /// What the engine does about a refusal, beside the replies.
    enum Consequence: Equatable {
        case nothingMore
        /// The stand's limits are these now (a LIMITS refused: it keeps what it had).
        case limitsInForce([Axis: LimitRequest])
        /// Drives were refused often enough to hold motion back: the running motion ends.
        case motionHeldBack(reason: String)
    }

    /// The earliest time a waiting reply must be answered anyway.
    var nextDeadline: Double? { acknowledgements.nextDeadline }

    /// dockd is stopping the stand to exit: nothing sets it in motion again (tracking steered it
    /// on the next FEEDBACK after the exit's STOP, and a camera told a rate last kept turning).
    private(set) var shuttingDown = false

    /// A stop holds, dockd is exiting, or the stand refuses drives: neither tracking nor a sweep steers.
    func holdsMotionBack(at now: Double) -> Bool { lease.stop != nil || shuttingDown || refusals.holding(at: now) }

    /// From now on the stand stays stopped: motion is refused, tracking and sweeps hold.
    mutating func shutDown() { shuttingDown = true }

    /// Lets `command` through or says why not: the lease (taken, or another's taken over with
    /// `force`), a stop that holds, drives the stand refuses. What it logs and publishes goes in `out`.
    mutating func admit(_ command: EngineCommand, from client: ClientRef, force: Bool, stand: String, at now: Double,
                        _ out: inout EngineOutput) throws(EngineError) {
        if command.isLeased, case .takenOver(let from) = try lease.acquire(client, force: force, stand: stand) {
            out.notifications.append(.leaseChanged(client: client.id, takenFrom: from.id))
            out.log(.notice, "client \(client.id) took control from client \(from.id)")
        }
        if command.startsMotion || Self.enablesTracking(command) {
            if shuttingDown { throw .motionFailed("dockd is shutting down: the stand stays stopped") }
            guard lease.mayMove(client) else { throw .stopped(by: lease.stop?.by, stand: stand) }
        }
        if command.startsMotion, let reason = refusals.holdReason(at: now) { throw .motionFailed(reason) }
    }

    /// A client's observations while system tracking is off: only the lease holder feeds its own.
    mutating func admitObservations(from client: ClientRef, stand: String) throws(EngineError) {
        _ = try lease.acquire(client, force: false, stand: stand)
    }

    mutating func resume(_ client: ClientRef, stand: String) throws(EngineError) -> Bool {
        try lease.resume(client, stand: stand)
    }

    /// A stop holds from now; its reply (`token`) waits for the stand's acknowledgement until `deadline`.
    mutating func stop(by client: ClientRef, token: Int?, deadline: Double?) {
        lease.hold(stopBy: client)
        if let token, let deadline { acknowledgements.wait(for: .stop, token: token, deadline: deadline) }
    }

    /// A camera preset request sent to the camera: the reply (`token`) waits for the driver's
    /// outcome until `deadline`.
    mutating func cameraPresetSent(_ request: CameraPresetRequest, token: Int?, deadline: Double) {
        guard let token else { return }
        acknowledgements.wait(for: .cameraPreset(request), token: token, deadline: deadline)
    }

    /// The holder's limits, sent to the stand: the reply (`token`) waits for its acknowledgement
    /// until `deadline` (nil: a driver that needs none; answered at once).
    mutating func limitsSent(_ requests: [Axis: LimitRequest], token: Int?, deadline: Double?, _ out: inout EngineOutput) {
        if limitsBeforeUnacknowledged == nil { limitsBeforeUnacknowledged = lease.limits }
        lease.limits.merge(requests) { _, new in new }
        if let token, let deadline {
            acknowledgements.wait(for: .limits, token: token, deadline: deadline)
        } else {
            out.reply(token, .success(.ok))
        }
    }

    /// The client gave its lease back or is gone: true when it held it (its changes revert).
    mutating func release(_ client: Int) -> Bool { lease.release(client) }

    /// The link closed: a LIMITS unacknowledged then is sent again from the lease after a reconnect.
    mutating func linkClosed() { limitsBeforeUnacknowledged = nil }

    /// Answers the replies the stand's answer settles (and those whose deadline has come).
    mutating func handle(_ answer: StandAnswer, at now: Double, _ out: inout EngineOutput) -> Consequence {
        switch answer {
        case .state(let stopConfirmed, let limitsAcknowledged, let connected, let stand):
            out.replies += acknowledgements.handle(.standState(stopConfirmed: stopConfirmed, limitsAcknowledged: limitsAcknowledged,
                                                               connected: connected, stand: stand), at: now)
            if limitsAcknowledged { limitsBeforeUnacknowledged = nil }
            return .nothingMore
        case .cameraPreset(let request, let result):
            out.replies += acknowledgements.handle(.cameraPreset(request, result), at: now)
            return .nothingMore
        case .refused(.stop, let reason):
            out.replies += acknowledgements.handle(.refused(.stop, reason: reason), at: now)
            return .nothingMore
        case .refused(.limits, let reason):
            out.replies += acknowledgements.handle(.refused(.limits, reason: reason), at: now)
            return .limitsInForce(refusedLimits(reason, &out))
        case .refused(let type?, let reason) where type == .velocity || type == .position:
            guard let hold = refusals.refused("the stand refused \("\(type)".uppercased()): \(reason)", at: now) else { return .nothingMore }
            out.log(.error, "\(hold.reason); motion held back for \(hold.seconds) s")
            return .motionHeldBack(reason: hold.reason)
        case .refused:
            return .nothingMore
        }
    }

    /// LIMITS is all or nothing (PROTOCOL.md §4): the stand keeps what it had, and dockd's table
    /// follows it. Nothing is sent again: a stand that refused a LIMITS refuses the same one again,
    /// and answering each refusal with another LIMITS was a retry storm (thousands a second).
    private mutating func refusedLimits(_ reason: String, _ out: inout EngineOutput) -> [Axis: LimitRequest] {
        if let before = limitsBeforeUnacknowledged {
            lease.limits = before  // a narrowing refused: what the stand still enforces
        } else if !lease.limits.isEmpty {
            lease.limits = [:]  // the holder's limits, sent again after a reconnect, refused: not in force
        } else {
            out.log(.error, "the stand refused to return to its own limits (\(reason)): until it reconnects it may enforce narrower limits than dockd shows")
        }
        limitsBeforeUnacknowledged = nil
        return lease.limits
    }

    private static func enablesTracking(_ command: EngineCommand) -> Bool {
        if case .setTracking(true) = command { return true }
        return false
    }
}
