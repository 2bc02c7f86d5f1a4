import DockDrivers

/// Replies that wait for the stand to acknowledge what they asked, in the order they were asked: a
/// STOP's (bounded: then "not confirmed"), a LIMITS' (bounded: then a failure, so a caller is
/// never told "ok" for limits the stand refused) and a preset stored in or removed from the camera
/// (its driver answers each one itself, after its own resends and timeouts: the deadline only keeps
/// a caller from waiting on a driver that does not). One queue for all, answered by the same events.
struct AcknowledgementQueue: Sendable {
    /// What a waiting reply needs the stand to acknowledge.
    enum Awaited: Sendable, Equatable { case stop, limits, cameraPreset(CameraPresetRequest) }

    /// What answers the waiting replies.
    enum Event: Sendable {
        /// What the stand has acknowledged by now, and whether its link is still connected.
        case standState(stopConfirmed: Bool, limitsAcknowledged: Bool, connected: Bool, stand: String)
        /// The stand refused the command (NACK, or no acknowledgement after every resend).
        case refused(Awaited, reason: String)
        /// The driver's outcome of a camera preset request: it answers the oldest such request.
        case cameraPreset(CameraPresetRequest, Result<CameraPresetSlot, CameraPresetRefusal>)
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
                case .cameraPreset:
                    return connected ? nil : .failure(.notConnected(stand: stand))
                }
            }
        case .refused(let refused, let reason):
            return answer(at: now) { awaited in
                guard awaited == refused else { return nil }
                switch awaited {
                case .stop: return .success(.stopped(confirmed: false))
                case .limits: return .failure(.motionFailed("the stand refused LIMITS: \(reason)"))
                case .cameraPreset: return nil  // answered by its own outcome
                }
            }
        case .cameraPreset(let request, let result):
            var replies = answer(at: now) { _ in nil }
            if let index = waiting.firstIndex(where: { $0.awaited == .cameraPreset(request) }) {
                let answered = waiting.remove(at: index)
                replies.append((answered.token, result.map { .cameraPreset($0) }.mapError { .cameraRefused($0.description) }))
            }
            return replies
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
        case .cameraPreset: .failure(.cameraRefused("no answer from the camera"))
        }
    }
}
