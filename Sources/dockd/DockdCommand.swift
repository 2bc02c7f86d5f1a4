import ArgumentParser
import DockDaemon
import DockIO
import DockVersion
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

struct DockdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dockd",
        abstract: "Owns motorized pan/tilt stands and serves a JSON-RPC API to steer them.",
        discussion: """
            Configuration: /etc/dockd/dockd.conf (TOML, see dockd.conf(5)); when it does not exist \
            and no --config is given, the defaults. A file named with --config must exist. \
            A bad configuration exits with status 78 (EX_CONFIG), naming each mistake's line. \
            SIGHUP reloads the configuration. API: dockd's JSON-RPC socket, see dockctl(1).
            """,
        version: DockVersion.string)

    @Option(name: .long, help: ArgumentHelp("Configuration file (default: /etc/dockd/dockd.conf, used when it exists).", valueName: "path"))
    var config: String?

    @Flag(name: .long, help: "Check the configuration (the file and these options) and exit: 0 when good, 78 with each mistake otherwise.")
    var checkConfig = false

    @Flag(name: .long, help: "List the drivers, the links each runs over and the options each takes in a [[device]], and exit.")
    var listDrivers = false

    @Flag(name: .long, help: "With --list-drivers: as JSON.")
    var json = false

    @Option(name: .long, help: "A stand to own, in addition to the configuration's: a tty path (optionally @baud), unix:PATH, udp:HOST:PORT, tcp:HOST:PORT, video:/dev/videoN or onvif://[user@]host[:port][/profile]. Repeatable.")
    var device: [String] = []

    @Option(name: .long, help: "API socket path (overrides the configuration).")
    var socket: String?

    @Option(name: .long, help: "Group of the API socket; empty for none (overrides the configuration).")
    var socketGroup: String?

    @Option(name: .long, help: "Mode of the API socket, octal (overrides the configuration).")
    var socketMode: String?

    @Option(name: .long, help: ArgumentHelp("Where dockd keeps presets and the stands' defaults; made (mode 0750) at the first save when missing and its parent exists (overrides the configuration; systemd's $STATE_DIRECTORY overrides both).", valueName: "directory"))
    var stateDirectory: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical (overrides the configuration).")
    var logLevel: String?

    @Flag(name: .long, help: "Do not attach stands that udev announces.")
    var noHotplug = false

    @Flag(name: .long, help: "Start with the defaults even when the file named with --config does not exist.")
    var ignoreMissingConfig = false

    @Option(name: .long, help: ArgumentHelp("For udev's IMPORT{program}: print DOCKD_V4L2_PTZ=1 and the camera's controls when the video device at this sysfs path is a USB camera that can pan or tilt (read from its USB descriptors), nothing otherwise, and exit.", valueName: "syspath"))
    var uvcControls: String?

    /// Fault injection for the watchdog test (tests/integration/test_watchdog.py); hidden from --help.
    @Option(name: .long, help: .hidden)
    var debugStallOnSigusr2: Double?

    func validate() throws {
        if let logLevel, let problem = Configuration.logLevelProblem(logLevel) {
            throw ValidationError("--log-level \(problem)")
        }
        if json && !listDrivers { throw ValidationError("--json goes with --list-drivers") }
        if let socketMode, UInt16(socketMode, radix: 8).map({ $0 > 0o777 }) ?? true {
            throw ValidationError("--socket-mode must be octal, like 0660")
        }
    }

    /// What these options set over the file's settings.
    var overrides: ConfigurationOverrides {
        ConfigurationOverrides(socket: socket, socketGroup: socketGroup.map { $0.isEmpty ? nil : $0 },
                               socketMode: socketMode.flatMap { UInt16($0, radix: 8) }, stateDirectory: stateDirectory, logLevel: logLevel,
                               noHotplug: noHotplug, devices: device.map { StandEndpoint(parsing: $0) })
    }

    func run() async throws {
        if let uvcControls {
            let properties = UVCSysfs.udevProperties(syspath: uvcControls)
            if !properties.isEmpty { print(properties) }
            return
        }
        if listDrivers {
            print(json ? DriverListing.jsonText : DriverListing.text)
            return
        }
        let path = config ?? Configuration.defaultPath
        let source = ConfigurationSource(path: path, mustExist: config != nil && !ignoreMissingConfig, overrides: overrides)
        let configuration: Configuration
        do {
            configuration = try source.load()
        } catch {
            FileHandleLite.stderr("dockd: configuration refused:\n\(error.description)")
            throw ExitCode(78)  // EX_CONFIG
        }

        if checkConfig {
            let exists = FileManagerLite.exists(path)
            let report = ConfigurationCheck.report(configuration, path: exists ? path : nil)
            print(report.text)
            throw ExitCode(report.ok ? 0 : 78)
        }

        let levels = LogLevelSwitch(Logger.Level(rawValue: configuration.logLevel) ?? .info)
        let journal = JournalLogHandler.stderrIsJournal
        LoggingSystem.bootstrap { label in
            if journal { return SwitchedLogHandler(inner: JournalLogHandler(label: label, level: .trace), levels: levels) }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .trace
            return SwitchedLogHandler(inner: handler, levels: levels)
        }
        // The journal's lines are sent by a thread of their own: the last ones reach it before dockd exits.
        defer { if journal { JournalLogHandler.flush(upTo: 2) } }
        let logger = Logger(label: "dockd")
        if !FileManagerLite.exists(path) {
            logger.notice("no configuration file at \(path): using the defaults")
        }
        // One event loop thread for the whole daemon (the group's size can only be set before its
        // first use): see `Daemon.run`.
        NIOSingletons.groupLoopCountSuggestion = 1
        var daemon = Daemon(configuration: configuration, source: source, logLevels: levels, logger: logger)
        daemon.stallOnSignal = debugStallOnSigusr2
        // No signals for the group to trap: SIGTERM and SIGINT are the daemon's own (`TerminationSignals`,
        // read on its event loop); it ends on them, and the group with it.
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: daemon, successTerminationBehavior: .gracefullyShutdownGroup)],
            logger: logger))
        try await group.run()
        // The links are closed: their device threads finish what closing asks of them.
        DetachedThread.waitForAll(upTo: 2)
    }
}
