import DockDrivers

/// The driver for each device, by the name the configuration gives (`driver = "…"`).
enum Drivers {
    struct Unknown: Error, CustomStringConvertible {
        let description: String
    }

    static let names = ["native"]

    static func native(_ settings: SessionSettings) -> any StandDriver {
        NativeDriver(heartbeatTimeoutMs: settings.heartbeatTimeoutMs)
    }

    static func make(_ name: String, options: [String: String], settings: SessionSettings) throws -> any StandDriver {
        switch name {
        case "native": return native(settings)
        default: throw Unknown(description: "driver '\(name)' is not one of \(names.joined(separator: ", "))")
        }
    }
}
