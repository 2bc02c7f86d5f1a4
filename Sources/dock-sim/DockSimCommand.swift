#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import DockProtocol
import DockSim
import DockVersion
import NIOCore
import NIOPosix

/// `dock-sim`: a simulated stand as a real process that speaks protocol v1 like hardware.
struct DockSimCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dock-sim",
        abstract: "A simulated pan/tilt stand speaking dockd protocol v1 over a pty or a Unix socket.",
        discussion: """
            The first line on stdout names the link: `pty /dev/pts/N` or `unix PATH` (again after \
            every `unplug`). Commands on stdin, one per line: press tracking|shutter|flip, \
            button ID press|release, zoom F, dock, undock, battery L, charger on|off, corrupt F S, \
            stall AXIS S, silent S, slow MS S, clockjump S, unplug S, log TEXT. With --unix, a new connection replaces the \
            previous one.
            """,
        version: DockVersion.string)

    @Flag(help: "Offer the link as a pseudo-terminal (the default).")
    var pty = false

    @Option(help: ArgumentHelp("Keep a symlink at this path pointing to the current pty.", valueName: "path"))
    var link: String?

    @Option(help: ArgumentHelp("Listen on a Unix stream socket at this path instead of a pty.", valueName: "path"))
    var unix: String?

    @Option(help: "Pace output like a serial line of this baud rate (8N1: baud/10 bytes/s). Default: unpaced.")
    var baud: Int?

    @Option(help: "Seed of the stand's noise and fault injection; the same seed repeats a run.")
    var seed: UInt64 = 1

    @Option(help: "The stand's serial number (at most 32 bytes).")
    var serial = StandConfiguration().serial

    @Option(help: "FEEDBACK rate, Hz (default 100, or what --baud carries: PROTOCOL.md §5.1).")
    var feedbackHz: UInt16?

    @Option(help: "IMU rate, Hz; 0: no IMU messages (default 100, or what --baud carries).")
    var imuHz: UInt16?

    @Flag(help: "The base sways and bobs like a hand-held stand (seen by the IMU).")
    var handheld = false

    @Option(help: ArgumentHelp("An optical zoom axis (protocol 1.1) up to this magnification (1 = widest).", valueName: "magnification"))
    var zoom: Double?

    @Option(help: "The zoom's speed, magnification per second (with --zoom).")
    var zoomSpeed = 2.0

    @Option(help: "Heartbeat timeout used when the host's HELLO asks for 0, ms.")
    var heartbeatMs = StandConfiguration().defaultHeartbeatTimeoutMs

    @Option(help: ArgumentHelp("Run a scenario: `<seconds> <command>` lines, times from process start.", valueName: "file"))
    var script: String?

    @Flag(help: "Print every frame in and out on stderr.")
    var logFrames = false

    func validate() throws {
        if pty && unix != nil { throw ValidationError("--pty and --unix exclude each other") }
        if link != nil && unix != nil { throw ValidationError("--link applies to --pty only") }
        if let baud, !(50...4_000_000).contains(baud) { throw ValidationError("--baud must be within 50…4000000") }
        if let feedbackHz, !(1...1000).contains(feedbackHz) { throw ValidationError("--feedback-hz must be within 1…1000") }
        if let imuHz, imuHz > 1000 { throw ValidationError("--imu-hz must be within 0…1000") }
        if !(100...5000).contains(heartbeatMs) { throw ValidationError("--heartbeat-ms must be within 100…5000 (the protocol's clamp)") }
        if serial.isEmpty || serial.utf8.count > 32 { throw ValidationError("--serial must be 1 to 32 bytes") }
        if let zoom, !(zoom > 1 && zoom <= 100) { throw ValidationError("--zoom must be above 1 and at most 100") }
        if !(zoomSpeed > 0 && zoomSpeed <= 100) { throw ValidationError("--zoom-speed must be above 0 and at most 100") }
    }

    func run() throws {
        ExitSignals.blockInEveryThread()
        // A host that hangs up on the Unix socket must cost a write error, not the process.
        signal(SIGPIPE, SIG_IGN)
        let settings = SimulatorSettings(stand: SimulatedStand(configuration: standConfiguration, seed: seed),
                                      link: unix.map { .unix(path: $0) } ?? .pty(symlink: link),
                                      script: try loadScript(), baud: baud, logFrames: logFrames)
        warnIfLinkTooSlow(settings.stand.configuration)
        if let feedbackHz, feedbackHz < 50 { Console.err("warning: --feedback-hz \(feedbackHz) is below the protocol's 50 Hz minimum") }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let finished = loop.makePromise(of: Void.self)
        let engine = try loop.submit {
            NIOLoopBound(SimulatedStandHost(settings: settings, group: group, loop: loop, finished: finished), eventLoop: loop)
        }.wait()
        do {
            try loop.flatSubmit { engine.value.start() }.wait()
        } catch {
            Console.err("cannot open the host link: \(error)")
            throw ExitCode.failure
        }
        let signals = ExitSignals.install { loop.execute { engine.value.shutdown() } }
        _ = StdinCommands.start { line in loop.execute { engine.value.command(line) } }

        try finished.futureResult.wait()
        withExtendedLifetime(signals) {}
        // The stdin thread may be blocked in read(2) forever; process exit ends it, so its pool
        // is deliberately not shut down.
        try? group.syncShutdownGracefully()
    }

    private var standConfiguration: StandConfiguration {
        var configuration = StandConfiguration()
        configuration.serial = serial
        if let zoom {
            configuration.axes.append(AxisModel(axis: .zoom, continuous: false, min: 1, max: zoom, maxSpeed: zoomSpeed, maxAccel: 4 * zoomSpeed))
        }
        // Rates not given are the defaults, lowered to what --baud carries (PROTOCOL.md §5.1).
        configuration.feedbackHz = feedbackHz ?? configuration.feedbackHz
        configuration.imuHz = imuHz ?? configuration.imuHz
        if let baud, feedbackHz == nil || imuHz == nil,
           let fitted = LinkBudget.rates(feedbackHz: configuration.feedbackHz, imuHz: configuration.imuHz,
                                         axes: configuration.axes.count, bytesPerSecond: Double(baud) / 10) {
            if feedbackHz == nil { configuration.feedbackHz = fitted.feedbackHz }
            if imuHz == nil { configuration.imuHz = fitted.imuHz }
        }
        configuration.handheld = handheld
        configuration.defaultHeartbeatTimeoutMs = heartbeatMs
        return configuration
    }

    private func loadScript() throws -> [SimScript.Step] {
        guard let script else { return [] }
        do {
            return try SimScript(parsing: TextFile.read(script)).steps
        } catch let error as SimAction.ParseError {
            Console.err("script \(script): \(error.description)")
            throw ExitCode.validationFailure
        } catch {
            Console.err("script: \(error)")
            throw ExitCode.validationFailure
        }
    }

    /// PROTOCOL.md §5: stands on slow links must lower their rates. Say so up front rather than
    /// let the user wonder where the frames went.
    private func warnIfLinkTooSlow(_ configuration: StandConfiguration) {
        guard let baud else { return }
        let capacity = Double(baud) / 10
        let feedback = Feedback(timeUs: 1 << 40, axes: configuration.axes.map { AxisFeedback(axis: $0.axis, position: 1, velocity: 1, effort: 1) })
        let imu = ImuSample(timeUs: 1 << 40, gyro: (1, 1, 1), accel: (1, 1, 1))
        let frameBytes = { (message: Message) in Double(FrameEncoder.encode(Frame(seq: 0x0101, message: message)).count) }
        let needed = Double(configuration.feedbackHz) * frameBytes(.feedback(feedback)) + Double(configuration.imuHz) * frameBytes(.imu(imu))
        if needed > capacity {
            Console.err("warning: feedback and IMU need ≈\(Int(needed)) bytes/s but \(baud) baud carries \(Int(capacity)); frames will be dropped")
        }
        if LinkBudget.rates(feedbackHz: LinkBudget.minimumFeedbackHz, imuHz: 0, axes: configuration.axes.count, bytesPerSecond: capacity) == nil {
            Console.err("warning: \(baud) baud cannot carry 50 Hz FEEDBACK in 75 % of the link: not a supported link (PROTOCOL.md §5.1)")
        } else {
            Console.err("rates for \(baud) baud: FEEDBACK \(configuration.feedbackHz) Hz, IMU \(configuration.imuHz) Hz")
        }
    }
}
