extension FeetechServoDriver {
    /// Two Feetech STS/SMS bus servos as a pan/tilt head. No hotplug: they sit behind generic
    /// USB-serial bus adapters, which udev cannot tell from any other serial adapter.
    static let definition = DriverDefinition(
        name: "feetech",
        summary: "pan/tilt heads of two Feetech STS/SMS serial bus servos (STS3215) on one half-duplex bus",
        links: [.serial],
        defaultBaud: 1_000_000,
        // Each option's whole range is valid with the others at their defaults (test_configuration
        // tries each alone at its smallest whole value): the ends lie either side of the centre.
        options: [
            DriverOption("pan_id", .integer(0...253), default: .integer(1), "the pan servo's id on the bus"),
            DriverOption("tilt_id", .integer(0...253), default: .integer(2), "the tilt servo's id on the bus"),
            DriverOption("pan_direction", .choice(Direction.allCases.map(\.rawValue)), default: .text(Direction.normal.rawValue),
                         "normal: the pan servo's steps grow as the head turns left (seen from above); reversed: as it turns right"),
            DriverOption("tilt_direction", .choice(Direction.allCases.map(\.rawValue)), default: .text(Direction.normal.rawValue),
                         "normal: the tilt servo's steps grow as the head tilts up; reversed: as it tilts down"),
            DriverOption("pan_centre", .integer(0...65535), default: .integer(2048), "the pan servo's step where the head looks ahead"),
            DriverOption("tilt_centre", .integer(0...65535), default: .integer(2048), "the tilt servo's step where the head looks level"),
            DriverOption("counts_per_rev", .integer(256...65536), default: .integer(4096), "steps a turn (STS3215 and most STS/SMS: 4096)"),
            DriverOption("max_speed", .number(0.05...20), default: .number(2), "the fastest rate dockd asks of either servo, rad/s"),
            DriverOption("pan_min", .number(-3.2...0), default: .number(-3), "the pan's right end, rad (negative: yaw grows to the left)"),
            DriverOption("pan_max", .number(0...3.2), default: .number(3), "the pan's left end, rad"),
            DriverOption("tilt_min", .number(-3.2...0), default: .number(-1.5), "the tilt's lower end, rad"),
            DriverOption("tilt_max", .number(0...3.2), default: .number(1.5), "the tilt's upper end, rad"),
            DriverOption("poll_hz", .number(10...200), default: .number(50),
                         "position reads a second, both servos together (at least 10: each servo read within the 0.3 s its goal leads it)"),
        ],
        capabilities: [.rates, .measuredPosition],
        make: { s in
            func servo(_ axis: String, id: Int) throws(DriverFailure) -> Servo {
                let low = s.number("\(axis)_min"), high = s.number("\(axis)_max")
                guard low < high else { throw DriverFailure("\(axis)_min (\(low)) must be below \(axis)_max (\(high))") }
                return Servo(id: UInt8(id), sign: s.text("\(axis)_direction") == Direction.reversed.rawValue ? -1 : 1,
                             centre: s.integer("\(axis)_centre"), range: low...high)
            }
            let pan = try servo("pan", id: s.integer("pan_id")), tilt = try servo("tilt", id: s.integer("tilt_id"))
            guard pan.id != tilt.id else { throw DriverFailure("pan_id and tilt_id are both \(pan.id): each servo needs its own id") }
            return FeetechServoDriver(settings: Settings(pan: pan, tilt: tilt, countsPerRev: s.integer("counts_per_rev"),
                                                         maxSpeed: s.number("max_speed"), pollHz: s.number("poll_hz")))
        })

    /// Which way a servo's steps grow against dockd's axis.
    enum Direction: String, CaseIterable, Sendable { case normal, reversed }
}
