import DockProtocol

/// Who steers the stand between a client's own motion and tracking, and what the LED and the
/// phase say about it. Pure: the engine tells it what happened and when, and asks it whether
/// tracking may drive now, which LED mode to send, which phase to publish.
struct Steering: Sendable {
    enum Event: Sendable {
        /// A client's velocity: tracking waits until its deadman has run out.
        case clientVelocity(deadman: Double)
        /// A client turned the stand (orientation, velocity), or a sweep or tour ended: once its
        /// motion ends, tracking starts afresh where the stand points.
        case clientTurned
        /// System tracking switched on or off (the API, the button, the defaults).
        case systemTracking(Bool, source: String)
        /// The stand connected: the LED is sent again whatever it was.
        case connected
    }

    /// System tracking on: tracking steers from observations any client sends.
    private(set) var systemTracking: Bool
    /// Client motion (velocity until its deadman, orientation, animation) pauses tracking until then.
    private var clientMotionUntil = -Double.infinity
    /// A client moved the stand: once its motion ends, tracking starts afresh where it points.
    private(set) var clientTurned = false
    private var ledSent: LedMode?
    private var phasePublished = TrackingPhase.tracking

    init(systemTracking: Bool) { self.systemTracking = systemTracking }

    mutating func handle(_ event: Event, at now: Double) -> EngineOutput {
        var out = EngineOutput()
        switch event {
        case .clientVelocity(let deadman):
            clientMotionUntil = now + deadman
            clientTurned = true
        case .clientTurned:
            clientTurned = true
        case .systemTracking(let enabled, let source):
            systemTracking = enabled
            out.notifications.append(.trackingChanged(enabled: enabled, source: source))
        case .connected:
            ledSent = nil
        }
        return out
    }

    /// Whether tracking may drive now: it is on (or the lease holder feeds its own) and no
    /// client's velocity runs.
    func trackingMayDrive(leaseHeld: Bool, at now: Double) -> Bool {
        (systemTracking || leaseHeld) && now >= clientMotionUntil
    }

    /// Tracking takes over: true once after a client's turn (tracking then starts afresh).
    mutating func takeOver() -> Bool {
        defer { clientTurned = false }
        return clientTurned
    }

    /// The LED policy: off when not tracking, on when tracking, blinking while the subject is in
    /// frame. Returns the mode to send when it changes (nil: nothing to send).
    mutating func led(trackingActive: Bool, inFrame: Bool) -> LedMode? {
        let mode: LedMode = !systemTracking ? .off : (trackingActive && inFrame ? .blink : .on)
        guard mode != ledSent else { return nil }
        ledSent = mode
        return mode
    }

    /// The phase to publish when it changed (nil: unchanged).
    mutating func publish(_ phase: TrackingPhase) -> StandNotification? {
        guard phase != phasePublished else { return nil }
        phasePublished = phase
        return .phaseChanged(phase)
    }
}
