import DockProtocol

/// The link's life, apart from what goes over it: the handshake's state, the silence that means the
/// link is lost, and how late the stand answers. Pure: the engine passes what happened and when,
/// and gets back what to log, publish and whether to close the link.
struct LinkSupervisor: Sendable {
    enum Event: Sendable {
        /// The transport is open (`framesDecoded`: the driver's frame count, to tell new ones).
        case opened(framesDecoded: Int)
        /// The driver has now decoded this many valid frames: any new one is a sign of life,
        /// whether or not it carries a report (a heartbeat, an ACK, a frame during the handshake).
        case framesDecoded(Int)
        /// The stand sent a report (not bytes dropped as garbage): a sign of life.
        case report
        /// The stand reported where it is after saying what it is: the handshake is done.
        case handshakeDone
        /// The timer: the link is lost once the stand has been silent for `timeout`.
        case tick
        /// The stand's round trip as the driver measures it now, for its pace.
        case roundTrip(Double)
        /// Close the link from our side with this reason (silence, a refused handshake).
        case drop(reason: String)
        /// The link closed; `byDockd`: dockd closed it itself (stopping, or letting the stand go).
        case closed(reason: String, byDockd: Bool)
        case connectFailed(reason: String)
    }

    /// How late the stand answers, as reported: on time, later than the protocol's 50 ms (a
    /// congested radio, busy firmware), or too late for the controller to steer across.
    enum Pace: Comparable { case onTime, late, tooLateToSteer }

    /// Without a valid frame from the stand for this long the link is lost, s.
    let timeout: Double
    /// Slower than this round trip the controller cannot steer, s.
    let maxRoundTrip: Double
    private(set) var state = LinkState.disconnected
    private(set) var lastError: String?
    private(set) var pace = Pace.onTime
    /// When the stand was last heard from.
    private(set) var lastHeard = 0.0
    /// When the link was last ticked.
    private(set) var lastTick = -Double.infinity
    private var framesHeard = 0

    init(timeout: Double, maxRoundTrip: Double) {
        self.timeout = timeout
        self.maxRoundTrip = maxRoundTrip
    }

    /// When the stand's silence would be judged a lost link, s (a limit judged with `>`).
    var silenceDue: Double { lastHeard + timeout }

    mutating func handle(_ event: Event, at now: Double) -> EngineOutput {
        var out = EngineOutput()
        switch event {
        case .opened(let frames):
            lastHeard = now
            lastTick = now
            framesHeard = frames
            state = .handshaking
        case .framesDecoded(let frames):
            if frames != framesHeard { framesHeard = frames; lastHeard = now }
        case .report:
            lastHeard = now
        case .handshakeDone:
            state = .connected
            lastError = nil
        case .tick:
            guard state != .disconnected else { break }
            lastTick = now
            if now - lastHeard > timeout { drop("no valid frame for \(Int(timeout * 1000)) ms: link lost", &out) }
        case .roundTrip(let roundTrip):
            notePace(roundTrip, at: now, &out)
        case .drop(let reason):
            drop(reason, &out)
        case .closed(let reason, let byDockd):
            let wasConnected = state == .connected
            if lastError == nil || wasConnected { lastError = reason }
            state = .disconnected
            if wasConnected {
                out.log(byDockd ? .info : .warning, "stand disconnected", ["reason": lastError ?? reason])
                out.notifications.append(.disconnected(reason: lastError ?? reason))
            }
        case .connectFailed(let reason):
            lastError = reason
        }
        return out
    }

    private mutating func drop(_ reason: String, _ out: inout EngineOutput) {
        lastError = reason
        out.log(.error, reason)
        out.closeLink = reason
    }

    /// Reports each change of the stand's pace; the controller predicts across the delay, or stops.
    private mutating func notePace(_ roundTrip: Double, at now: Double, _ out: inout EngineOutput) {
        // Hysteresis (a fifth below each threshold) so a round trip at the edge does not flap.
        func pace(margin: Double) -> Pace {
            roundTrip > maxRoundTrip * margin ? .tooLateToSteer : roundTrip > 0.05 * margin ? .late : .onTime
        }
        let next = pace(margin: 1) > self.pace ? pace(margin: 1) : pace(margin: 0.8) < self.pace ? pace(margin: 0.8) : self.pace
        guard next != self.pace else { return }
        self.pace = next
        let ms = Int((roundTrip * 1000).rounded())
        let text = switch next {
        case .onTime: "the stand answers on time again: round trip \(ms) ms"
        case .late: "the stand answers late: round trip \(ms) ms (the protocol promises ACKs within 50 ms; a busy host adds to it); motion predicts across it"
        case .tooLateToSteer: "the stand answers late: round trip \(ms) ms, too late to steer: motion stops and is refused until it recovers"
        }
        out.log(next == .onTime ? .notice : .warning, text)
        out.notifications.append(.fault(FaultReport(source: .dockd, code: DaemonFault.linkPace.rawValue,
                                                    severity: next == .onTime ? 0 : next == .late ? 1 : 2, text: text)))
    }
}
