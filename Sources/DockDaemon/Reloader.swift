import DockTracking
import Logging
import StandEngine
import Synchronization
import UnixSignals

/// A value several tasks read and a reload replaces.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    var current: Value { value.withLock { $0 } }
    func set(_ new: Value) { value.withLock { $0 = new } }
    /// Changes part of the value in one step: `defaults.set` (on the blocking pool) and a reload (on
    /// the signal task) change different parts of the same settings, and a read then a `set` from
    /// each could put back what the other had just changed.
    @discardableResult
    func update<Result>(_ change: (inout Value) -> Result) -> Result { value.withLock { change(&$0) } }
}

extension Configuration {
    /// What each stand's engine takes from the configuration.
    var engineSettings: EngineSettings {
        var settings = EngineSettings()
        settings.camera = cameraModel
        settings.tracking.control.lostBehaviour = tracking.lostBehaviour
        settings.tracking.control.lostHold = tracking.lostHold
        settings.buttonSweep = buttonSweep?.buttonSweep
        return settings
    }

    var cameraModel: CameraModel {
        CameraModel(horizontalFieldOfView: camera.horizontalFOVDegrees * .pi / 180, verticalFieldOfView: camera.verticalFOVDegrees * .pi / 180)
    }
}

/// SIGHUP (`systemctl reload dockd`): the configuration is read again, with the command line's
/// settings over it as at start. A bad file is reported and the running configuration stays. A good
/// one is applied as far as a running daemon can: the log level, the camera and the lost-subject
/// behaviour (running stands are told, new ones start with them), hotplug on/off and its baud rate,
/// and the stands — added ones attached, dropped ones released, one whose driver or options changed
/// attached again. What needs a restart (the socket, the heartbeat timeout, the hotplug pattern) is
/// named in the log and keeps its running value. Stands given with `--device` stay: they are in
/// every load.
struct Reloader: Sendable {
    let running: Configuration
    let source: ConfigurationSource
    let stands: StandRegistry
    let engineSettings: Shared<EngineSettings>
    let hotplug: Shared<Configuration.HotplugSettings>
    let logLevels: LogLevelSwitch
    let logger: Logger
    let attach: @Sendable (Configuration.Device) -> Void
    /// Hotplug was turned on (the monitor starts if it was not running).
    let hotplugEnabled: @Sendable () -> Void

    func reloadOnHangup() async {
        var current = running
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            Systemd.reloading()
            do {
                current = await apply(try source.load(), over: current)
            } catch {
                logger.error("configuration not reloaded, the running one stays: \(error.description)")
            }
            Systemd.notify("READY=1")
        }
    }

    /// Applies what `fresh` changes; returns the configuration now in force.
    func apply(_ fresh: Configuration, over current: Configuration) async -> Configuration {
        let changes = current.changes(to: fresh)
        guard !changes.isEmpty else {
            logger.notice("configuration reloaded: nothing changed")
            return current
        }
        var inForce = fresh
        for change in changes where change.needsRestart {
            logger.warning("\(change.key) changed (\(change.before) → \(change.after)): it takes a restart; the running value stays")
        }
        inForce.socketPath = current.socketPath
        inForce.socketGroup = current.socketGroup
        inForce.socketMode = current.socketMode
        inForce.heartbeatTimeoutMs = current.heartbeatTimeoutMs
        inForce.stateDirectory = current.stateDirectory
        inForce.hotplug.serialPattern = current.hotplug.serialPattern
        inForce.buttonSweep = current.buttonSweep

        if let level = Logger.Level(rawValue: inForce.logLevel) { logLevels.set(level) }
        hotplug.set(inForce.hotplug)
        if inForce.hotplug.enabled && !current.hotplug.enabled { hotplugEnabled() }
        if inForce.engineSettings.camera != current.engineSettings.camera || inForce.tracking != current.tracking {
            let settings = engineSettings.update { settings in
                settings.camera = inForce.cameraModel
                settings.tracking.control.lostBehaviour = inForce.tracking.lostBehaviour
                settings.tracking.control.lostHold = inForce.tracking.lostHold
                return settings
            }
            for stand in stands.all {
                await stand.configure(camera: settings.camera, lostBehaviour: inForce.tracking.lostBehaviour, lostHold: inForce.tracking.lostHold)
            }
        }
        let before = Dictionary(current.devices.map { ($0.endpoint.description, $0) }, uniquingKeysWith: { a, _ in a })
        let after = Dictionary(inForce.devices.map { ($0.endpoint.description, $0) }, uniquingKeysWith: { a, _ in a })
        for device in current.devices where after[device.endpoint.description] != device {
            await stands.remove(endpoint: device.endpoint, because: "the stand was dropped from the configuration")
        }
        for device in inForce.devices where before[device.endpoint.description] != device {
            attach(device)
        }
        let applied = changes.filter { !$0.needsRestart }.map(\.description)
        logger.notice("configuration reloaded: \(applied.isEmpty ? "nothing applied" : applied.joined(separator: "; "))")
        return inForce
    }
}
