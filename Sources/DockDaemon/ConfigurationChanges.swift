/// What differs between two loads of dockd.conf, for SIGHUP: each changed setting by its name in
/// the file, and whether the running daemon can take it as it is or it needs a restart.
extension Configuration {
    struct Change: Sendable, Equatable, CustomStringConvertible {
        /// As dockd.conf writes it: `daemon.log_level`, `camera.horizontal_fov_deg`, `device udp:…`.
        let key: String
        let before: String
        let after: String
        /// The API socket is bound once, at start (under systemd dockd.socket owns it), the
        /// heartbeat timeout is agreed in each stand's handshake, and the hotplug monitor's serial
        /// pattern is set when it starts: these wait for a restart.
        let needsRestart: Bool

        var description: String { "\(key): \(before) → \(after)" + (needsRestart ? " (needs a restart)" : "") }
    }

    /// Every setting that `new` changes, in the file's order; devices by their endpoint (a device
    /// whose driver or options change is one change: it is attached again).
    func changes(to new: Configuration) -> [Change] {
        var changes: [Change] = []
        func compare<V: Equatable>(_ key: String, _ a: V, _ b: V, restart: Bool = false, show: (V) -> String = { "\($0)" }) {
            if a != b { changes.append(Change(key: key, before: show(a), after: show(b), needsRestart: restart)) }
        }
        compare("daemon.socket", socketPath, new.socketPath, restart: true)
        compare("daemon.socket_group", socketGroup, new.socketGroup, restart: true) { $0 ?? "(none)" }
        compare("daemon.socket_mode", socketMode, new.socketMode, restart: true) { "0" + String($0, radix: 8) }
        compare("daemon.log_level", logLevel, new.logLevel)
        compare("daemon.heartbeat_timeout_ms", heartbeatTimeoutMs, new.heartbeatTimeoutMs, restart: true)
        compare("daemon.state_directory", stateDirectory, new.stateDirectory, restart: true)

        let old = Dictionary(devices.map { ($0.endpoint.description, $0) }, uniquingKeysWith: { first, _ in first })
        let fresh = Dictionary(new.devices.map { ($0.endpoint.description, $0) }, uniquingKeysWith: { first, _ in first })
        func show(_ d: Device?) -> String {
            guard let d else { return "(none)" }
            let options = d.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return ([d.driver] + options).joined(separator: " ")
        }
        for device in devices where fresh[device.endpoint.description] != device {
            compare("device \(device.endpoint)", Optional(device), fresh[device.endpoint.description], show: show)
        }
        for device in new.devices where old[device.endpoint.description] == nil {
            compare("device \(device.endpoint)", nil, Optional(device), show: show)
        }

        compare("hotplug.enabled", hotplug.enabled, new.hotplug.enabled)
        compare("hotplug.serial_pattern", hotplug.serialPattern, new.hotplug.serialPattern, restart: true) { $0 ?? "(none)" }
        compare("hotplug.baud", hotplug.baud, new.hotplug.baud)
        compare("camera.horizontal_fov_deg", camera.horizontalFOVDegrees, new.camera.horizontalFOVDegrees)
        compare("camera.vertical_fov_deg", camera.verticalFOVDegrees, new.camera.verticalFOVDegrees)
        compare("tracking.lost_behaviour", tracking.lostBehaviour, new.tracking.lostBehaviour) { $0.rawValue }
        compare("tracking.lost_hold_s", tracking.lostHold, new.tracking.lostHold)
        // Each stand's engine takes its button's sweep when it is made.
        compare("sweep", buttonSweep, new.buttonSweep, restart: true) { s in
            s.map { "button \($0.button): \($0.fromDegrees)° → \($0.toDegrees)° at \($0.rateDegrees)°/s\($0.repeats ? ", repeating" : "")" } ?? "(none)"
        }
        return changes
    }
}
