import DockDrivers

/// The driver for each device, by the name the configuration gives (`driver = "…"`). The names are
/// here, apart from making the drivers (Drivers+Make.swift), so that the configuration parser
/// builds without the session (Fuzz/ConfigFuzz.swift compiles it alone).
enum Drivers {
    struct Unknown: Error, CustomStringConvertible {
        let description: String
    }

    static let names = ["native"] + DriverFactory.names
}
