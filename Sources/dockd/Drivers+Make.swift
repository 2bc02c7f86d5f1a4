import DockDrivers

extension Drivers {
    static func native(heartbeatTimeoutMs: UInt16) -> any StandDriver {
        NativeDriver(heartbeatTimeoutMs: heartbeatTimeoutMs)
    }

    static func make(_ name: String, options: [String: String], heartbeatTimeoutMs: UInt16) throws -> any StandDriver {
        switch name {
        case "native":
            guard options.isEmpty else { throw Unknown(description: "the native driver takes no options (\(options.keys.sorted().joined(separator: ", ")))") }
            return native(heartbeatTimeoutMs: heartbeatTimeoutMs)
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
