/// The daemon's monotonic clock in seconds since start. The pure core takes times as arguments;
/// this is the one place the shell reads the real clock.
struct DaemonClock: Sendable {
    private let start = ContinuousClock.now

    func now() -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
}
