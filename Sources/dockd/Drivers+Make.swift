import DockDrivers

extension Drivers {
    static func native(_ settings: SessionSettings) -> any StandDriver {
        NativeDriver(heartbeatTimeoutMs: settings.heartbeatTimeoutMs)
    }

    static func make(_ name: String, options: [String: String], settings: SessionSettings) throws -> any StandDriver {
        switch name {
        case "native":
            guard options.isEmpty else { throw Unknown(description: "the native driver takes no options (\(options.keys.sorted().joined(separator: ", ")))") }
            return native(settings)
        case _ where DriverFactory.names.contains(name):
            do {
                return try DriverFactory.make(name: name, options: options)
            } catch {
                throw Unknown(description: "\(name): \(error)")
            }
        default:
            throw Unknown(description: "driver '\(name)' is not one of \(names.joined(separator: ", "))")
        }
    }
}
