extension MAVLinkGimbalDriver {
    /// A MAVLink gimbal (Gimbal Protocol v2), as drones and camera gimbals speak it.
    public static let definition = DriverDefinition(
        name: "mavlink",
        summary: "MAVLink 2 gimbals (Gimbal Protocol v2) on a UART, UDP or TCP",
        links: [.serial, .udp, .tcp],
        defaultBaud: 115_200,
        options: [
            DriverOption("system_id", .integer(1...255), default: .integer(1), "the MAVLink system id dockd uses"),
            DriverOption("component_id", .integer(1...255), default: .integer(191), "the component id dockd uses (191: onboard computer)"),
            DriverOption("target_component", .integer(1...255), default: .integer(154), "the gimbal's component id (154: MAV_COMP_ID_GIMBAL)"),
            DriverOption("feedback_hz", .number(1...500), default: .number(50), "the attitude rate asked of the gimbal"),
            DriverOption("max_speed", .number(0.01...20), default: .number(2), "the gimbal's top rate, rad/s"),
            DriverOption("name", .text, default: nil, "the stand's id in the API (default: from the gimbal's information)"),
        ],
        capabilities: [.angles, .rates, .measuredPosition],
        make: { s in
            var settings = Settings()
            settings.systemID = UInt8(s.integer("system_id"))
            settings.componentID = UInt8(s.integer("component_id"))
            settings.targetComponent = UInt8(s.integer("target_component"))
            settings.feedbackHz = s.number("feedback_hz")
            settings.maxSpeed = Float(s.number("max_speed"))
            settings.name = s.text("name")
            return MAVLinkGimbalDriver(settings: settings)
        })
}
