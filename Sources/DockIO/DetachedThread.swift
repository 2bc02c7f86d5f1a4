#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The threads of device adapters (VideoDeviceLink, ONVIFLink): each blocks in read(2) and in its
/// device's slow calls, so it runs apart from every event loop, and answers over a socketpair.
public enum DetachedThread {
    /// The threads started and not yet finished.
    private static let running = Atomic<Int>(0)

    /// Runs `body` on a detached thread of its own; false when none could be started.
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        running.add(1, ordering: .relaxed)
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            DetachedThread.running.subtract(1, ordering: .releasing)
            return nil
        }, box)
        guard started == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            running.subtract(1, ordering: .relaxed)
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// Waits, at most `seconds`, for every thread to finish what it does once its link is closed
    /// (a webcam's own tracking put back as it was): dockd calls it after closing its links, before
    /// it exits, which would end them mid-call.
    public static func waitForAll(upTo seconds: Double) {
        let deadline = MonotonicClock.now() + seconds
        while running.load(ordering: .acquiring) > 0 && MonotonicClock.now() < deadline { usleep(5_000) }
    }

    /// Writes all of `bytes` to `fd`; false when the other end is gone.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    private final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
