import DockIO
import Testing

/// Where a client says a stand is (`stands.attach`'s `device`): what each
/// kind of link takes, and why dockd refuses what it cannot try.
@Suite struct StandEndpointTests {
    @Test(arguments: ["/dev/ttyACM0", "/dev/ttyUSB0@9600", "unix:/run/dock-sim.sock", "rfcomm:00:1A:7D:DA:71:13",
                      "rfcomm:00:1A:7D:DA:71:13/3", "udp:192.168.0.90:52381", "tcp:[fe80::1]:5678", "video:/dev/video0",
                      "onvif://admin@10.0.0.1"])
    func whatIsTaken(_ text: String) {
        #expect(StandEndpoint(parsing: text).problem(written: text) == nil)
    }

    @Test(arguments: [
        ("ttyACM0", "a tty is given by its absolute path (or unix:, rfcomm:, udp:, tcp:)"),
        ("/dev/ttyACM0@12345", "12345 is not a supported baud rate"),
        ("unix:run/dock-sim.sock", "unix: takes an absolute path"),
        ("rfcomm:00:1A:7D:DA:71", "rfcomm: takes a Bluetooth address AA:BB:CC:DD:EE:FF"),
        ("rfcomm:00:1A:7D:DA:71:XY", "rfcomm: takes a Bluetooth address AA:BB:CC:DD:EE:FF"),
        ("rfcomm:00:1A:7D:DA:71:13/31", "the RFCOMM channel is 1…30"),
        ("rfcomm:00:1A:7D:DA:71:13/x", "the RFCOMM channel is 1…30"),
        ("udp:a b:52381", "the host is not a host name or address"),
        ("video:dev/video0", "video: takes an absolute path"),
    ])
    func whatIsRefusedAndWhy(_ text: String, _ why: String) {
        #expect(StandEndpoint(parsing: text).problem(written: text) == why)
    }
}
