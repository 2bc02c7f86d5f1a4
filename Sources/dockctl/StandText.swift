import DockJSON

/// Human-readable lines for stands and notifications.
enum StandText {
    static func line(_ s: JSONValue) -> String {
        let id = s["id"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? "(unknown)"
        var text = "\(id)  \(s["state"]?.text ?? "?")  \(s["endpoint"]?.text ?? "")"
        if let identity = s["identity"]?.object {
            text += "  \(identity["model"]?.text ?? "") fw \(identity["firmware"]?.text ?? "")"
        }
        if let docked = s["docked"]?.bool { text += docked ? "  docked" : "  undocked" }
        if let tracking = s["system_tracking"]?.bool { text += tracking ? "  tracking on" : "  tracking off" }
        if let error = s["last_error"]?.string { text += "  (\(error))" }
        return text
    }

    static func axis(_ a: JSONValue) -> String {
        // A zoom axis is in magnifications (API.md, Axis), the others in radians.
        let unit = a["axis"]?.string == "zoom" ? "×" : " rad"
        let range = (a["continuous"]?.bool ?? false) ? "continuous" : "\(fmt(a["min"])) … \(fmt(a["max"]))\(unit)"
        return "\(a["axis"]?.text ?? "?"): \(range), ≤ \(fmt(a["max_speed"]))\(unit)/s, ≤ \(fmt(a["max_accel"]))\(unit)/s²"
    }

    static func notification(_ m: JSONValue) -> String {
        let method = m["method"]?.string ?? "?"
        let p = m["params"] ?? [:]
        switch method {
        case "motion.state":
            let (pos, vel) = (p["positions"] ?? [:], p["velocities"] ?? [:])
            let angles = ["yaw", "pitch", "roll"].compactMap { axis in
                pos[axis].map { "\(axis) \(fmt($0)) rad (\(fmt(vel[axis])) rad/s)" }
            }
            let zoom = pos["zoom"].map { "zoom \(fmt($0))× (\(fmt(vel["zoom"]))×/s)" }
            return "motion  " + (angles + [zoom].compactMap { $0 }).joined(separator: "  ")
        case "motion.progress":
            return "motion \(p["id"]?.text ?? "?") \(p["state"]?.text ?? "?") \(Int((p["fraction"]?.double ?? 0) * 100)) %"
        case "stand.state", "stand.connected":
            return "stand   " + line(p)
        case "stand.disconnected":
            return "stand   \(p["stand"]?.text ?? "?") disconnected: \(p["reason"]?.text ?? "")"
        case "stand.event":
            return "event   \(p["kind"]?.text ?? "?")" + (p["pressed"]?.bool.map { " pressed=\($0)" } ?? "")
                + (p["id"].map { " id=\($0.text)" } ?? "") + (p["factor"].map { " factor=\(fmt($0))" } ?? "")
        case "battery.state":
            return "battery \(p["name"]?.text ?? "?") \(Int(((p["level"]?.double ?? 0) * 100).rounded())) % \(p["charge"]?.text ?? "")"
                + ((p["low"]?.bool ?? false) ? " LOW" : "")
        case "tracking.changed":
            return "tracking \((p["enabled"]?.bool ?? false) ? "on" : "off") (\(p["source"]?.text ?? "?"))"
        case "tracking.state":
            let subjects = p["subjects"]?.array ?? []
            return "tracking \(subjects.count) subject(s), in frame: \((p["in_frame"]?.bool ?? false) ? "yes" : "no")"
                + (p["phase"]?.string.map { $0 == "tracking" ? "" : ", \($0)" } ?? "")
        case "tracking.phase":
            return "phase   \(p["phase"]?.text ?? "?")"
        case "stand.fault":
            return "fault   \(p["text"]?.text ?? "")"
        default:
            return "\(method) \(p.text)"
        }
    }

    /// The stand a notification is about: `stand`, or `id` in a Stand object.
    static func stand(of message: JSONValue) -> String? {
        let p = message["params"] ?? [:]
        let id = p["stand"]?.string ?? p["id"]?.string
        return id.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `dockctl diag`: a stand's link counters (`stand.get`), the non-zero error counts by kind.
    static func diagnostics(_ s: JSONValue) -> [String] {
        var lines = [line(s)]
        let c = s["counters"] ?? [:]
        func n(_ key: String) -> String { c[key]?.text ?? "?" }
        lines.append("    link: \(n("frames")) frames, \(n("bytes")) bytes, \(n("sequence_gaps")) sequence gaps, \(n("feedback_frames")) feedback frames, \(n("invalid_feedback")) invalid")
        let errors = (c["errors"]?.object ?? [:]).compactMap { key, value in
            value.double.flatMap { $0 > 0 ? "\(key) \(value.text)" : nil }
        }.sorted()
        lines.append("    frame errors: \(errors.isEmpty ? "none" : errors.joined(separator: ", "))")
        let trip = c["round_trip_ms"]?.double.map { "\(fixed($0, 1)) ms" } ?? "not measured"
        lines.append("    round trip: \(trip) (max \(c["round_trip_max_ms"]?.double.map { "\(fixed($0, 1)) ms" } ?? "?"))")
        lines.append("    \(n("reconnects")) reconnects, \(n("handshakes")) handshakes, \(n("nacks")) NACKs, \(n("retries")) retries, \(n("commands_failed")) commands failed, \(n("faults")) faults")
        lines.append("    last error: \(s["last_error"]?.string ?? "none")")
        if let fault = s["last_fault"], fault.object != nil {
            lines.append("    last fault: code \(fault["code"]?.text ?? "?"), severity \(fault["severity"]?.text ?? "?"): \(fault["text"]?.text ?? "")")
        }
        return lines
    }

    static func fmt(_ v: JSONValue?) -> String {
        guard let d = v?.double else { return "?" }
        return fixed(d, 3)
    }
}
