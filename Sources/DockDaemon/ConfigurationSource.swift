import DockDrivers
import DockIO

/// Where the configuration comes from: the file (a missing default file means the defaults; a
/// file named on the command line must be there, so a typo in its path is not missed) with the
/// command line's settings over it — at start and at every SIGHUP.
package struct ConfigurationSource: Sendable {
    let path: String
    let mustExist: Bool
    let overrides: ConfigurationOverrides

    package init(path: String, mustExist: Bool, overrides: ConfigurationOverrides) {
        self.path = path; self.mustExist = mustExist; self.overrides = overrides
    }

    package func load() throws(Configuration.Invalid) -> Configuration {
        let file = FileManagerLite.exists(path) || mustExist ? try Configuration.load(path: path) : Configuration()
        return overrides.applied(to: file)
    }
}

/// The command line's settings over the file's. A reload (SIGHUP) applies them again to the file it
/// reads, so that `--device` stands and `--socket` stay what the command line said.
package struct ConfigurationOverrides: Sendable, Equatable {
    var socket: String?
    /// nil: the file's; .some(nil): no group (`--socket-group ""`).
    var socketGroup: String??
    var socketMode: UInt16?
    /// Under systemd, $STATE_DIRECTORY wins over this as over the file (`DefaultsStore.directory`).
    var stateDirectory: String?
    var logLevel: String?
    var noHotplug = false
    var devices: [StandEndpoint] = []

    package init(socket: String?, socketGroup: String??, socketMode: UInt16?, stateDirectory: String?, logLevel: String?,
                 noHotplug: Bool, devices: [StandEndpoint]) {
        self.socket = socket; self.socketGroup = socketGroup; self.socketMode = socketMode; self.stateDirectory = stateDirectory
        self.logLevel = logLevel
        self.noHotplug = noHotplug; self.devices = devices
    }

    func applied(to file: Configuration) -> Configuration {
        var c = file
        if let socket { c.socketPath = socket }
        if let socketGroup { c.socketGroup = socketGroup }
        if let socketMode { c.socketMode = socketMode }
        if let stateDirectory { c.stateDirectory = stateDirectory }
        if let logLevel { c.logLevel = logLevel }
        if noHotplug { c.hotplug.enabled = false }
        c.devices += devices.map { endpoint in
            Configuration.Device(endpoint: endpoint, driver: DriverTable.defaultDriver(for: endpoint.linkKind).name, options: endpoint.driverOptions)
        }
        return c
    }
}
