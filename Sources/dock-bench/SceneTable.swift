#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DockJSON
import DockSim

/// One run per row: the columns of `dock-bench scenario`'s table, for `live`.
enum SceneTable {
    static func header(first: String) -> String {
        "| \(first) | in frame % | in ROI % | RMS err % | P95 err % | settle s | overshoot % | RMS jerk rad/s³ | path ratio | idle jitter mrad/s | reacquire s | switches |\n"
            + "|---|---|---|---|---|---|---|---|---|---|---|---|"
    }

    static func row(_ label: String, _ m: SceneMetrics) -> String {
        String(cFormat: "| %@ | %.1f | %.1f | %.2f | %.2f | %.2f | %.1f | %.0f | %.2f | %.1f | %@ | %d |", label, m.inFrame * 100, m.inRegion * 100,
               m.rmsError * 100, m.p95Error * 100, m.settleTime, m.overshoot * 100, m.rmsJerk, m.pathRatio, m.idleJitter * 1000,
               m.reacquireTime.map { String(cFormat: "%.2f", $0) } ?? "–", m.primarySwitches)
    }

    /// The same figures for a JSON report (fractions and seconds, as SceneMetrics has them).
    static func json(_ m: SceneMetrics) -> JSONValue {
        ["in_frame": JSONValue(m.inFrame), "in_region": JSONValue(m.inRegion), "rms_error": JSONValue(m.rmsError),
         "p95_error": JSONValue(m.p95Error), "settle_time": JSONValue(m.settleTime), "overshoot": JSONValue(m.overshoot),
         "rms_jerk": JSONValue(m.rmsJerk), "path_ratio": JSONValue(m.pathRatio), "idle_jitter": JSONValue(m.idleJitter),
         "reacquire_time": m.reacquireTime.map { JSONValue($0) } ?? .null, "primary_switches": JSONValue(Double(m.primarySwitches))]
    }
}
