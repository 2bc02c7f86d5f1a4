import DockCore
import DockDrivers
import DockJSON
import DockProtocol
import DockTracking
import StandEngine

/// The engine's reports as the API's JSON (protocol/API.md, protocol/dockd.openrpc.json).
extension StandNotification {
    /// The subscription topic that carries it.
    var topic: EventHub.Topic {
        switch self {
        case .connected, .disconnected: .stands
        case .motionState, .motionProgress: .motion
        case .trackingState: .tracking
        case .trackingChanged, .event, .leaseChanged, .stopChanged, .phaseChanged: .events
        case .battery: .battery
        case .fault: .logs
        }
    }

    /// The notification's method.
    var method: String {
        switch self {
        case .connected: "stand.connected"
        case .disconnected: "stand.disconnected"
        case .motionState: "motion.state"
        case .motionProgress: "motion.progress"
        case .trackingState: "tracking.state"
        case .trackingChanged: "tracking.changed"
        case .event: "stand.event"
        case .leaseChanged: "lease.changed"
        case .stopChanged: "motion.hold"
        case .phaseChanged: "tracking.phase"
        case .battery: "battery.state"
        case .fault: "stand.fault"
        }
    }

    /// The params of the notification about stand `stand`, reached at `endpoint`.
    func params(stand: String, endpoint: String) -> JSONValue {
        let id = JSONValue(stand)
        switch self {
        case .connected(let description):
            return description.json(endpoint: endpoint)
        case .disconnected(let reason):
            return ["stand": id, "reason": JSONValue(reason)]
        case .motionState(let report):
            return report.json(stand: stand)
        case .motionProgress(let progress):
            return ["stand": id, "id": JSONValue(progress.id.rawValue), "fraction": JSONValue(progress.fraction),
                    "state": JSONValue(progress.state.name), "reason": progress.state.reason.map { JSONValue.string($0) } ?? .null]
        case .trackingState(let report):
            return report.json(stand: stand)
        case .trackingChanged(let enabled, let source):
            return ["stand": id, "enabled": JSONValue(enabled), "source": JSONValue(source)]
        case .event(let event):
            var params: [String: JSONValue] = ["stand": id]
            switch event.kind {
            case .docked(let docked): params["kind"] = docked ? "docked" : "undocked"
            case .trackingButton(let pressed): params["kind"] = "tracking_button"; params["pressed"] = JSONValue(pressed)
            case .shutter(let pressed): params["kind"] = "shutter"; params["pressed"] = JSONValue(pressed)
            case .flip(let pressed): params["kind"] = "flip"; params["pressed"] = JSONValue(pressed)
            case .zoom(let factor): params["kind"] = "zoom"; params["factor"] = JSONValue(shortest: factor)
            case .button(let number, let pressed): params["kind"] = "button"; params["id"] = JSONValue(number); params["pressed"] = JSONValue(pressed)
            }
            return .object(params)
        case .leaseChanged(let client, let takenFrom):
            return ["stand": id, "client": JSONValue(client), "taken_from": JSONValue(takenFrom)]
        case .stopChanged(let stopped, let by):
            return ["stand": id, "stopped": JSONValue(stopped), "client": by.map { JSONValue($0.id) } ?? .null,
                    "pid": by?.pid.map { JSONValue($0) } ?? .null]
        case .phaseChanged(let phase):
            return ["stand": id, "phase": JSONValue(phase.rawValue)]
        case .battery(let report):
            return report.json(stand: stand)
        case .fault(let fault):
            return ["stand": id, "source": JSONValue(fault.source.rawValue), "code": JSONValue(fault.code),
                    "severity": JSONValue(fault.severity), "text": JSONValue(fault.text)]
        }
    }
}

extension StandDescription {
    /// The `stands.list` entry of the stand reached at `endpoint`.
    func json(endpoint: String) -> JSONValue {
        var result: [String: JSONValue] = [
            "id": JSONValue(id), "state": JSONValue(state.rawValue), "endpoint": JSONValue(endpoint),
            "system_tracking": JSONValue(systemTracking), "driver": JSONValue(driver),
            "docked": docked.map { JSONValue.bool($0) } ?? .null,
            "last_error": lastError.map { JSONValue.string($0) } ?? .null,
        ]
        if let id = identity {
            result["identity"] = ["serial": JSONValue(id.serial), "model": JSONValue(id.model), "firmware": JSONValue(id.firmware),
                                  "hardware": JSONValue(id.hardware), "protocol": JSONValue(id.protocolVersion)]
        }
        if let caps = capabilities { result["capabilities"] = caps.json }
        return .object(result)
    }
}

extension Capabilities {
    var json: JSONValue {
        var buttons: [JSONValue] = []
        let names: [(Buttons, String)] = [(.tracking, "tracking"), (.shutter, "shutter"), (.flip, "flip"), (.zoom, "zoom"), (.custom, "custom")]
        for (bit, name) in names where self.buttons.contains(bit) { buttons.append(JSONValue(name)) }
        return [
            "feedback_hz": JSONValue(feedbackHz), "imu_hz": JSONValue(imuHz),
            "imu": JSONValue(features.contains(.imu)), "led": JSONValue(features.contains(.led)),
            "led_color": JSONValue(features.contains(.ledColor)), "docked_sensor": JSONValue(features.contains(.dockedSensor)),
            "buttons": .array(buttons), "custom_buttons": JSONValue(customButtons),
            "batteries": .array(batteries.map { JSONValue.string($0) }),
            "axes": .array(axes.map { a in
                ["axis": JSONValue(a.axis.description), "continuous": JSONValue(a.continuous),
                 "min": a.continuous ? .null : JSONValue(a.min), "max": a.continuous ? .null : JSONValue(a.max),
                 "max_speed": JSONValue(a.maxSpeed), "max_accel": JSONValue(a.maxAccel), "counts_per_rev": JSONValue(a.countsPerRev)]
            }),
        ]
    }
}

extension MotionReport {
    func json(stand: String) -> JSONValue {
        var positions: [String: JSONValue] = [:], velocities: [String: JSONValue] = [:]
        for p in self.positions { positions[p.axis.description] = JSONValue(shortest: p.value) }
        for v in self.velocities { velocities[v.axis.description] = JSONValue(shortest: v.value) }
        return ["stand": JSONValue(stand), "time": JSONValue(time), "measured_at": JSONValue(measuredAt),
                "stand_time_us": JSONValue(standTimeUs), "positions": .object(positions), "velocities": .object(velocities)]
    }
}

extension TrackingReport {
    func json(stand: String) -> JSONValue {
        var result: [String: JSONValue] = ["stand": JSONValue(stand), "time": JSONValue(time), "in_frame": JSONValue(inFrame),
                                           "subjects": .array(subjects.map(\.json)), "phase": JSONValue(phase.rawValue)]
        if let captureTime { result["capture_time"] = JSONValue(captureTime) }
        return .object(result)
    }
}

extension SubjectReport {
    var json: JSONValue {
        ["id": JSONValue(id), "kind": isPerson ? "person" : "object",
         "rect": rect.json, "face_rect": faceRect?.json ?? .null,
         "saliency_rank": JSONValue(saliencyRank),
         "speaking_confidence": speakingConfidence.map { JSONValue($0) } ?? .null,
         "looking_at_camera_confidence": lookingAtCameraConfidence.map { JSONValue($0) } ?? .null,
         "facing": facing.map { JSONValue($0) } ?? .null,
         "selected": JSONValue(selected), "last_seen": JSONValue(lastSeen)]
    }
}

extension NormalizedRect {
    var json: JSONValue { ["x": JSONValue(x), "y": JSONValue(y), "width": JSONValue(width), "height": JSONValue(height)] }
}

extension BatteryReport {
    func json(stand: String) -> JSONValue {
        ["stand": JSONValue(stand), "name": JSONValue(name), "level": JSONValue(shortest: level),
         "charge": JSONValue(charge.description), "low": JSONValue(low)]
    }
}

extension DriverCounters {
    func json(engine: EngineCounters) -> JSONValue {
        let d = decoder
        return ["frames": JSONValue(d.frames), "bytes": JSONValue(d.bytes), "sequence_gaps": JSONValue(d.sequenceGaps),
                "errors": .object(Dictionary(uniqueKeysWithValues: FrameError.allCases.map { ($0.rawValue, JSONValue(d.errors[$0] ?? 0)) })),
                "reconnects": JSONValue(max(0, engine.linksOpened - 1)), "handshakes": JSONValue(engine.handshakes),
                "nacks": JSONValue(refused), "faults": JSONValue(engine.faults), "feedback_frames": JSONValue(engine.feedbackFrames),
                "retries": JSONValue(retries), "commands_failed": JSONValue(commandsFailed),
                "invalid_feedback": JSONValue(engine.implausibleReports),
                "round_trip_ms": roundTrip.smoothed.map { JSONValue(($0 * 1e4).rounded() / 10) } ?? .null,
                "round_trip_max_ms": JSONValue((roundTrip.largest * 1e4).rounded() / 10),
                "speed_scale": .object(Dictionary(uniqueKeysWithValues: speedScale.map { ("\($0.key)", JSONValue(($0.value * 1000).rounded() / 1000)) }))]
    }
}

extension MotionProgress.State {
    var name: String {
        switch self {
        case .running: "running"
        case .completed: "completed"
        case .preempted: "preempted"
        case .cancelled: "cancelled"
        case .failed: "failed"
        }
    }

    var reason: String? {
        if case .failed(let reason) = self { return reason }
        return nil
    }
}

extension JSONValue {
    /// A value that went through a float32 on the wire, as the shortest decimal that float prints
    /// as (0.9, not 0.8999999761581421).
    init(shortest value: Double) {
        let single = Float(value)
        self = single.isFinite && Double(single) == value ? .float(single) : .number(value)
    }
}

extension LostSubjectPolicy {
    /// As `stand.get`'s `control.lost_policy`: what `tracking.lost_policy` was given.
    var json: JSONValue {
        ["policy": JSONValue(kind.rawValue), "after": JSONValue(shortest: after), "preset": preset.map { JSONValue($0.name) } ?? .null,
         "search_seconds": JSONValue(shortest: searchSeconds)]
    }
}

extension Pan {
    /// As `stand.get`'s `control.pan`: the sweep or tour running, and the tour's stop now (its index).
    func json(stop: Int?) -> JSONValue {
        switch self {
        case .sweep(let s):
            ["kind": "sweep", "from": JSONValue(shortest: s.from), "to": JSONValue(shortest: s.to), "rate": JSONValue(shortest: s.rate),
             "repeat": JSONValue(s.repeats)]
        case .tour(let t):
            ["kind": "tour", "stops": .array(t.stops.map { ["preset": JSONValue($0.pose.name), "dwell": JSONValue(shortest: $0.dwell)] }),
             "repeat": JSONValue(t.repeats), "stop": stop.map { JSONValue($0) } ?? .null]
        }
    }
}
