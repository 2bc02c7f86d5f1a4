import DockDrivers

// No NIO here: parsing where a stand is reached is pure, so the configuration parser (and its
// fuzz target, Fuzz/ConfigFuzz.swift) can be built without the event loop.

/// Where a stand is reached: serial ttys (USB-CDC, UART, a simulator's pty), Unix sockets
/// (dock-sim --unix), Bluetooth RFCOMM, and UDP/TCP for network stands (VISCA-over-IP, MAVLink).
public enum StandEndpoint: Sendable, Equatable, CustomStringConvertible {
    case serial(path: String, baud: Int)
    case unix(path: String)
    /// RFCOMM to a paired stand; channel nil = look it up with SDP.
    case bluetooth(address: String, channel: UInt8?)
    case udp(host: String, port: Int)
    case tcp(host: String, port: Int)
    /// A V4L2 device's controls (a PTZ webcam): `video:/dev/video0` or a /dev/v4l/by-id/ path.
    case video(path: String)
    /// An ONVIF camera's services over HTTP: `onvif://[user@]host[:port]`.
    case onvif(ONVIFAddress)

    public var description: String {
        switch self {
        case .serial(let path, let baud): "serial:\(path)@\(baud)"
        case .unix(let path): "unix:\(path)"
        case .bluetooth(let address, let channel): "rfcomm:\(address)" + (channel.map { "/\($0)" } ?? "")
        case .udp(let host, let port): "udp:\(host.contains(":") ? "[\(host)]" : host):\(port)"
        case .tcp(let host, let port): "tcp:\(host.contains(":") ? "[\(host)]" : host):\(port)"
        case .video(let path): "video:\(path)"
        case .onvif(let address): "\(address)"
        }
    }

    /// Driver options the address itself gives: an `onvif://…/profile`'s profile.
    public var driverOptions: [String: DriverValue] {
        if case .onvif(let address) = self, let profile = address.profile { return ["profile": .text(profile)] }
        return [:]
    }

    /// The kind of link it is, as drivers declare the links they run over.
    public var linkKind: LinkKind {
        switch self {
        case .serial: .serial
        case .unix: .unix
        case .bluetooth: .bluetooth
        case .udp: .udp
        case .tcp: .tcp
        case .video: .video
        case .onvif: .onvif
        }
    }

    /// The device node udev announces for it (what an unplug names), nil for a socket or a radio.
    public var deviceNode: String? {
        switch self {
        case .serial(let path, _), .video(let path): path
        case .unix, .bluetooth, .udp, .tcp, .onvif: nil
        }
    }

    /// `unix:/run/x.sock`, `rfcomm:AA:BB:CC:DD:EE:FF[/channel]`, `udp:HOST:PORT`, `tcp:HOST:PORT`, `video:/dev/videoN`,
    /// `onvif://[user@]host[:port][/profile]`,
    /// or a device path with an optional `@baud`.
    public init(parsing text: String, defaultBaud: Int = 115_200) {
        if text.hasPrefix("udp:"), let (host, port) = Self.hostPort(text.dropFirst(4)) {
            self = .udp(host: host, port: port)
        } else if text.hasPrefix("tcp:"), let (host, port) = Self.hostPort(text.dropFirst(4)) {
            self = .tcp(host: host, port: port)
        } else if text.hasPrefix("onvif://"), let address = ONVIFAddress(parsing: text.dropFirst(8)) {
            self = .onvif(address)
        } else if text.hasPrefix("video:") {
            self = .video(path: String(text.dropFirst(6)))
        } else if text.hasPrefix("unix:") {
            self = .unix(path: String(text.dropFirst(5)))
        } else if text.hasPrefix("rfcomm:") {
            let rest = text.dropFirst(7).split(separator: "/", maxSplits: 1)
            self = .bluetooth(address: String(rest.first ?? ""), channel: rest.count > 1 ? UInt8(rest[1]) : nil)
        } else if let at = text.lastIndex(of: "@"), let baud = Int(text[text.index(after: at)...]) {
            self = .serial(path: String(text[..<at]), baud: baud)
        } else {
            self = .serial(path: text, baud: defaultBaud)
        }
    }

    /// Why dockd cannot try it as a client wrote it (`text`, what `init(parsing:)` read), nil when
    /// it can: a relative path, a baud the serial port does not take, a malformed Bluetooth
    /// address or channel, a host that is no host name.
    public func problem(written text: String) -> String? {
        switch self {
        case .serial(let path, let baud):
            guard path.hasPrefix("/") else { return "a tty is given by its absolute path (or unix:, rfcomm:, udp:, tcp:)" }
            guard SerialPort.isSupported(baud: baud) else { return "\(baud) is not a supported baud rate" }
        case .unix(let path):
            guard path.hasPrefix("/") else { return "unix: takes an absolute path" }
        case .bluetooth(let address, let channel):
            let parts = address.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
                return "rfcomm: takes a Bluetooth address AA:BB:CC:DD:EE:FF"
            }
            if text.split(separator: "/", maxSplits: 1).count > 1 {
                guard let channel, (1...30).contains(channel) else { return "the RFCOMM channel is 1…30" }
            }
        case .udp(let host, _), .tcp(let host, _):
            guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" }) else { return "the host is not a host name or address" }
        case .video(let path):
            guard path.hasPrefix("/") else { return "video: takes an absolute path" }
        case .onvif:
            break
        }
        return nil
    }

    /// `HOST:PORT` or `[IPv6]:PORT`, the port 1…65535 (getaddrinfo would silently take 99999 as 34463).
    private static func hostPort(_ text: Substring) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65535).contains(port) else { return nil }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return host.isEmpty ? nil : (String(host), port)
    }
}
