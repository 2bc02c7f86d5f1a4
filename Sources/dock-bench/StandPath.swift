#if canImport(Glibc)
import Glibc
#endif
import DockJSON

/// Seconds of CLOCK_MONOTONIC: the clock of tracking.observe's `timestamp`.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
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
    mutating func record(_ params: JSONValue, arrival: Double) {
        guard let time = params["time"]?.double, let positions = params["positions"],
              let yaw = positions["yaw"]?.double, let pitch = positions["pitch"]?.double else { return }
        let rates = params["velocities"] ?? [:]
        points.append(Point(time: time, yaw: yaw, pitch: pitch, yawRate: rates["yaw"]?.double ?? 0,
                            pitchRate: rates["pitch"]?.double ?? 0, standMicros: params["stand_time_us"]?.double ?? 0))
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
