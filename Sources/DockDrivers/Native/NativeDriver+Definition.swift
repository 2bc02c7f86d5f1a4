extension NativeDriver {
    /// dockd's own protocol (protocol/PROTOCOL.md): the stand says what it has in CAPABILITIES.
    public static let definition = DriverDefinition(
        name: "native",
        summary: "The dockd stand protocol (protocol/PROTOCOL.md) over USB-CDC, a UART, Bluetooth RFCOMM or a socket",
        links: [.serial, .unix, .bluetooth, .udp, .tcp],
        defaultBaud: 115_200,
        options: [],
        // Our USB ids (pid.codes 1209:d0c0) and what udev/70-dockd.rules marks; never generic adapters.
        hotplug: HotplugMatch(subsystem: "tty", marker: "DOCKD_STAND", usbIDs: [(vendor: "1209", product: "d0c0")]),
        capabilities: [.rates, .measuredPosition, .continuousAxes, .buttons, .batteries, .led, .imu, .declaredByDevice],
        make: { settings in NativeDriver(heartbeatTimeoutMs: settings.heartbeatTimeoutMs) })
}
