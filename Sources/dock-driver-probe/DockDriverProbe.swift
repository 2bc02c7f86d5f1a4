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
import StandEngine

/// Runs one stand driver against a real link in real time, with a scripted command, and prints
/// what the driver reports as JSON lines: the command line and the printing; the run itself is
/// `ProbeSession`, on the link host. For peer tests (an emulated VISCA camera, a pymavlink
/// gimbal), for trying hardware before configuring dockd, and (`--calibrate`) for measuring a
/// VISCA camera into a profile.
struct DockDriverProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dock-driver-probe",
        abstract: "Drive a stand through one dockd driver and print its reports as JSON lines.",
        discussion: """
            The run ends after --seconds, or sooner when the driver fails or the link closes; a summary line \
            follows. Exit status: 0 done; 2 the driver reported a fatal error, or the link closed before \
            the run was done (stderr says why); 3 and 4 as --orient and --calibrate say; 1 the link could \
            not be opened.
            """,
        version: DockVersion.string)

    @Option(help: ArgumentHelp("The driver: \(DriverTable.names.joined(separator: ", ")).", valueName: "name"))
    var driver: String

    @Option(name: .customLong("option"), help: "Driver option KEY=VALUE (repeatable), as in the config file; `dockd --list-drivers` lists each driver's.")
    var options: [String] = []

    @Option(help: "Link: a tty path[@baud], udp:HOST:PORT, tcp:HOST:PORT, unix:PATH, rfcomm:ADDRESS[/CHANNEL], video:/dev/videoN or onvif://[user@]host[:port].")
    var endpoint: String

    @Option(help: "Baud rate for a tty without @baud.")
    var baud: Int = 9600

    @Option(help: "Seconds to run once the link is open (default 3; with --calibrate, until it is done, at most 900); a stand still moving at the script's command is stopped first.")
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
        let link = StandEndpoint(parsing: endpoint, defaultBaud: baud)
        let clock = ContinuousClock(), origin = clock.now
        @Sendable func now() -> Double {
            let d = clock.now - origin
            return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        }
        let session = ProbeSession(driver: made, script: script, trace: traceBytes, calibration: calibration,
                                   deadline: seconds ?? (calibrate ? 900 : 3))
        // The session's steps run on the link's event loop as bytes and ticks come (DockIO's host of
        // a pure session over a real link, dockd's too); their lines are printed as they go.
        let host = LinkSessionHost(session: session, shell: ProbePrinter(), now: now)
        try await host.open(link).untilClosed()
        let ended = try await host.read { $0 }
        emit(ended.summary(at: now()))
        if let reason = ended.linkLost {
            writeAll(Array("dock-driver-probe: the link closed: \(reason)\n".utf8), to: STDERR_FILENO)
        }
        let status = ended.status ?? 2
        if let calibration {
            // 3: the calibration failed (said why); 4: it did not finish in --seconds; 2: the link failed.
            guard let profile = ended.calibratedProfile(measuredOn: Date.now.formatted(.iso8601)) else {
                throw ExitCode(status == 0 ? 4 : status)
            }
            // Written only once it loads back.
            let data = try profile.encoded()
            _ = try VISCAProfile.decode(data)
            try data.write(to: URL(fileURLWithPath: calibration.output))
            emit(["report": "calibration", "state": "written", "path": JSONValue(calibration.output), "name": JSONValue(profile.name)])
        }
        if status != 0 { throw ExitCode(status) }
        if let miss = ended.orientMiss() {
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
                              axes: [Calibration.AxisSetup(name: "pan", bytes: bytes.pan, spanDegrees: spans.pan, baseSpeeds: base.pan.speeds),
                                     Calibration.AxisSetup(name: "tilt", bytes: bytes.tilt, spanDegrees: spans.tilt, baseSpeeds: base.tilt.speeds)],
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

/// What the probe's host does with each step of the session beyond its writes: its lines printed.
private final class ProbePrinter: LinkSessionShell {
    typealias Session = ProbeSession
    func carryOut(_ output: ProbeSession.Output, from host: LinkSessionHost<ProbePrinter>) {
        for line in output.lines { emit(line) }
    }
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
