#if canImport(Glibc)
import Glibc
#endif
import DockCore
import DockDrivers
import DockJSON
import DockProtocol
import StandEngine

/// dock-driver-probe's run, pure: one driver fed the link's bytes and the timer's ticks, and the
/// script (`--velocity`, `--target`, `--position`, `--orient`, `--calibrate`) steering it from its
/// reports. Each step returns the writes (one per driver call) and the report lines to print; the
/// link host (`LinkSessionHost`) moves the bytes and the time. It asks to close the link when it is
/// done: `status` then says how it went.
struct ProbeSession: LinkSession {
    struct Output: LinkSessionOutput {
        var writes: [[UInt8]] = []
        /// Report lines, in order: each printed as one line of JSON.
        var lines: [[String: JSONValue]] = []
        var closeLink: String?
    }

    /// The driver is ticked this often (s): its polls, resends and heartbeats are judged then.
    static let tickInterval = 0.01

    private var driver: any StandDriver
    let script: Script
    let trace: Bool
    let calibrationRun: CalibrationRun?
    /// How long the run lasts once the link is open (s, `--seconds`): a slow connect (RFCOMM's SDP, a
    /// TCP handshake) takes none of it.
    let deadline: Double
    /// When the link opened (host seconds): the session's own times, and so its reports', count from it.
    private var openedAt: Double?
    /// Motion was commanded since the last STOP: the run stops the stand before it ends.
    private var moving = false
    /// When the run's closing STOP went (run seconds).
    private var closingStopAt: Double?
    private var calibration: Calibration?
    private var readyAt: Double?
    private var capabilities: Capabilities?
    private var stopped = false
    private var positionSent = false
    private var fatal = false
    private var feedbackCount = 0
    private var firstFeedback: Double?
    private var lastFeedback: Feedback?
    private var reportCounts: [String: Int] = [:]
    private var bytesOut = 0, bytesIn = 0
    private var orientRun: OrientRun?
    private var lastTick: Double?
    /// How the run ended, once it has: 0 done, 2 the driver failed (or the link closed), 3 the
    /// calibration failed.
    private(set) var status: Int32?
    /// Why the link closed before the run was done.
    private(set) var linkLost: String?
    /// Lines of the step being handled.
    private var lines: [[String: JSONValue]] = []

    init(driver: any StandDriver, script: Script, trace: Bool, calibration: CalibrationRun? = nil, deadline: Double) {
        self.driver = driver; self.script = script; self.trace = trace; self.calibrationRun = calibration; self.deadline = deadline
    }

    var nextTick: Double? {
        guard status == nil, let last = lastTick, let openedAt else { return nil }
        return openedAt + last + Self.tickInterval
    }

    mutating func handle(link event: LinkEvent, at hostTime: Double) -> Output {
        if case .opened = event { openedAt = hostTime }
        let t = hostTime - (openedAt ?? hostTime)
        var output = Output()
        switch event {
        case .opened:
            lastTick = t
            output.writes = start(at: t)
        case .received(let bytes):
            output.writes = receive(bytes, at: t)
        case .tick:
            lastTick = t
            output.writes = tick(at: t)
            if fatal {
                status = 2
            } else if let done = calibrationStatus(at: t) {
                status = done
            } else if t >= deadline {
                output.writes += stopBeforeEnding(at: t)
                if let sent = closingStopAt, !driver.stopConfirmed && t - sent <= 1 { return finish(output) }
                status = 0
            }
            if status != nil { output.closeLink = "the probe is done" }
        case .closed(let reason):
            if status == nil {
                linkLost = reason
                status = 2
            }
        }
        return finish(output)
    }

    private mutating func finish(_ output: Output) -> Output {
        var output = output
        output.lines = lines
        lines.removeAll()
        return output
    }

    /// At `--seconds`, a stand still moving at the script's command (`--velocity-seconds` longer than
    /// the run, `--target`, `--orient`, a POSITION on its way) is sent STOP once; the run then ends
    /// when the stand confirms it, or a second later.
    private mutating func stopBeforeEnding(at t: Double) -> [[UInt8]] {
        guard moving, closingStopAt == nil else { return [] }
        closingStopAt = t
        return note(sent: [send(.stop, at: t)], at: t)
    }

    /// Every command of the script goes through here: what it sent says whether the stand moves.
    private mutating func send(_ message: Message, at t: Double) -> [UInt8] {
        switch message {
        case .stop: moving = false
        case .velocity, .position: moving = true
        default: break
        }
        return driver.send(message, at: t)
    }

    /// nil while calibrating (or not calibrating); once done and the camera has confirmed the last
    /// Stop (or a second later), 0, or 3 when it failed.
    private mutating func calibrationStatus(at t: Double) -> Int32? {
        guard let c = calibration, c.finished else { return nil }
        if calibrationEndedAt == nil { calibrationEndedAt = t }
        guard driver.stopConfirmed || t - calibrationEndedAt! > 1 else { return nil }
        return c.failure == nil ? 0 : 3
    }

    private var calibrationEndedAt: Double?

    /// Each returns one write per driver call (see `Writes`).
    private mutating func start(at t: Double) -> [[UInt8]] {
        var out = Writes()
        out += driver.start(at: t)
        return note(sent: out, at: t)
    }

    private mutating func receive(_ bytes: [UInt8], at t: Double) -> [[UInt8]] {
        bytesIn += bytes.count
        if trace { emit(["t": JSONValue(t), "report": "received", "hex": JSONValue(hex(bytes))]) }
        var out = Writes()
        for report in driver.receive(bytes, at: t) { out += handle(report, at: t) }
        return note(sent: out, at: t)
    }

    private mutating func tick(at t: Double) -> [[UInt8]] {
        let output = driver.tick(at: t)
        var out = Writes()
        out += output.bytes
        for report in output.reports { out += handle(report, at: t) }
        out += scripted(at: t, onFeedback: false)
        return note(sent: out, at: t)
    }

    private mutating func note(sent out: Writes, at t: Double) -> [[UInt8]] {
        for bytes in out.list {
            bytesOut += bytes.count
            if trace { emit(["t": JSONValue(t), "report": "sent", "hex": JSONValue(hex(bytes))]) }
        }
        return out.list
    }

    private mutating func handle(_ report: DriverReport, at t: Double) -> Writes {
        switch report {
        case .ready(let identity, let caps):
            readyAt = t
            capabilities = caps
            // The controller as dockd's engine builds it: its settings, and the stand's own position
            // loop where the driver has one (VISCA's AbsolutePosition, a gimbal's attitude).
            if script.orient != nil {
                orientRun = OrientRun(controller: MotionController(capabilities: caps, configuration: EngineSettings().motion,
                                                                   standClosesPositionLoop: driver.closesPositionLoop,
                                                                   positionIsPolled: driver.positionIsPolled, fineApproach: driver.wantsFineApproach))
            }
            count("ready")
            emit(["t": JSONValue(t), "report": "ready", "model": JSONValue(identity.model), "serial": JSONValue(identity.serial),
                  "firmware": JSONValue(identity.firmware), "protocol": JSONValue(identity.protocolVersion), "feedback_hz": JSONValue(Int(caps.feedbackHz)),
                  "axes": .array(caps.axes.map { ["axis": JSONValue($0.axis.description), "min": json($0.min), "max": json($0.max),
                                                  "max_speed": json($0.maxSpeed), "continuous": JSONValue($0.continuous)] })])
            return scripted(at: t, onFeedback: false)
        case .feedback(let f):
            feedbackCount += 1
            if firstFeedback == nil { firstFeedback = t }
            lastFeedback = f
            count("feedback")
            var line: [String: JSONValue] = ["t": JSONValue(t), "report": "feedback"]
            for a in f.axes {
                line[a.axis.description] = json(a.position)
                line[a.axis.description + "_velocity"] = json(a.velocity)
            }
            emit(line)
            // The daemon ticks its controller on every FEEDBACK; so does the probe.
            return scripted(at: t, onFeedback: true)
        case .refused(let command, let reason):
            count("refused")
            emit(["t": JSONValue(t), "report": "refused", "command": JSONValue(command), "reason": JSONValue(reason)])
        case .garbage(let e):
            count("garbage")
            emit(["t": JSONValue(t), "report": "garbage", "error": JSONValue(e.rawValue)])
        case .rejected(let text):
            count("rejected")
            emit(["t": JSONValue(t), "report": "rejected", "reason": JSONValue(text)])
        case .fatal(let text), .incompatible(let text), .reconnect(let text):
            count("fatal")
            fatal = true
            emit(["t": JSONValue(t), "report": "fatal", "reason": JSONValue(text)])
        case .fault(let f):
            count("fault")
            emit(["t": JSONValue(t), "report": "fault", "code": JSONValue(f.code), "text": JSONValue(f.text)])
        case .imu, .event, .battery, .cameraPreset:
            count("other")
        }
        return []
    }

    /// The scripted commands: POSITION once, VELOCITY for a while then STOP, or a P loop to a target.
    private mutating func scripted(at t: Double, onFeedback: Bool) -> Writes {
        guard let ready = readyAt, !fatal else { return [] }
        if calibrationRun != nil { return onFeedback ? calibrationStep(at: t) : [] }
        var out = Writes()
        if let p = script.position, !positionSent {
            positionSent = true
            out += send(.position(duration: Float(script.duration),
                                         targets: p.sorted { $0.key < $1.key }.map { PositionTarget(axis: $0.key, position: Float($0.value)) }), at: t)
        }
        guard onFeedback else { return out }
        if let goal = script.orient, var run = orientRun, let f = lastFeedback {
            defer { orientRun = run }
            out += orientStep(&run, goal: goal, feedback: f, at: t)
            return out
        }
        if let target = script.target, let f = lastFeedback {
            let values: [AxisValue] = target.sorted { $0.key < $1.key }.compactMap { axis, goal in
                guard let a = f.axis(axis) else { return nil }
                let limit = Double(capabilities?.axis(axis)?.maxSpeed ?? 1)
                return AxisValue(axis, Float(max(-limit, min(limit, script.gain * (goal - Double(a.position))))))
            }
            out += send(.velocity(values), at: t)
        } else if !script.velocity.isEmpty {
            if t - ready < script.velocitySeconds {
                out += send(.velocity(script.velocity.sorted { $0.key < $1.key }.map { AxisValue($0.key, Float($0.value)) }), at: t)
            } else if !stopped {
                stopped = true
                out += send(.stop, at: t)
            }
        }
        return out
    }

    /// The daemon's loop: FEEDBACK → controller.feedback → controller.tick → commands to the driver.
    private mutating func orientStep(_ run: inout OrientRun, goal: [Axis: Double], feedback f: Feedback, at t: Double) -> Writes {
        run.controller.feedback(f, at: t)
        if run.id == nil {
            do {
                run.id = try run.controller.setOrientation(goal, relative: false, duration: script.orientDuration, at: t)
                run.startedAt = t
                for a in f.axes { run.start[a.axis] = Double(a.position) }
            } catch {
                emit(["t": JSONValue(t), "report": "motion", "state": "refused", "reason": JSONValue("\(error)")])
                run.state = "refused: \(error)"
                run.id = MotionID(rawValue: 0)
                run.endedAt = t
                return []
            }
        }
        // Error relative to the goal, beyond it in the direction of travel = overshoot.
        var worst = 0.0
        for (axis, g) in goal {
            guard let p = f.axis(axis).map({ Double($0.position) }), let s = run.start[axis] else { continue }
            let dir: Double = g >= s ? 1 : -1
            run.maxOvershoot = max(run.maxOvershoot, dir * (p - g))
            worst = max(worst, abs(p - g))
        }
        if worst <= 0.01 { if run.settledAt == nil { run.settledAt = t } } else { run.settledAt = nil }
        let output = run.controller.tick(at: t)
        for p in output.progress where p.state.isFinal && run.endedAt == nil {
            run.endedAt = t
            if case .failed(let why) = p.state { run.state = "failed: \(why)" } else { run.state = "\(p.state)" }
            emit(["t": JSONValue(t), "report": "motion", "state": JSONValue(run.state), "duration": JSONValue(t - run.startedAt)])
        }
        var bytes = Writes()
        for m in output.messages {
            run.commands += 1
            bytes += send(m, at: t)
        }
        return bytes
    }

    /// One step of --calibrate on a position sample: the identity profile's feedback is raw units
    /// (yaw = −pan units in "degrees", pitch = tilt units), its velocities raw speed bytes.
    private mutating func calibrationStep(at t: Double) -> Writes {
        guard let run = calibrationRun, let f = lastFeedback else { return [] }
        if calibration == nil { calibration = Calibration(axes: run.axes, maxWindow: run.window, startAt: t) }
        let deg = 180 / Double.pi
        let units = [-Double(f.axis(.yaw)?.position ?? 0) * deg, Double(f.axis(.pitch)?.position ?? 0) * deg]
        // The session's driver is the run's VISCADriver (see DockDriverProbe.calibrationRun).
        let command = calibration!.step(units: units, at: t, driveTakenAt: (driver as? VISCADriver)?.driveTakenAt)
        for event in calibration!.events.dropFirst(reportedEvents) { emitCalibration(event, at: t) }
        reportedEvents = calibration!.events.count
        if calibration!.finished, let why = calibration!.failure {
            emit(["t": JSONValue(t), "report": "calibration", "state": "failed", "reason": JSONValue(why)])
        }
        switch command {
        case .drive(let axis, let positive, let byte)?:
            let rate = Float((positive ? 1 : -1) * Double(byte) / deg)
            return [driver.send(.velocity([AxisValue(.yaw, axis == 0 ? rate : 0), AxisValue(.pitch, axis == 1 ? rate : 0)]), at: t)]
        case .stop?:
            return [driver.send(.stop, at: t)]
        case nil:
            return []
        }
    }

    private var reportedEvents = 0

    private mutating func emitCalibration(_ event: Calibration.Event, at t: Double) {
        let names = ["pan", "tilt"]
        switch event {
        case .sign(let axis, let sign):
            emit(["t": JSONValue(t), "report": "calibration", "axis": JSONValue(names[axis]), "sign": JSONValue(sign)])
        case .end(let axis, let positive, let units):
            emit(["t": JSONValue(t), "report": "calibration", "axis": JSONValue(names[axis]),
                  "end": JSONValue(positive ? (axis == 0 ? "left" : "up") : (axis == 0 ? "right" : "down")), "units": JSONValue(units)])
        case .speed(let axis, let byte, let speed, let seconds):
            emit(["t": JSONValue(t), "report": "calibration", "axis": JSONValue(names[axis]), "byte": JSONValue(byte),
                  "deg_per_s": JSONValue(speed), "timed_s": JSONValue(seconds)])
        }
    }

    /// The measured profile (nil unless the calibration finished without failing); `date` says when
    /// it was measured.
    func calibratedProfile(measuredOn date: String) -> VISCAProfile? {
        guard let run = calibrationRun, let c = calibration, c.finished, c.failure == nil else { return nil }
        let how = "dock-driver-probe --calibrate on \(date) at \(run.endpoint): each speed byte driven for up to \(run.window) s after a \(c.settleTime) s ramp, the slope of the polled position"
        var profile = c.profile(base: run.base, name: run.name, how: how)
        profile.source = "Measured with \(how). Spans between the end stops given: pan \(run.axes[0].spanDegrees)°, tilt \(run.axes[1].spanDegrees)°. Not measured (from \(run.base.name)): \(["maxAccelDegrees", "absoluteSpeed", "limitSet"].joined(separator: ", "))."
        return profile
    }

    /// Why the --orient move did not reach its target (exit status 3: failed or ended off target;
    /// 4: still running when --seconds ran out), or nil when it did or there was none.
    func orientMiss() -> (code: Int32, message: String)? {
        guard let goal = script.orient else { return nil }
        guard let run = orientRun else { return (3, "the stand never became ready to move") }
        let tolerance = run.controller.configuration.positionTolerance
        let misses = goal.sorted { $0.key < $1.key }.compactMap { axis, g -> String? in
            guard let p = lastFeedback?.axis(axis).map({ Double($0.position) }) else { return "\(axis): no feedback" }
            return abs(p - g) > tolerance ? "\(axis) ended at \(fixed(p, 3)) rad, \(fixed(abs(p - g), 3)) rad from \(g)" : nil
        }
        if run.endedAt == nil {
            return (4, "the move had not ended after --seconds" + (misses.isEmpty ? "" : ": " + misses.joined(separator: "; ")))
        }
        if run.state != "completed" { return (3, "the move \(run.state)" + (misses.isEmpty ? "" : "; " + misses.joined(separator: "; "))) }
        if !misses.isEmpty { return (3, "target not reached: " + misses.joined(separator: "; ")) }
        return nil
    }

    /// The closing line; `hostTime` is the host clock's, like the steps'.
    func summary(at hostTime: Double) -> [String: JSONValue] {
        let t = hostTime - (openedAt ?? hostTime)
        var line: [String: JSONValue] = ["t": JSONValue(t), "report": "summary", "feedback": JSONValue(feedbackCount), "bytes_out": JSONValue(bytesOut),
                                         "bytes_in": JSONValue(bytesIn), "counts": .object(reportCounts.mapValues { JSONValue($0) })]
        if let first = firstFeedback, feedbackCount > 1, t > first { line["feedback_hz"] = JSONValue(Double(feedbackCount - 1) / (t - first)) }
        if let f = lastFeedback { for a in f.axes { line["final_" + a.axis.description] = json(a.position) } }
        if let r = readyAt { line["ready_s"] = JSONValue(r) }
        if let run = orientRun {
            var o: [String: JSONValue] = ["state": JSONValue(run.state), "overshoot_rad": JSONValue(run.maxOvershoot), "commands": JSONValue(run.commands)]
            if let e = run.endedAt { o["completed_s"] = JSONValue(e - run.startedAt) }
            if let s = run.settledAt { o["settled_s"] = JSONValue(s - run.startedAt) }
            if let f = lastFeedback, let goal = script.orient {
                o["final_error_rad"] = JSONValue(goal.map { axis, g in abs(Double(f.axis(axis)?.position ?? .nan) - g) }.max() ?? 0)
            }
            o["reached"] = JSONValue(orientMiss() == nil)
            line["orient"] = .object(o)
        }
        return line
    }

    private mutating func count(_ key: String) { reportCounts[key, default: 0] += 1 }

    private mutating func emit(_ line: [String: JSONValue]) { lines.append(line) }
}

/// The bytes of each driver call kept apart, one write each: on a datagram link two calls' bytes in
/// one datagram would lose the second message.
struct Writes: ExpressibleByArrayLiteral {
    private(set) var list: [[UInt8]] = []
    init() {}
    init(arrayLiteral elements: [UInt8]...) { for e in elements { self += e } }
    static func += (writes: inout Writes, bytes: [UInt8]) { if !bytes.isEmpty { writes.list.append(bytes) } }
    static func += (writes: inout Writes, other: Writes) { writes.list += other.list }
}


/// A float32 as JSON: its double (every digit, as the reports always had it), null when not finite.
private func json(_ v: Float) -> JSONValue { v.isFinite ? JSONValue(Double(v)) : .null }

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
}

/// `x` with `digits` decimals (printf's %.Nf).
private func fixed(_ x: Double, _ digits: Int) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    _ = withVaList([x]) { vsnprintf(&buffer, buffer.count, "%.\(digits)f", $0) }
    return String(cString: buffer)
}
