/// Replies that wait for the stand to acknowledge what they asked, in the order they were asked: a
/// STOP's (bounded: then "not confirmed") and a LIMITS' (bounded: then a failure, so a caller is
/// never told "ok" for limits the stand refused). One queue for both, answered by the same events.
struct AcknowledgementQueue: Sendable {
    /// What a waiting reply needs the stand to acknowledge.
    enum Awaited: Sendable, Equatable { case stop, limits }

    /// What answers the waiting replies.
    enum Event: Sendable {
        /// What the stand has acknowledged by now, and whether its link is still connected.
        case standState(stopConfirmed: Bool, limitsAcknowledged: Bool, connected: Bool, stand: String)
        /// The stand refused the command (NACK, or no acknowledgement after every resend).
        case refused(Awaited, reason: String)
    }

    typealias Reply = (token: Int, result: Result<CommandResult, EngineError>)

    private var waiting: [(awaited: Awaited, token: Int, deadline: Double)] = []

    /// The earliest deadline of a waiting reply (when it must be answered anyway).
    var nextDeadline: Double? { waiting.map(\.deadline).min() }

    /// The reply `token` waits for `awaited`, until `deadline` at the latest.
    mutating func wait(for awaited: Awaited, token: Int, deadline: Double) {
        waiting.append((awaited, token, deadline))
    }

    /// The replies `event` settles, and those whose deadline has come.
    mutating func handle(_ event: Event, at now: Double) -> [Reply] {
        switch event {
        case .standState(let stopConfirmed, let limitsAcknowledged, let connected, let stand):
            return answer(at: now) { awaited in
                switch awaited {
                case .stop:
                    if stopConfirmed || !connected { return .success(.stopped(confirmed: stopConfirmed && connected)) }
                    return nil
                case .limits:
                    if !connected { return .failure(.notConnected(stand: stand)) }
                    return limitsAcknowledged ? .success(.ok) : nil
                }
            }
        case .refused(let refused, let reason):
            return answer(at: now) { awaited in
                guard awaited == refused else { return nil }
                switch awaited {
                case .stop: return .success(.stopped(confirmed: false))
                case .limits: return .failure(.motionFailed("the stand refused LIMITS: \(reason)"))
                }
            }
        }
    }

    /// Answers each waiting reply `outcome` settles, and each whose deadline has come.
    private mutating func answer(at now: Double, _ outcome: (Awaited) -> Result<CommandResult, EngineError>?) -> [Reply] {
        var replies: [Reply] = []
        waiting.removeAll { entry in
            guard let result = outcome(entry.awaited) ?? (now >= entry.deadline ? Self.timedOut(entry.awaited) : nil) else { return false }
            replies.append((entry.token, result))
            return true
        }
        return replies
    }

    private static func timedOut(_ awaited: Awaited) -> Result<CommandResult, EngineError> {
        switch awaited {
        case .stop: .success(.stopped(confirmed: false))
        case .limits: .failure(.motionFailed("the stand did not acknowledge LIMITS"))
        }
    }
}
