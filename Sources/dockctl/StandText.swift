import Foundation

/// Human-readable lines for stands and notifications.
enum StandText {
    static func line(_ s: [String: Any]) -> String {
        let id = (s["id"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? "(unknown)"
        let identity = s["identity"] as? [String: Any]
        var text = "\(id)  \(s["state"] ?? "?")  \(s["endpoint"] ?? "")"
        if let identity { text += "  \(identity["model"] ?? "") fw \(identity["firmware"] ?? "")" }
        if let docked = s["docked"] as? Bool { text += docked ? "  docked" : "  undocked" }
        if let tracking = s["system_tracking"] as? Bool { text += tracking ? "  tracking on" : "  tracking off" }
        if let error = s["last_error"] as? String { text += "  (\(error))" }
        return text
    }

    static func axis(_ a: [String: Any]) -> String {
        let range = (a["continuous"] as? Bool ?? false) ? "continuous" : "\(fmt(a["min"])) … \(fmt(a["max"])) rad"
        return "\(a["axis"] ?? "?"): \(range), ≤ \(fmt(a["max_speed"])) rad/s, ≤ \(fmt(a["max_accel"])) rad/s²"
    }

    static func notification(_ m: [String: Any]) -> String {
        let method = m["method"] as? String ?? "?"
        let p = m["params"] as? [String: Any] ?? [:]
        switch method {
        case "motion.state":
            let pos = p["positions"] as? [String: Any] ?? [:], vel = p["velocities"] as? [String: Any] ?? [:]
            return "motion  " + ["yaw", "pitch", "roll"].compactMap { axis in
                pos[axis].map { "\(axis) \(fmt($0)) rad (\(fmt(vel[axis])) rad/s)" }
            }.joined(separator: "  ")
        case "motion.progress":
            return "motion \(p["id"] ?? "?") \(p["state"] ?? "?") \(Int(((p["fraction"] as? Double) ?? 0) * 100)) %"
        case "stand.state", "stand.connected":
            return "stand   " + line(p)
        case "stand.disconnected":
            return "stand   \(p["stand"] ?? "?") disconnected: \(p["reason"] ?? "")"
        case "stand.event":
            return "event   \(p["kind"] ?? "?")" + ((p["pressed"] as? Bool).map { " pressed=\($0)" } ?? "")
                + (p["id"].map { " id=\($0)" } ?? "") + (p["factor"].map { " factor=\(fmt($0))" } ?? "")
        case "battery.state":
            return "battery \(p["name"] ?? "?") \(Int((((p["level"] as? Double) ?? 0) * 100).rounded())) % \(p["charge"] ?? "")" + ((p["low"] as? Bool ?? false) ? " LOW" : "")
        case "tracking.changed":
            return "tracking \((p["enabled"] as? Bool ?? false) ? "on" : "off") (\(p["source"] ?? "?"))"
        case "tracking.state":
            let subjects = p["subjects"] as? [[String: Any]] ?? []
            return "tracking \(subjects.count) subject(s), in frame: \((p["in_frame"] as? Bool ?? false) ? "yes" : "no")"
        case "stand.fault":
            return "fault   \(p["text"] ?? "")"
        default:
            return "\(method) \(p)"
        }
    }

    static func fmt(_ v: Any?) -> String {
        guard let d = v as? Double else { return "?" }
        return String(format: "%.3f", d)
    }
}
