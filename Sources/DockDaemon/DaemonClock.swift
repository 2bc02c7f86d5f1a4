import DockIO

/// The daemon's clock: CLOCK_MONOTONIC in seconds (`MonotonicClock`), the clock every time in the
/// API is on (a client reads the same clock with clock_gettime, Python's time.monotonic()). The pure
/// core takes times as arguments; the shell reads the real clock through this.
struct DaemonClock: Sendable {
    func now() -> Double { MonotonicClock.now() }
}
