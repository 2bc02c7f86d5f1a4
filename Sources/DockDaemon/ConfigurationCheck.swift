import DockDrivers
import DockIO
#if canImport(Glibc)
import Glibc
#endif

/// `dockd --check-config`: what the daemon would run with, checked as far as can be without
/// opening a device: every driver is built (a VISCA profile that is not found fails here, not at
/// start), and a network stand that dockd.service's address filter would block is pointed out.
package enum ConfigurationCheck {
    package struct Report {
        package var ok: Bool
        package var text: String
    }

    /// The addresses dockd.service lets dockd reach (its IPAddressAllow=): loopback, link-local and
    /// the private ranges, where LAN cameras and gimbals are. Others need a drop-in (dockd.conf(5)).
    static let allowedNetworks: [(prefix: [UInt8], bits: Int)] = [
        ([127, 0, 0, 0], 8), ([169, 254, 0, 0], 16), ([10, 0, 0, 0], 8), ([172, 16, 0, 0], 12), ([192, 168, 0, 0], 16),
        (ipv6([0, 0, 0, 0, 0, 0, 0, 1]), 128), (ipv6([0xfe80]), 64), (ipv6([0xfc00]), 7),
    ]

    private static func ipv6(_ groups: [UInt16]) -> [UInt8] {
        let padded = groups + Array(repeating: 0, count: 8 - groups.count)
        return padded.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }

    package static func report(_ configuration: Configuration, path: String?) -> Report {
        var ok = true
        var lines: [String] = []
        for (i, device) in configuration.devices.enumerated() {
            var line = "device[\(i)] \(device.endpoint) (\(device.driver))"
            do {
                _ = try DriverTable.definition(device.driver).make(device.options, heartbeatTimeoutMs: configuration.heartbeatTimeoutMs)
            } catch {
                ok = false
                line += ": \(error)"
            }
            switch device.endpoint {
            case .udp(let host, _), .tcp(let host, _):
                if !isAllowed(host) {
                    line += ": under systemd, \(host) is outside dockd.service's IPAddressAllow= (loopback, link-local,"
                        + " private ranges): allow it with a drop-in, see dockd.conf(5) NETWORK"
                }
            default: break
            }
            lines.append(line)
        }
        lines.append("API socket \(configuration.socketPath) (group \(configuration.socketGroup ?? "none"), mode 0\(String(configuration.socketMode, radix: 8))), log level \(configuration.logLevel), hotplug \(configuration.hotplug.enabled ? "on" : "off")")
        let file = path ?? "no configuration file (the defaults)"
        lines.insert(ok ? "\(file): good" : "\(file): a device would not attach", at: 0)
        return Report(ok: ok, text: lines.joined(separator: "\n"))
    }

    /// A literal address inside `allowedNetworks`; a host name cannot be told before it is resolved.
    static func isAllowed(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        let bytes: [UInt8]
        if inet_pton(AF_INET, host, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, host, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return false
        }
        return allowedNetworks.contains { $0.prefix.count == bytes.count && matches(bytes, $0.prefix, bits: $0.bits) }
    }

    private static func matches(_ address: [UInt8], _ prefix: [UInt8], bits: Int) -> Bool {
        for bit in 0..<bits {
            let byte = bit / 8, mask = UInt8(0x80) >> UInt8(bit % 8)
            if address[byte] & mask != prefix[byte] & mask { return false }
        }
        return true
    }
}
