import DockDrivers

/// `preset` commands sent to the camera and not answered yet: each reply's token, the request it
/// answers (the driver names it in its report) and when it is answered as unanswered. Drivers
/// answer every request themselves (their own resends and timeouts come first): the deadline only
/// keeps a caller from waiting forever on a driver that does not.
struct CameraPresetReplies: Sendable {
    private var waiting: [(request: CameraPresetRequest, token: Int?, deadline: Double)] = []

    var nextDeadline: Double? { waiting.map(\.deadline).min() }

    mutating func expect(_ request: CameraPresetRequest, token: Int?, until deadline: Double) {
        waiting.append((request, token, deadline))
    }

    /// The driver's outcome replies to the oldest request it answers (an answer to one already
    /// given up is dropped).
    mutating func answered(_ request: CameraPresetRequest, _ result: Result<CameraPresetSlot, CameraPresetRefusal>,
                           _ out: inout EngineOutput) {
        guard let i = waiting.firstIndex(where: { $0.request == request }) else { return }
        out.reply(waiting.remove(at: i).token, result.map { .cameraPreset($0) }.mapError { .cameraRefused($0.description) })
    }

    mutating func expire(at now: Double, _ out: inout EngineOutput) {
        waiting.removeAll { pending in
            guard now >= pending.deadline else { return false }
            out.reply(pending.token, .failure(.cameraRefused("no answer from the camera")))
            return true
        }
    }

    /// The link closed: nothing waiting will be answered.
    mutating func linkClosed(stand: String, _ out: inout EngineOutput) {
        for pending in waiting { out.reply(pending.token, .failure(.notConnected(stand: stand))) }
        waiting.removeAll()
    }
}
