import DockCore
import DockDrivers
import DockIO
import DockTracking
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import StandEngine
import UnixSignals

/// The running daemon: the stands, the API socket, systemd's notifications, and an orderly stop
/// (motors stopped and stands told before the process exits).
package struct Daemon: Service {
    let configuration: Configuration
    /// Read again at SIGHUP.
    let source: ConfigurationSource
    let logLevels: LogLevelSwitch
    let logger: Logger
    /// `--debug-stall-on-sigusr2`: SIGUSR2 stalls the control loops this long (tests only).
    package var stallOnSignal: Double?
    /// API connections served at once (nil: `APIServer.defaultMaxClients()`, below the fd limit).
    var maxClients: Int?

    package init(configuration: Configuration, source: ConfigurationSource, logLevels: LogLevelSwitch, logger: Logger) {
        self.configuration = configuration; self.source = source; self.logLevels = logLevels; self.logger = logger
    }

    package func run() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        // Every stand, the API's connections and the timers on one event loop: an observation is then
        // read, steered on and answered in one wake-up of one thread, where a loop for the API and
        // another for the stands woke both for it (its request, the hop to the stand, the reply's hop
        // back). The price: a flood of requests shares the thread with the stands' FEEDBACK → VELOCITY
        // step, one 16 KiB read at a time (`APIServer`; BENCHMARKS.md, "Control-loop timing under API
        // abuse"). dockd's main makes the group one loop (`NIOSingletons.groupLoopCountSuggestion`).
        let loop = group.next()
        let clock = DaemonClock()
        let hub = EventHub()
        let linkChanges = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let liveness = Liveness()
        let heartbeat = configuration.heartbeatTimeoutMs
        // What new stands start with; a reload changes it for them and tells the running ones.
        // The state files are written on NIO's blocking pool: an fsync must not stall the loop.
        let stateWriter = StateWriter(loop: loop)
        let store = DefaultsStore(directory: DefaultsStore.directory(configured: configuration.stateDirectory), writer: stateWriter)
        if let problem = StateFile.directoryProblem(store.directory) {
            logger.warning("\(problem): presets and the stands' defaults cannot be saved")
        }
        let stored = store.load()
        if let problem = stored.problem { logger.error("the stands' stored defaults are not used: \(problem)") }
        var initial = configuration.engineSettings
        initial.defaults = stored.defaults
        let engineSettings = Shared(initial)
        let stands = StandRegistry { endpoint, driver in
            StandHost(endpoint: endpoint, driver: driver, settings: engineSettings.current, loop: loop, hub: hub, clock: clock,
                      liveness: liveness, logger: logger, linkStateChanged: { linkChanges.continuation.yield() })
        }
        // SIGTERM/SIGINT (blocked in every thread by dockd's main) are read here, on the stands' loop:
        // every stand is told to stop in the wake-up the signal makes, its STOP written in the same
        // call, whatever the other threads are doing; then the serving tasks end (`stopRequested`).
        // Through ServiceLifecycle's signal handling, the handler that stopped them ran 0.05-0.52 s
        // after the signal in the VM. A second signal changes nothing: the stop is under way, bounded.
        let (stopRequested, requestStop) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let signals = try await TerminationSignals.read(on: loop) { name, first in
            guard first else {
                logger.notice("\(name) again: dockd is stopping already")
                return
            }
            stands.stopMotors()
            logger.info("\(name): the stands are told to stop their motors")
            requestStop.yield()
        }
        for device in configuration.devices { attach(device, to: stands, heartbeat: heartbeat) }
        let hotplug = configuration.hotplug
        let matcher = Hotplug.Matcher(serialPattern: hotplug.serialPattern)
        if hotplug.enabled {
            for event in Hotplug.present(matcher) {
                logger.info("stand present", metadata: ["device": "\(event.devnode)", "serial": "\(event.serial ?? "?")"])
                attach(event, baud: hotplug.baud, to: stands, heartbeat: heartbeat)
            }
        }
        let presetStore = PresetStore(directory: store.directory, writer: stateWriter)
        if let problem = presetStore.problem { logger.error("the stored presets are not used: \(problem)") }
        let api = APIMethods(stands: stands, hub: hub, clock: clock, heartbeatTimeoutMs: heartbeat, engineSettings: engineSettings,
                             defaultsStore: store, presets: PresetMethods(stands: stands, store: presetStore),
                             pans: PanMethods(stands: stands, store: presetStore), loop: loop, logger: logger)
        let server = APIServer(api: api, hub: hub, logger: logger, maxClients: maxClients.map { APIServer.clamp($0, openFileLimit: FileLimit.raise()) } ?? APIServer.defaultMaxClients())
        let listener: APIListener = Systemd.inheritedSocket().map { .inherited($0) }
            ?? .path(configuration.socketPath, mode: configuration.socketMode, group: configuration.socketGroup)

        // A signal ends the serving tasks once the stands are told to stop; the stand sessions live
        // outside them, so they are still connected to confirm their stop. (Stopped only once the
        // tasks had ended, a camera in the VM got its stop 0.35-0.55 s later.) A task that fails (the
        // API socket cannot be served) ends dockd too.
        var failure: (any Error)?
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { for await _ in stopRequested { return } }
                tasks.addTask {
                    try await server.serve(listener: listener, loop: loop) {
                        logger.info("serving the API", metadata: ["socket": "\(configuration.socketPath)", "stands": "\(configuration.devices.count)"])
                        // What the stands are now: one may have connected before the socket was bound (on a
                        // busy machine it did, and this READY's STATUS then hid it until the next change).
                        Systemd.ready(status: connectionStatus(stands))
                        StartupPages.release()
                    }
                }
                tasks.addTask { await reportStatus(stands: stands, changes: linkChanges.stream) }
                if let interval = Systemd.watchdogInterval {
                    tasks.addTask { await feedWatchdog(every: interval, liveness: liveness, group: group, clock: clock) }
                }
                if let seconds = stallOnSignal {
                    tasks.addTask { await stallOnUser2(stands: stands, seconds: seconds) }
                }
                let hotplugNow = Shared(hotplug)
                let (hotplugEnabled, enableHotplug) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
                let reloader = Reloader(running: configuration, source: source, stands: stands, engineSettings: engineSettings,
                                        hotplug: hotplugNow, logLevels: logLevels, logger: logger,
                                        attach: { attach($0, to: stands, heartbeat: heartbeat) },
                                        hotplugEnabled: { enableHotplug.yield() })
                tasks.addTask { await reloader.reloadOnHangup() }
                tasks.addTask { await followHotplug(hotplugNow, enabled: hotplugEnabled, stands: stands, heartbeat: heartbeat) }
                do { try await tasks.next() } catch is CancellationError {}  // the group cancelled: go on to stop the stands
                tasks.cancelAll()
            }
        } catch {
            failure = error
        }
        Systemd.stopping()
        logger.info("stopping: motors stop, stands are told")
        await stands.shutdown()
        try? await signals.close()
        // A socket dockd could not serve is not its own to remove: another dockd's live one, a file.
        if let failure { throw failure }
        if case .path(let path, _, _) = listener { unlinkSocket(path) }
    }

    /// WATCHDOG=1 while every watched part runs (each connected stand's control loop, each event
    /// loop; see `Liveness`). When a part stalls, pings stop and the log names it; systemd then
    /// restarts dockd, and the stands, no longer hearing from it, stop their motors on their own
    /// heartbeat timeout. This task awaits no stand session, which a stall would block.
    private func feedWatchdog(every interval: Double, liveness: Liveness, group: MultiThreadedEventLoopGroup,
                              clock: DaemonClock) async {
        let loops = Array(group.makeIterator())
        var reported: Set<String> = []
        while !Task.isCancelled {
            for (i, loop) in loops.enumerated() { loop.execute { liveness.beat("event loop \(i)", at: clock.now()) } }
            try? await Task.sleep(for: .seconds(interval / 4))
            let stale = liveness.stale(at: clock.now(), limit: interval / 2)
            if stale.isEmpty {
                Systemd.notify("WATCHDOG=1")
                if !reported.isEmpty { logger.notice("every loop runs again: watchdog pings resumed") }
                reported = []
            } else {
                // Each part that stalls is named once, as it is found (a stalled event loop stops
                // the stand loops on it too, found a tick later).
                let fresh = stale.filter { !reported.contains($0.part) }
                guard !fresh.isEmpty else { continue }
                reported.formUnion(fresh.map(\.part))
                let parts = fresh.map { "\($0.part) has not run for \(Int($0.age * 1000)) ms" }
                logger.critical("stalled, not pinging the watchdog: \(parts.joined(separator: "; "))")
            }
        }
    }

    /// STATUS= lines for `systemctl status`, when a stand's link changes state (no timer: an idle
    /// daemon does not wake up).
    private func reportStatus(stands: StandRegistry, changes: AsyncStream<Void>) async {
        var lastStatus = ""
        for await _ in changes {
            let status = connectionStatus(stands)
            if status != lastStatus { Systemd.status(status); lastStatus = status }
        }
    }

    /// systemd's STATUS= line: how many stands are connected.
    private func connectionStatus(_ stands: StandRegistry) -> String {
        "\(stands.all.count { $0.linkState == .connected }) stand(s) connected"
    }

    /// Fault injection for the watchdog's test (`--debug-stall-on-sigusr2`): SIGUSR2 blocks every
    /// stand session's actor for `seconds`, as a deadlock or a runaway computation would.
    private func stallOnUser2(stands: StandRegistry, seconds: Double) async {
        for await _ in await UnixSignalsSequence(trapping: .sigusr2) {
            logger.warning("SIGUSR2: stalling every stand's control loop for \(seconds) s (--debug-stall-on-sigusr2)")
            for s in stands.all { s.stallForTesting(seconds: seconds) }
        }
    }

    /// A configured device with its driver; a driver that cannot be built is reported, the others run.
    private func attach(_ device: Configuration.Device, to stands: StandRegistry, heartbeat: UInt16) {
        do {
            let driver = try DriverTable.definition(device.driver).make(device.options, heartbeatTimeoutMs: heartbeat)
            if !stands.add(endpoint: device.endpoint, driver: driver) {
                logger.error("device \(device.endpoint) not attached: a stand on its device is attached already")
            }
        } catch {
            logger.error("device \(device.endpoint) not attached: \(error)")
        }
    }

    /// A device udev announced, with its driver's defaults.
    private func attach(_ event: Hotplug.Event, baud: Int, to stands: StandRegistry, heartbeat: UInt16) {
        do {
            let definition = try DriverTable.definition(event.driver ?? "")
            let driver = try definition.make([:], heartbeatTimeoutMs: heartbeat)
            let endpoint: StandEndpoint = definition.links.contains(.video) ? .video(path: event.devnode) : .serial(path: event.devnode, baud: baud)
            if !stands.add(endpoint: endpoint, driver: driver, releasedOnUnplug: true) {
                logger.info("hotplugged \(event.devnode) left to the stand attached on it already")
            }
        } catch {
            logger.error("hotplugged \(event.devnode) not attached: \(error)")
        }
    }

    /// udev add → attach, remove → stop and release: hotplugged stands come and go with their cables
    /// (configured and client-attached ones stay, and reconnect at once when their device is back). The
    /// settings are read at each event (a reload may change them); the monitor runs from the first
    /// time hotplug is enabled.
    private func followHotplug(_ settings: Shared<Configuration.HotplugSettings>, enabled: AsyncStream<Void>, stands: StandRegistry,
                               heartbeat: UInt16) async {
        if !settings.current.enabled {
            for await _ in enabled where settings.current.enabled { break }
            if Task.isCancelled { return }
            // Turned on by a reload: the stands plugged in meanwhile are there already.
            let now = settings.current
            for event in Hotplug.present(Hotplug.Matcher(serialPattern: now.serialPattern)) {
                attach(event, baud: now.baud, to: stands, heartbeat: heartbeat)
            }
        }
        // The serial pattern is the monitor's from its start (a change needs a restart).
        for await event in Hotplug.changes(Hotplug.Matcher(serialPattern: settings.current.serialPattern)) {
            let now = settings.current
            guard now.enabled || event.action == .remove else { continue }
            switch event.action {
            case .add:
                // A stand kept on this node (configured, or attached by a client) reconnects now;
                // another device is attached if some driver's hotplug match takes it.
                if stands.deviceReturned(event.devnode) {
                    logger.info("hotplug add: a kept stand's device is back", metadata: ["device": "\(event.devnode)"])
                } else if event.driver != nil {
                    logger.info("hotplug add", metadata: ["device": "\(event.devnode)", "serial": "\(event.serial ?? "?")"])
                    attach(event, baud: now.baud, to: stands, heartbeat: heartbeat)
                }
            case .remove:
                if await stands.unplugged(deviceNode: event.devnode) {
                    logger.info("hotplug remove: released", metadata: ["device": "\(event.devnode)"])
                }
            }
        }
    }
}
