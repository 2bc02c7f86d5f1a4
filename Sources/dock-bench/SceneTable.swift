import DockSim
import Foundation

/// One run per row: the columns of `dock-bench scenario`'s table, for `live`.
enum SceneTable {
    static func header(first: String) -> String {
        "| \(first) | in frame % | in ROI % | RMS err % | P95 err % | settle s | overshoot % | RMS jerk rad/s³ | path ratio | idle jitter mrad/s | reacquire s | switches |\n"
            + "|---|---|---|---|---|---|---|---|---|---|---|---|"
    }

    static func row(_ label: String, _ m: SceneMetrics) -> String {
        String(format: "| %@ | %.1f | %.1f | %.2f | %.2f | %.2f | %.1f | %.0f | %.2f | %.1f | %@ | %d |", label, m.inFrame * 100, m.inRegion * 100,
               m.rmsError * 100, m.p95Error * 100, m.settleTime, m.overshoot * 100, m.rmsJerk, m.pathRatio, m.idleJitter * 1000,
               m.reacquireTime.map { String(format: "%.2f", $0) } ?? "–", m.primarySwitches)
    }

    /// The same figures for a JSON report (fractions and seconds, as SceneMetrics has them).
    static func dictionary(_ m: SceneMetrics) -> [String: Any] {
        ["in_frame": m.inFrame, "in_region": m.inRegion, "rms_error": m.rmsError, "p95_error": m.p95Error, "settle_time": m.settleTime,
         "overshoot": m.overshoot, "rms_jerk": m.rmsJerk, "path_ratio": m.pathRatio, "idle_jitter": m.idleJitter,
         "reacquire_time": m.reacquireTime ?? NSNull(), "primary_switches": m.primarySwitches]
    }
}
