#if canImport(Glibc)
import Glibc
#endif

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

/// Waits `seconds` (none when not positive).
func pause(_ seconds: Double) {
    guard seconds > 0 else { return }
    usleep(UInt32(seconds * 1e6))
}
