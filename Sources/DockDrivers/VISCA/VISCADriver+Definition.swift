extension VISCADriver {
    /// Sony's VISCA PTZ cameras and the many that copy it (PTZOptics, Telycam, Bolin…), by profile.
    public static let definition = DriverDefinition(
        name: "visca",
        summary: "VISCA PTZ cameras (Sony, PTZOptics and compatibles) on RS-232/422, VISCA over IP, or raw VISCA on UDP or TCP",
        links: [.serial, .udp, .tcp],
        defaultBaud: 9600,
        options: [
            DriverOption("address", .integer(1...7), default: .integer(1), "the camera's VISCA address on its serial chain"),
            DriverOption("profile", .text, default: .text("generic-ptzoptics"),
                         "the camera model's profile: a name found in $DOCKD_VISCA_PROFILES, /etc/dockd/profiles/visca or the installed profiles (/usr/share/dockd/profiles/visca), or the path of a JSON file"),
            DriverOption("transport", .choice(Transport.allCases.map(\.configName)), default: .text(Transport.serial.configName),
                         "serial bytes, Sony's VISCA over IP (UDP, 8-byte header), raw VISCA in UDP datagrams, or raw VISCA on TCP"),
            DriverOption("poll_hz", .number(2...100), default: .number(20), "position inquiries a second (at least 2: a camera silent for 1 s is taken for lost)"),
            DriverOption("name", .text, default: nil, "the stand's id in the API (default visca-ADDRESS)"),
        ],
        capabilities: [.angles, .rates, .measuredPosition, .presets],
        make: { s in
            let transport = Transport.allCases.first { $0.configName == s.text("transport") } ?? .serial
            return VISCADriver(profile: try VISCAProfile.load(s.text("profile") ?? "generic-ptzoptics"), address: UInt8(s.integer("address")),
                               transport: transport, pollHz: s.number("poll_hz"), name: s.text("name"))
        })
}

extension VISCADriver.Transport: CaseIterable {
    public static let allCases: [Self] = [.serial, .ip, .raw, .tcp]

    /// Its name in dockd.conf's `transport`.
    public var configName: String {
        switch self {
        case .serial: "serial"
        case .ip: "ip"
        case .raw: "raw-udp"
        case .tcp: "raw-tcp"
        }
    }
}
