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

    /// The stand a notification is about: `stand`, or `id` in a Stand object.
    static func stand(of message: [String: Any]) -> String? {
        let p = message["params"] as? [String: Any] ?? [:]
        let id = (p["stand"] as? String) ?? (p["id"] as? String)
        return id.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `dockctl diag`: a stand's link counters (`stand.get`), the non-zero error counts by kind.
    static func diagnostics(_ s: [String: Any]) -> [String] {
        var lines = [line(s)]
        let c = s["counters"] as? [String: Any] ?? [:]
        func n(_ key: String) -> String { "\(c[key] ?? "?")" }
        lines.append("    link: \(n("frames")) frames, \(n("bytes")) bytes, \(n("sequence_gaps")) sequence gaps, \(n("feedback_frames")) feedback frames, \(n("invalid_feedback")) invalid")
        let errors = (c["errors"] as? [String: Any] ?? [:]).compactMap { key, value in
            (value as? Int).flatMap { $0 > 0 ? "\(key) \($0)" : nil }
        }.sorted()
        lines.append("    frame errors: \(errors.isEmpty ? "none" : errors.joined(separator: ", "))")
        let trip = (c["round_trip_ms"] as? Double).map { String(format: "%.1f ms", $0) } ?? "not measured"
        lines.append("    round trip: \(trip) (max \((c["round_trip_max_ms"] as? Double).map { String(format: "%.1f ms", $0) } ?? "?"))")
        lines.append("    \(n("reconnects")) reconnects, \(n("handshakes")) handshakes, \(n("nacks")) NACKs, \(n("retries")) retries, \(n("commands_failed")) commands failed, \(n("faults")) faults")
        lines.append("    last error: \(s["last_error"] as? String ?? "none")")
        if let fault = s["last_fault"] as? [String: Any] {
            lines.append("    last fault: code \(fault["code"] ?? "?"), severity \(fault["severity"] ?? "?"): \(fault["text"] ?? "")")
        }
        return lines
    }

    static func fmt(_ v: Any?) -> String {
        guard let d = v as? Double else { return "?" }
        return String(format: "%.3f", d)
    }
}
