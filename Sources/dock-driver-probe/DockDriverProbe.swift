import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import DockCore
import DockDrivers
import DockIO
import DockJSON
import DockProtocol
import DockVersion
// FoundationEssentials (URL, Data, Date), not Foundation: no ICU in the tools either (issue 26).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOPosix
import StandEngine

/// Runs one stand driver against a real link in real time, with a scripted command, and prints
/// what the driver reports as JSON lines. For peer tests (an emulated VISCA camera, a pymavlink
/// gimbal), for trying hardware before configuring dockd, and (`--calibrate`) for measuring a
/// VISCA camera into a profile.
struct DockDriverProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dock-driver-probe",
        abstract: "Drive a stand through one dockd driver and print its reports as JSON lines.",
        version: DockVersion.string)

    @Option(help: ArgumentHelp("The driver: \(DriverTable.names.joined(separator: ", ")).", valueName: "name"))
    var driver: String

    @Option(name: .customLong("option"), help: "Driver option KEY=VALUE (repeatable), as in the config file; `dockd --list-drivers` lists each driver's.")
    var options: [String] = []

    @Option(help: "Link: a tty path[@baud], udp:HOST:PORT, tcp:HOST:PORT or unix:PATH.")
    var endpoint: String

    @Option(help: "Baud rate for a tty without @baud.")
    var baud: Int = 9600

    @Option(help: "Seconds to run (default 3; with --calibrate, until it is done, at most 900).")
    var seconds: Double?

    @Option(help: "Velocity to command after READY, e.g. yaw=0.3,pitch=-0.1 (rad/s, stand axes).")
    var velocity: String?

    @Option(help: "Seconds to keep commanding --velocity before sending STOP.")
    var velocitySeconds: Double = 1

    @Option(help: "Closed loop: drive to these angles with velocity commands, e.g. yaw=0.4,pitch=0.1 (rad).")
    var target: String?

    @Option(help: "Proportional gain of the --target loop (1/s).")
    var gain: Double = 3

    @Option(help: "Move with dockd's motion controller (DockCore, minimum-jerk path, closed on FEEDBACK) to these angles, e.g. yaw=0.5,pitch=0.2 (rad); prints the step-response metrics. Exit status 3 when the move failed or ended off its target, 4 when it had not ended within --seconds.")
    var orient: String?

    @Option(help: "Duration asked of the --orient move (s); the controller lengthens it to fit the limits.")
    var orientDuration: Double = 1.5

    @Option(help: "Send one POSITION to these angles after READY, e.g. yaw=0.2 (rad).")
    var position: String?

    @Option(help: "Duration of the --position move (s).")
    var duration: Double = 1

    @Flag(help: "Also print every chunk of bytes sent and received (hex).")
    var traceBytes = false

    @Flag(help: "VISCA: measure the camera — which way each axis's units grow, its end stops, the speed of every speed byte — and write a profile (--write-profile). The camera moves end to end on both axes: clear its way.")
    var calibrate = false

    @Option(help: "With --calibrate: where to write the profile (JSON).")
    var writeProfile: String?

    @Option(help: "With --calibrate: the pan span between the end stops in degrees, from the spec sheet (default: the --option profile's).")
    var panDegrees: Double?

    @Option(help: "With --calibrate: the tilt span between the end stops in degrees (default: the profile's).")
    var tiltDegrees: Double?

    @Option(help: "With --calibrate: how many pan and tilt speed bytes the camera takes, e.g. 24,23 (default: the profile's tables).")
    var speedBytes: String?

    @Option(help: "With --calibrate: the longest a speed byte is timed (s); slow bytes need it.")
    var calibrateWindow: Double = 2

    @Option(help: "With --calibrate: the written profile's name (default: the --write-profile file's name).")
    var profileName: String?

    func run() async throws {
        var made: any StandDriver
        do {
            made = try DriverTable.definition(driver).make(texts: try Self.keyValues(options), heartbeatTimeoutMs: ProtocolTiming.defaultHeartbeatTimeoutMs)
        } catch {
            throw ValidationError("\(error)")
        }
        var calibration: CalibrationRun?
        if calibrate {
            guard let visca = made as? VISCADriver else { throw ValidationError("--calibrate measures VISCA cameras (--driver visca)") }
            guard let out = writeProfile else { throw ValidationError("--calibrate needs --write-profile PATH") }
            let run = try calibrationRun(visca, output: out)
            made = run.driver
            calibration = run
        }
        let script = Script(velocity: try velocity.map(Self.axes) ?? [:], velocitySeconds: velocitySeconds,
                            target: try target.map(Self.axes), gain: gain,
                            position: try position.map(Self.axes), duration: duration,
                            orient: try orient.map(Self.axes), orientDuration: orientDuration)
        let state = ProbeState(driver: made, script: script, trace: traceBytes, calibration: calibration)
        let link = StandEndpoint(parsing: endpoint, defaultBaud: baud)
        let channel = try await StandTransport.connect(link, group: MultiThreadedEventLoopGroup.singleton)
        let clock = ContinuousClock(), origin = clock.now
        @Sendable func now() -> Double {
            let d = clock.now - origin
            return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        }
        let limit = seconds ?? (calibrate ? 900 : 3)
        let status = try await channel.executeThenClose { inbound, outbound in
            // One write per driver call: a datagram each on a UDP link (a VISCA-over-IP camera
            // reads one message per datagram).
            for bytes in await state.start(at: now()) { try await outbound.write(ByteBuffer(bytes: bytes)) }
            return try await withThrowingTaskGroup(of: Int32?.self) { group in
                group.addTask {
                    for try await buffer in inbound {
                        let out = await state.receive(Array(buffer.readableBytesView), at: now())
                        for bytes in out { try await outbound.write(ByteBuffer(bytes: bytes)) }
                    }
                    return nil
                }
                group.addTask {
                    while now() < limit {
                        try await Task.sleep(for: .milliseconds(10))
                        let out = await state.tick(at: now())
                        for bytes in out { try await outbound.write(ByteBuffer(bytes: bytes)) }
                        if await state.fatal { return 2 }
                        if let done = await state.calibrationStatus(at: now()) { return done }
                    }
                    return 0
                }
                var code: Int32 = 0
                while let result = try await group.next() {
                    if let c = result { code = c; break }
                }
                group.cancelAll()
                return code
            }
        }
        await state.summary(at: now())
        if calibration != nil {
            // 3: the calibration failed (said why); 4: it did not finish in --seconds; 2: the link failed.
            guard await state.calibrationStatus(at: .infinity) == 0 else { throw ExitCode(status == 0 ? 4 : status) }
            try await state.writeCalibratedProfile()
        }
        if status != 0 { throw ExitCode(status) }
        if let miss = await state.orientMiss() {
            writeAll(Array("dock-driver-probe: --orient: \(miss.message)\n".utf8), to: STDERR_FILENO)
            throw ExitCode(miss.code)
        }
    }

    /// The calibration's driver: the camera's link settings with the identity profile.
    private func calibrationRun(_ visca: VISCADriver, output: String) throws -> CalibrationRun {
        let base = visca.profile
        var bytes = (pan: base.pan.speeds.count, tilt: base.tilt.speeds.count)
        if let text = speedBytes {
            let parts = text.split(separator: ",").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ (1...0x7F).contains($0) }) else {
                throw ValidationError("--speed-bytes takes PAN,TILT, e.g. 24,23")
            }
            bytes = (parts[0], parts[1])
        }
        let spans = (pan: panDegrees ?? (base.pan.maxDegrees - base.pan.minDegrees),
                     tilt: tiltDegrees ?? (base.tilt.maxDegrees - base.tilt.minDegrees))
        guard spans.pan > 0, spans.tilt > 0 else { throw ValidationError("--pan-degrees and --tilt-degrees must be > 0") }
        let identity = Calibration.identityProfile(like: base, panBytes: bytes.pan, tiltBytes: bytes.tilt)
        let driver = VISCADriver(profile: identity, address: visca.address, transport: visca.transport,
                                 pollHz: 1 / visca.pollInterval, name: visca.serialName, learnsSpeeds: false)
        let fileName = URL(fileURLWithPath: output).deletingPathExtension().lastPathComponent
        return CalibrationRun(driver: driver, base: base, output: output, name: profileName ?? fileName,
                              axes: [Calibration.AxisSetup(name: "pan", bytes: bytes.pan, spanDegrees: spans.pan),
                                     Calibration.AxisSetup(name: "tilt", bytes: bytes.tilt, spanDegrees: spans.tilt)],
                              window: calibrateWindow, endpoint: endpoint)
    }

    static func keyValues(_ items: [String]) throws -> [String: String] {
        var out: [String: String] = [:]
        for item in items {
            guard let eq = item.firstIndex(of: "=") else { throw ValidationError("--option \(item): expected KEY=VALUE") }
            out[String(item[..<eq])] = String(item[item.index(after: eq)...])
        }
        return out
    }

    static func axes(_ text: String) throws -> [Axis: Double] {
        var out: [Axis: Double] = [:]
        for part in text.split(separator: ",") {
            let kv = part.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let axis = Axis(name: String(kv[0])), let v = Double(kv[1]) else {
                throw ValidationError("\(part): expected AXIS=VALUE with AXIS yaw, pitch or roll")
            }
            out[axis] = v
        }
        return out
    }
}

struct Script: Sendable {
    var velocity: [Axis: Double]
    var velocitySeconds: Double
    var target: [Axis: Double]?
    var gain: Double
    var position: [Axis: Double]?
    var duration: Double
    var orient: [Axis: Double]?
    var orientDuration: Double
}

/// Step response of one --orient move through the motion controller.
struct OrientRun {
    var controller: MotionController
    var id: MotionID?
    var startedAt = 0.0
    var start: [Axis: Double] = [:]
    var endedAt: Double?
    var state = ""
    var settledAt: Double?
    var maxOvershoot = 0.0
    var commands = 0
}

/// What --calibrate needs: the identity-profile driver, the camera's own profile to build on, where
/// the result goes.
struct CalibrationRun: Sendable {
    var driver: VISCADriver
    var base: VISCAProfile
    var output: String
    var name: String
    var axes: [Calibration.AxisSetup]
    var window: Double
    var endpoint: String
}

actor ProbeState {
    var driver: any StandDriver
    let script: Script
    let trace: Bool
    let calibrationRun: CalibrationRun?
    var calibration: Calibration?
    var readyAt: Double?
    var capabilities: Capabilities?
    var stopped = false
    var positionSent = false
    var fatal = false
    var feedbackCount = 0
    var firstFeedback: Double?
    var lastFeedback: Feedback?
    var reportCounts: [String: Int] = [:]
    var bytesOut = 0, bytesIn = 0
    var orientRun: OrientRun?

    init(driver: any StandDriver, script: Script, trace: Bool, calibration: CalibrationRun? = nil) {
        self.driver = driver; self.script = script; self.trace = trace; self.calibrationRun = calibration
    }

    /// nil while calibrating (or not calibrating); once done and the camera has confirmed the last
    /// Stop (or a second later), 0, or 3 when it failed.
    func calibrationStatus(at t: Double) -> Int32? {
        guard let c = calibration, c.finished else { return nil }
        if calibrationEndedAt == nil { calibrationEndedAt = t }
        guard driver.stopConfirmed || t - calibrationEndedAt! > 1 else { return nil }
        return c.failure == nil ? 0 : 3
    }

    private var calibrationEndedAt: Double?

    /// Each returns one write per driver call (see `Writes`).
    func start(at t: Double) -> [[UInt8]] {
        var out = Writes()
        out += driver.start(at: t)
        return note(sent: out, at: t)
    }

    func receive(_ bytes: [UInt8], at t: Double) -> [[UInt8]] {
        bytesIn += bytes.count
        if trace { emit(["t": JSONValue(t), "report": "received", "hex": JSONValue(hex(bytes))]) }
        var out = Writes()
        for report in driver.receive(bytes, at: t) { out += handle(report, at: t) }
        return note(sent: out, at: t)
    }

    func tick(at t: Double) -> [[UInt8]] {
        let output = driver.tick(at: t)
        var out = Writes()
        out += output.bytes
        for report in output.reports { out += handle(report, at: t) }
        out += scripted(at: t, onFeedback: false)
        return note(sent: out, at: t)
    }

    private func note(sent out: Writes, at t: Double) -> [[UInt8]] {
        for bytes in out.list {
            bytesOut += bytes.count
            if trace { emit(["t": JSONValue(t), "report": "sent", "hex": JSONValue(hex(bytes))]) }
        }
        return out.list
    }

    private func handle(_ report: DriverReport, at t: Double) -> Writes {
        switch report {
        case .ready(let identity, let caps):
            readyAt = t
            capabilities = caps
            // The controller as dockd's engine builds it: its settings, and the stand's own position
            // loop where the driver has one (VISCA's AbsolutePosition, a gimbal's attitude).
            if script.orient != nil {
                orientRun = OrientRun(controller: MotionController(capabilities: caps, configuration: EngineSettings().motion,
                                                                   standClosesPositionLoop: driver.closesPositionLoop))
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
        case .fatal(let text), .incompatible(let text):
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
    private func scripted(at t: Double, onFeedback: Bool) -> Writes {
        guard let ready = readyAt, !fatal else { return [] }
        if calibrationRun != nil { return onFeedback ? calibrationStep(at: t) : [] }
        var out = Writes()
        if let p = script.position, !positionSent {
            positionSent = true
            out += driver.send(.position(duration: Float(script.duration),
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
            out += driver.send(.velocity(values), at: t)
        } else if !script.velocity.isEmpty {
            if t - ready < script.velocitySeconds {
                out += driver.send(.velocity(script.velocity.sorted { $0.key < $1.key }.map { AxisValue($0.key, Float($0.value)) }), at: t)
            } else if !stopped {
                stopped = true
                out += driver.send(.stop, at: t)
            }
        }
        return out
    }

    /// The daemon's loop: FEEDBACK → controller.feedback → controller.tick → commands to the driver.
    private func orientStep(_ run: inout OrientRun, goal: [Axis: Double], feedback f: Feedback, at t: Double) -> Writes {
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
            bytes += driver.send(m, at: t)
        }
        return bytes
    }

    /// One step of --calibrate on a position sample: the identity profile's feedback is raw units
    /// (yaw = −pan units in "degrees", pitch = tilt units), its velocities raw speed bytes.
    private func calibrationStep(at t: Double) -> Writes {
        guard let run = calibrationRun, let f = lastFeedback else { return [] }
        if calibration == nil { calibration = Calibration(axes: run.axes, maxWindow: run.window, startAt: t) }
        let deg = 180 / Double.pi
        let units = [-Double(f.axis(.yaw)?.position ?? 0) * deg, Double(f.axis(.pitch)?.position ?? 0) * deg]
        let command = calibration!.step(units: units, at: t)
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

    private func emitCalibration(_ event: Calibration.Event, at t: Double) {
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

    /// Writes the measured profile where --write-profile said (after checking it loads back).
    func writeCalibratedProfile() throws {
        guard let run = calibrationRun, let c = calibration, c.finished, c.failure == nil else { return }
        let how = "dock-driver-probe --calibrate on \(Date.now.formatted(.iso8601)) at \(run.endpoint): each speed byte driven for up to \(run.window) s after a \(c.settleTime) s ramp, the slope of the polled position"
        var profile = c.profile(base: run.base, name: run.name, how: how)
        profile.source = "Measured with \(how). Spans between the end stops given: pan \(run.axes[0].spanDegrees)°, tilt \(run.axes[1].spanDegrees)°. Not measured (from \(run.base.name)): \(["maxAccelDegrees", "absoluteSpeed", "limitSet"].joined(separator: ", "))."
        let data = try profile.encoded()
        _ = try VISCAProfile.decode(data)
        try data.write(to: URL(fileURLWithPath: run.output))
        emit(["report": "calibration", "state": "written", "path": JSONValue(run.output), "name": JSONValue(profile.name)])
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

    func summary(at t: Double) {
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
        emit(line)
    }

    private func count(_ key: String) { reportCounts[key, default: 0] += 1 }
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

/// One report: a line of JSON with sorted keys on stdout.
private func emit(_ object: [String: JSONValue]) {
    var line = JSONBytes()
    line.writeJSON(.object(object))
    line.bytes.append(UInt8(ascii: "\n"))
    writeAll(line.bytes, to: STDOUT_FILENO)
}

private func writeAll(_ bytes: [UInt8], to fd: Int32) {
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
        }
    }
}
