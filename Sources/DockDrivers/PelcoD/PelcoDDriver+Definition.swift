extension PelcoDDriver {
    /// Pelco-D pan/tilt heads and PTZ cameras on an RS-485 bus. No hotplug: they sit behind generic
    /// USB-RS485 adapters, which udev cannot tell from any other serial adapter.
    static let definition = DriverDefinition(
        name: "pelco-d",
        summary: "Pelco-D pan/tilt heads and PTZ cameras on RS-485 (CCTV heads, cheap pan/tilt units)",
        links: [.serial],
        defaultBaud: 2400,
        options: [
            DriverOption("address", .integer(1...255), default: .integer(1), "the unit's Pelco-D address on its RS-485 bus (its DIP switches or menu)"),
            DriverOption("position_queries", .choice(PositionQueries.allCases.map(\.rawValue)), default: .text(PositionQueries.auto.rawValue),
                         "ask the unit where it points (extended queries 0x51/0x53): auto (if it answers at connect), on (required), off (the pose is estimated)"),
            DriverOption("max_speed", .number(0.01...10), default: .number(0.6),
                         "the unit's rate at speed 0x3F, rad/s (Pelco-D names none; the default is an estimate: measure yours)"),
            DriverOption("poll_hz", .number(2...50), default: .number(10),
                         "feedback reports a second, and position queries where the unit answers them (at least 2: a stand silent for 1 s is taken for lost)"),
        ],
        capabilities: [.rates],
        make: { s in
            PelcoDDriver(settings: Settings(address: UInt8(s.integer("address")), queries: PositionQueries(rawValue: s.text("position_queries") ?? "") ?? .auto,
                                            maxSpeed: s.number("max_speed"), pollHz: s.number("poll_hz")))
        })
}
