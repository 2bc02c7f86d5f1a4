import ArgumentParser
import DockIO
import Logging
import NIOPosix
import ServiceLifecycle
import UnixSignals

@main
struct DockdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dockd",
        abstract: "Owns motorized pan/tilt stands and serves a JSON-RPC API to steer them.",
        discussion: "Configuration: /etc/dockd/dockd.conf (TOML). API: protocol/API.md. SIGHUP reloads the configuration.")

    @Option(name: .long, help: "Configuration file.")
    var config: String = "/etc/dockd/dockd.conf"

    @Option(name: .long, help: "A stand to own, in addition to the configuration's: a tty path (optionally @baud) or unix:PATH. Repeatable.")
    var device: [String] = []

    @Option(name: .long, help: "API socket path (overrides the configuration).")
    var socket: String?

    @Option(name: .long, help: "Group of the API socket; empty for none (overrides the configuration).")
    var socketGroup: String?

    @Option(name: .long, help: "Mode of the API socket, octal (overrides the configuration).")
    var socketMode: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String?

    @Flag(name: .long, help: "Do not attach stands that udev announces.")
    var noHotplug = false

    @Flag(name: .long, help: "Start even when the configuration file does not exist (use the defaults).")
    var ignoreMissingConfig = false

    /// Fault injection for the watchdog test (tests/integration/test_watchdog.py); hidden from --help.
    @Option(name: .long, help: .hidden)
    var debugStallOnSigusr2: Double?

    func run() async throws {
        var configuration = Configuration()
        if !ignoreMissingConfig || FileManagerLite.exists(config) {
            do {
                configuration = try Configuration.load(path: config)
            } catch {
                FileHandleLite.stderr("dockd: \(error.description)")
                throw ExitCode(78)  // EX_CONFIG
            }
        }
        if let socket { configuration.socketPath = socket }
        if let socketGroup { configuration.socketGroup = socketGroup.isEmpty ? nil : socketGroup }
        if let logLevel { configuration.logLevel = logLevel }
        if let socketMode {
            guard let mode = UInt16(socketMode, radix: 8), mode <= 0o777 else {
                FileHandleLite.stderr("dockd: --socket-mode must be octal, like 0660")
                throw ExitCode(64)
            }
            configuration.socketMode = mode
        }
        if noHotplug { configuration.hotplug.enabled = false }
        for d in device { configuration.devices.append(.init(endpoint: StandEndpoint(parsing: d))) }

        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        let journal = JournalLogHandler.stderrIsJournal
        LoggingSystem.bootstrap { label in
            if journal { return JournalLogHandler(label: label, level: level) }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "dockd")
        var daemon = Daemon(configuration: configuration, configPath: config, logger: logger)
        daemon.stallOnSignal = debugStallOnSigusr2
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: daemon, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }
}
