/// The stand's clock: microseconds since the process started, never going backwards. The pure
/// stand only ever sees these numbers; reading a real clock is the shell's job.
struct MonotonicClock: Sendable {
    private let start = ContinuousClock.now

    func micros() -> UInt64 {
        let (seconds, attoseconds) = start.duration(to: .now).components
        return UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000)
    }
}
