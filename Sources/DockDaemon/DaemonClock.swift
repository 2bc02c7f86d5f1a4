#if canImport(Glibc)
import Glibc
#endif

/// The daemon's clock: CLOCK_MONOTONIC in seconds, the clock every time in the API is on (a
/// client reads the same clock with clock_gettime, Python's time.monotonic()). The pure core takes
/// times as arguments; this is the one place the shell reads the real clock.
struct DaemonClock: Sendable {
    func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
