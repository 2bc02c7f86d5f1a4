import ArgumentParser
import DockCore
import DockDrivers
import DockIO
import DockProtocol
import DockVersion
import Foundation
import NIOCore
import NIOPosix

/// Runs one stand driver against a real link in real time, with a scripted command, and prints
/// what the driver reports as JSON lines. For peer tests (an emulated VISCA camera, a pymavlink
/// gimbal) and for trying hardware before configuring dockd.
@main
struct DockDriverProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dock-driver-probe",
        abstract: "Drive a stand through one dockd driver (visca, mavlink) and print its reports as JSON lines.",
        version: DockVersion.string)

    @Option(help: "Driver name: visca or mavlink.")
    var driver: String

    @Option(name: .customLong("option"), help: "Driver option KEY=VALUE (repeatable), as in the config file.")
    var options: [String] = []

    @Option(help: "Link: a tty path[@baud], udp:HOST:PORT, tcp:HOST:PORT or unix:PATH.")
    var endpoint: String

    @Option(help: "Baud rate for a tty without @baud.")
    var baud: Int = 9600

    @Option(help: "Seconds to run.")
    var seconds: Double = 3

    @Option(help: "Velocity to command after READY, e.g. yaw=0.3,pitch=-0.1 (rad/s, stand axes).")
    var velocity: String?

    @Option(help: "Seconds to keep commanding --velocity before sending STOP.")
    var velocitySeconds: Double = 1

    @Option(help: "Closed loop: drive to these angles with velocity commands, e.g. yaw=0.4,pitch=0.1 (rad).")
    var target: String?

    @Option(help: "Proportional gain of the --target loop (1/s).")
    var gain: Double = 3

    @Option(help: "Move with dockd's motion controller (DockCore, minimum-jerk path, closed on FEEDBACK) to these angles, e.g. yaw=0.5,pitch=0.2 (rad); prints the step-response metrics.")
    var orient: String?

    @Option(help: "Duration asked of the --orient move (s); the controller lengthens it to fit the limits.")
    var orientDuration: Double = 1.5

    @Option(help: "Send one POSITION to these angles after READY, e.g. yaw=0.2 (rad).")
    var position: String?

    @Option(help: "Duration of the --position move (s).")
    var duration: Double = 1

    @Flag(help: "Also print every chunk of bytes sent and received (hex).")
    var traceBytes = false

    func run() async throws {
        let made: any StandDriver
        do {
            made = try DriverFactory.make(name: driver, options: try Self.keyValues(options))
        } catch {
            throw ValidationError("\(error)")
        }
        let script = Script(velocity: try velocity.map(Self.axes) ?? [:], velocitySeconds: velocitySeconds,
                            target: try target.map(Self.axes), gain: gain,
                            position: try position.map(Self.axes), duration: duration,
                            orient: try orient.map(Self.axes), orientDuration: orientDuration)
        let state = ProbeState(driver: made, script: script, trace: traceBytes)
        let link = StandEndpoint(parsing: endpoint, defaultBaud: baud)
        let channel = try await StandTransport.connect(link, group: MultiThreadedEventLoopGroup.singleton)
        let clock = ContinuousClock(), origin = clock.now
        @Sendable func now() -> Double {
            let d = clock.now - origin
            return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        }
        let limit = seconds
        let status = try await channel.executeThenClose { inbound, outbound in
            let first = await state.start(at: now())
            try await outbound.write(ByteBuffer(bytes: first))
            return try await withThrowingTaskGroup(of: Int32?.self) { group in
                group.addTask {
                    for try await buffer in inbound {
                        let out = await state.receive(Array(buffer.readableBytesView), at: now())
                        if !out.isEmpty { try await outbound.write(ByteBuffer(bytes: out)) }
                    }
                    return nil
                }
                group.addTask {
                    while now() < limit {
                        try await Task.sleep(for: .milliseconds(10))
                        let out = await state.tick(at: now())
                        if !out.isEmpty { try await outbound.write(ByteBuffer(bytes: out)) }
                        if await state.fatal { return 2 }
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
        if status != 0 { throw ExitCode(status) }
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

actor ProbeState {
    var driver: any StandDriver
    let script: Script
    let trace: Bool
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

    init(driver: any StandDriver, script: Script, trace: Bool) { self.driver = driver; self.script = script; self.trace = trace }

    func start(at t: Double) -> [UInt8] {
        let bytes = driver.start(at: t)
        note(sent: bytes, at: t)
        return bytes
    }

    func receive(_ bytes: [UInt8], at t: Double) -> [UInt8] {
        bytesIn += bytes.count
        if trace { emit(["t": t, "report": "received", "hex": hex(bytes)]) }
        var out: [UInt8] = []
        for report in driver.receive(bytes, at: t) { out += handle(report, at: t) }
        note(sent: out, at: t)
        return out
    }

    func tick(at t: Double) -> [UInt8] {
        let output = driver.tick(at: t)
        var out = output.bytes
        for report in output.reports { out += handle(report, at: t) }
        out += scripted(at: t, onFeedback: false)
        note(sent: out, at: t)
        return out
    }

    private func note(sent bytes: [UInt8], at t: Double) {
        bytesOut += bytes.count
        if trace && !bytes.isEmpty { emit(["t": t, "report": "sent", "hex": hex(bytes)]) }
    }

    private func handle(_ report: DriverReport, at t: Double) -> [UInt8] {
        switch report {
        case .ready(let identity, let caps):
            readyAt = t
            capabilities = caps
            if script.orient != nil { orientRun = OrientRun(controller: MotionController(capabilities: caps)) }
            count("ready")
            emit(["t": t, "report": "ready", "model": identity.model, "serial": identity.serial,
                  "firmware": identity.firmware, "protocol": identity.protocolVersion, "feedback_hz": Int(caps.feedbackHz),
                  "axes": caps.axes.map { ["axis": $0.axis.description, "min": json($0.min), "max": json($0.max),
                                           "max_speed": json($0.maxSpeed), "continuous": $0.continuous] }])
            return scripted(at: t, onFeedback: false)
        case .feedback(let f):
            feedbackCount += 1
            if firstFeedback == nil { firstFeedback = t }
            lastFeedback = f
            count("feedback")
            var line: [String: Any] = ["t": t, "report": "feedback"]
            for a in f.axes {
                line[a.axis.description] = json(a.position)
                line[a.axis.description + "_velocity"] = json(a.velocity)
            }
            emit(line)
            // The daemon ticks its controller on every FEEDBACK; so does the probe.
            return scripted(at: t, onFeedback: true)
        case .refused(let command, let reason):
            count("refused")
            emit(["t": t, "report": "refused", "command": Int(command), "reason": reason])
        case .garbage(let e):
            count("garbage")
            emit(["t": t, "report": "garbage", "error": e.rawValue])
        case .rejected(let text):
            count("rejected")
            emit(["t": t, "report": "rejected", "reason": text])
        case .fatal(let text):
            count("fatal")
            fatal = true
            emit(["t": t, "report": "fatal", "reason": text])
        case .fault(let f):
            count("fault")
            emit(["t": t, "report": "fault", "code": Int(f.code), "text": f.text])
        case .imu, .event, .battery:
            count("other")
        }
        return []
    }

    /// The scripted commands: POSITION once, VELOCITY for a while then STOP, or a P loop to a target.
    private func scripted(at t: Double, onFeedback: Bool) -> [UInt8] {
        guard let ready = readyAt, !fatal else { return [] }
        var out: [UInt8] = []
        if let p = script.position, !positionSent {
            positionSent = true
            out += driver.send(.position(duration: Float(script.duration),
                                         targets: p.sorted { $0.key < $1.key }.map { PositionTarget(axis: $0.key, position: Float($0.value)) }), at: t)
        }
        guard onFeedback else { return out }
        if let goal = script.orient, var run = orientRun, let f = lastFeedback {
            defer { orientRun = run }
            return out + orientStep(&run, goal: goal, feedback: f, at: t)
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
    private func orientStep(_ run: inout OrientRun, goal: [Axis: Double], feedback f: Feedback, at t: Double) -> [UInt8] {
        run.controller.feedback(f, at: t)
        if run.id == nil {
            do {
                run.id = try run.controller.setOrientation(goal, relative: false, duration: script.orientDuration, at: t)
                run.startedAt = t
                for a in f.axes { run.start[a.axis] = Double(a.position) }
            } catch {
                emit(["t": t, "report": "motion", "state": "refused", "reason": "\(error)"])
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
            run.state = "\(p.state)"
            emit(["t": t, "report": "motion", "state": run.state, "duration": t - run.startedAt])
        }
        var bytes: [UInt8] = []
        for m in output.messages {
            run.commands += 1
            bytes += driver.send(m, at: t)
        }
        return bytes
    }

    func summary(at t: Double) {
        var line: [String: Any] = ["t": t, "report": "summary", "feedback": feedbackCount, "bytes_out": bytesOut,
                                   "bytes_in": bytesIn, "counts": reportCounts]
        if let first = firstFeedback, feedbackCount > 1, t > first { line["feedback_hz"] = Double(feedbackCount - 1) / (t - first) }
        if let f = lastFeedback { for a in f.axes { line["final_" + a.axis.description] = json(a.position) } }
        if let r = readyAt { line["ready_s"] = r }
        if let run = orientRun {
            var o: [String: Any] = ["state": run.state, "overshoot_rad": run.maxOvershoot, "commands": run.commands]
            if let e = run.endedAt { o["completed_s"] = e - run.startedAt }
            if let s = run.settledAt { o["settled_s"] = s - run.startedAt }
            if let f = lastFeedback, let goal = script.orient {
                o["final_error_rad"] = goal.map { axis, g in abs(Double(f.axis(axis)?.position ?? .nan) - g) }.max() ?? 0
            }
            line["orient"] = o
        }
        emit(line)
    }

    private func count(_ key: String) { reportCounts[key, default: 0] += 1 }
}

private func json(_ v: Float) -> Any { v.isFinite ? Double(v) : NSNull() }

private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined(separator: " ") }

private func emit(_ object: [String: Any]) {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}
