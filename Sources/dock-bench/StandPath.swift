#if canImport(Glibc)
import Glibc
#endif

/// Seconds of CLOCK_MONOTONIC: the clock of tracking.observe's `timestamp`.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// A JSON number as decoded by JSONSerialization (an integer-valued one may come as an Int).
func number(_ value: Any?) -> Double? {
    (value as? Double) ?? (value as? Int).map(Double.init)
}

/// Where the stand pointed over a live run, from dockd's `motion.state` stream.
struct StandPath {
    struct Point {
        /// dockd's clock, s.
        var time: Double
        var yaw: Double
        var pitch: Double
        var yawRate: Double
        var pitchRate: Double
        /// The stand's own clock (what its hand-held base model runs on), µs.
        var standMicros: Double
    }

    private(set) var points: [Point] = []
    /// Our clock minus dockd's: the smallest (arrival − dockd time) seen, the delivery delay's floor.
    private(set) var offset = Double.infinity

    /// Keeps one `motion.state` notification's params that arrived at `arrival` (our clock).
    mutating func record(_ params: [String: Any], arrival: Double) {
        guard let time = number(params["time"]), let positions = params["positions"] as? [String: Any],
              let yaw = number(positions["yaw"]), let pitch = number(positions["pitch"]) else { return }
        let rates = params["velocities"] as? [String: Any] ?? [:]
        points.append(Point(time: time, yaw: yaw, pitch: pitch, yawRate: number(rates["yaw"]) ?? 0,
                            pitchRate: number(rates["pitch"]) ?? 0, standMicros: number(params["stand_time_us"]) ?? 0))
        offset = min(offset, arrival - time)
    }

    /// The motor angles at `t` (our clock): interpolated between reports, extrapolated with the last
    /// rates past the newest; nil before the first report.
    func angles(at t: Double) -> Point? {
        guard let last = points.last else { return nil }
        let time = t - offset
        guard time < last.time else {
            let dt = time - last.time
            return Point(time: time, yaw: last.yaw + last.yawRate * dt, pitch: last.pitch + last.pitchRate * dt,
                         yawRate: last.yawRate, pitchRate: last.pitchRate, standMicros: last.standMicros + dt * 1e6)
        }
        let after = firstIndex(after: time)
        guard after > 0 else { return points[0] }
        let a = points[after - 1], b = points[after]
        let f = b.time > a.time ? (time - a.time) / (b.time - a.time) : 1
        func mix(_ x: Double, _ y: Double) -> Double { x + f * (y - x) }
        return Point(time: time, yaw: mix(a.yaw, b.yaw), pitch: mix(a.pitch, b.pitch), yawRate: mix(a.yawRate, b.yawRate),
                     pitchRate: mix(a.pitchRate, b.pitchRate), standMicros: mix(a.standMicros, b.standMicros))
    }

    /// The index of the first point later than `time` (points are in time order): a binary search.
    private func firstIndex(after time: Double) -> Int {
        var low = 0, high = points.count
        while low < high {
            let mid = (low + high) / 2
            if points[mid].time <= time { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
