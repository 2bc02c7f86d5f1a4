#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The command interval between a V4L2 camera's control sets, kept per device rather than per link:
/// a link reopened while the old link's thread still finishes a set (the host stopped waiting for
/// its answer) spaces its sets from that one too — two threads each spacing only its own sent the
/// camera two sets closer than the interval it may wedge under. A device is known by its number
/// (`st_rdev`), so /dev/video0 and its /dev/v4l/by-id link are one camera.
final class DeviceSetSpacing: Sendable {
    /// When the device's last set started (CLOCK_MONOTONIC s); held while a set waits and runs, so
    /// that the device's sets go one at a time whichever thread sends them.
    private let lastStart = Mutex<Double>(-.infinity)
    private static let devices = Mutex<[UInt: DeviceSetSpacing]>([:])

    /// The spacing of the device with this number (one per device for as long as dockd runs: a few).
    static func of(device number: UInt) -> DeviceSetSpacing {
        devices.withLock { devices in
            if let known = devices[number] { return known }
            let new = DeviceSetSpacing()
            devices[number] = new
            return new
        }
    }

    /// Runs `set` (the ioctl) once `spacing` s have passed since the start of the device's last set,
    /// or as soon as that set returns if it took longer: the sets a camera gets are
    /// `max(spacing, its answer's time)` apart.
    func spaced<Result: Sendable>(_ spacing: Double, _ set: () -> Result) -> Result {
        lastStart.withLock { last in
            Self.sleep(until: last + spacing)
            last = MonotonicClock.now()
            return set()
        }
    }

    private static func sleep(until time: Double) {
        var wait = time - MonotonicClock.now()
        while wait > 0 {  // again after a signal cut the sleep short
            var span = timespec(tv_sec: Int(wait), tv_nsec: Int((wait - wait.rounded(.down)) * 1e9))
            _ = nanosleep(&span, nil)
            wait = time - MonotonicClock.now()
        }
    }
}
