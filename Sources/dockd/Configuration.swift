import DockCore
import DockDrivers
import DockIO
import Foundation
import TOMLKit

/// /etc/dockd/dockd.conf, in TOML. Every key is optional; the defaults are what a packaged daemon
/// wants. A bad file is refused with the line (syntax) or the key (types), and on SIGHUP the old
/// configuration stays in force.
struct Configuration: Sendable, Equatable {
    var socketPath = "/run/dockd/dockd.sock"
    var socketGroup: String? = "dock"
    var socketMode: UInt16 = 0o660
    var logLevel = "info"
    var heartbeatTimeoutMs: UInt16 = 500
    var devices: [Device] = []
    var camera = Camera()
    var tracking = Tracking()
    var hotplug = HotplugSettings()

    /// Stands that udev announces are attached without configuration.
    struct HotplugSettings: Sendable, Equatable {
        var enabled = true
        var serialPattern: String?
        var baud = 115_200
    }

    struct Device: Sendable, Equatable {
        var endpoint: StandEndpoint
        var driver = "native"
        /// Driver settings as written (VISCA address and profile, MAVLink ids, …).
        var options: [String: String] = [:]
    }

    struct Camera: Sendable, Equatable {
        var horizontalFOVDegrees = 70.0
        var verticalFOVDegrees = 43.0
    }

    /// What the stand does once the tracked subjects are gone (held for as long as the tracker keeps
    /// their tracks, then `lostHold` seconds after the last target).
    struct Tracking: Sendable, Equatable {
        var lostBehaviour = TrackingControlConfiguration.tuned.lostBehaviour
        var lostHold = TrackingControlConfiguration.tuned.lostHold
    }

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    static func load(path: String) throws(Invalid) -> Configuration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw Invalid(description: "\(path): cannot read: \(error.localizedDescription)")
        }
        return try parse(text, source: path)
    }

    static func parse(_ text: String, source: String) throws(Invalid) -> Configuration {
        if let problem = TOMLPreflight.problem(in: text) {
            throw Invalid(description: "\(source):\(problem.line):\(problem.column): \(problem.what)")
        }
        let file: File
        do {
            file = try TOMLDecoder().decode(File.self, from: text)
        } catch let error as TOMLParseError {
            throw Invalid(description: "\(source):\(error.source.begin.line):\(error.source.begin.column): \(error.description)")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw Invalid(description: "\(source): \(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)")
        } catch let DecodingError.keyNotFound(key, context) {
            throw Invalid(description: "\(source): \((context.codingPath + [key]).map(\.stringValue).joined(separator: ".")) is required")
        } catch {
            throw Invalid(description: "\(source): \(error)")
        }
        return try file.resolved(source: source)
    }

    /// The file's shape, as written by people.
    private struct File: Decodable {
        var daemon: DaemonSection?
        var device: [DeviceSection]?
        var camera: CameraSection?
        var tracking: TrackingSection?
        var hotplug: HotplugSection?

        struct HotplugSection: Decodable {
            var enabled: Bool?
            var serial_pattern: String?
            var baud: Int?
        }

        struct DaemonSection: Decodable {
            var socket: String?
            var socket_group: String?
            var socket_mode: String?
            var log_level: String?
            var heartbeat_timeout_ms: Int?
        }
        struct DeviceSection: Decodable {
            var path: String?
            var unix: String?
            var bluetooth: String?
            var udp: String?
            var tcp: String?
            var channel: Int?
            var baud: Int?
            var driver: String?
            // Driver options (VISCA, MAVLink): passed to the driver as text, checked by it.
            var address: Int?
            var profile: String?
            var transport: String?
            var poll_hz: Double?
            var name: String?
            var system_id: Int?
            var component_id: Int?
            var target_component: Int?
            var feedback_hz: Double?
            var max_speed: Double?

            var options: [String: String] {
                var o: [String: String] = [:]
                func put(_ key: String, _ value: (any CustomStringConvertible)?) { if let value { o[key] = value.description } }
                put("address", address); put("profile", profile); put("transport", transport); put("poll_hz", poll_hz)
                put("name", name); put("system_id", system_id); put("component_id", component_id)
                put("target_component", target_component); put("feedback_hz", feedback_hz); put("max_speed", max_speed)
                return o
            }
        }
        struct CameraSection: Decodable {
            var horizontal_fov_deg: Double?
            var vertical_fov_deg: Double?
        }

        struct TrackingSection: Decodable {
            var lost_behaviour: String?
            var lost_hold_s: Double?
        }

        func resolved(source: String) throws(Invalid) -> Configuration {
            var c = Configuration()
            if let d = daemon {
                if let v = d.socket { c.socketPath = v }
                if let v = d.socket_group { c.socketGroup = v.isEmpty ? nil : v }
                if let v = d.socket_mode {
                    guard let mode = UInt16(v, radix: 8), mode <= 0o777 else { throw Invalid(description: "\(source): daemon.socket_mode must be octal like \"0660\"") }
                    c.socketMode = mode
                }
                if let v = d.log_level {
                    guard ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(v) else {
                        throw Invalid(description: "\(source): daemon.log_level '\(v)' is not one of trace, debug, info, notice, warning, error, critical")
                    }
                    c.logLevel = v
                }
                if let v = d.heartbeat_timeout_ms {
                    guard (100...5000).contains(v) else { throw Invalid(description: "\(source): daemon.heartbeat_timeout_ms must be 100…5000") }
                    c.heartbeatTimeoutMs = UInt16(v)
                }
            }
            for (i, d) in (device ?? []).enumerated() {
                let name = "\(source): device[\(i)]"
                let driver = d.driver ?? "native"
                guard Drivers.names.contains(driver) else {
                    throw Invalid(description: "\(name).driver '\(driver)' is not one of \(Drivers.names.joined(separator: ", "))")
                }
                // Each protocol's usual serial rate: VISCA 9600, the native protocol and MAVLink 115200.
                let baud = d.baud ?? DriverFactory.defaultBaud(for: driver) ?? 115_200
                guard SerialPort.isSupported(baud: baud) else { throw Invalid(description: "\(name).baud \(baud) is not a supported rate") }
                if let channel = d.channel, !(1...30).contains(channel) {
                    throw Invalid(description: "\(name).channel must be an RFCOMM channel 1…30")
                }
                let given = [d.path, d.unix, d.bluetooth, d.udp, d.tcp].compactMap { $0 }
                guard given.count == 1 else { throw Invalid(description: "\(name): give exactly one of path, unix, bluetooth, udp or tcp") }
                let endpoint: StandEndpoint
                if let path = d.path { endpoint = .serial(path: path, baud: baud) }
                else if let unix = d.unix { endpoint = .unix(path: unix) }
                else if let address = d.bluetooth { endpoint = .bluetooth(address: address, channel: d.channel.map(UInt8.init)) }
                else if let udp = d.udp, case .udp = StandEndpoint(parsing: "udp:" + udp) { endpoint = StandEndpoint(parsing: "udp:" + udp) }
                else if let tcp = d.tcp, case .tcp = StandEndpoint(parsing: "tcp:" + tcp) { endpoint = StandEndpoint(parsing: "tcp:" + tcp) }
                else { throw Invalid(description: "\(name): udp and tcp take HOST:PORT, the port 1…65535") }
                c.devices.append(Device(endpoint: endpoint, driver: driver, options: d.options))
            }
            if let h = hotplug {
                if let v = h.enabled { c.hotplug.enabled = v }
                c.hotplug.serialPattern = h.serial_pattern
                if let v = h.baud {
                    guard SerialPort.isSupported(baud: v) else { throw Invalid(description: "\(source): hotplug.baud \(v) is not a supported rate") }
                    c.hotplug.baud = v
                }
            }
            if let cam = camera {
                if let h = cam.horizontal_fov_deg {
                    guard h > 1 && h < 180 else { throw Invalid(description: "\(source): camera.horizontal_fov_deg must be in (1, 180)") }
                    c.camera.horizontalFOVDegrees = h
                }
                if let v = cam.vertical_fov_deg {
                    guard v > 1 && v < 180 else { throw Invalid(description: "\(source): camera.vertical_fov_deg must be in (1, 180)") }
                    c.camera.verticalFOVDegrees = v
                }
            }
            if let t = tracking {
                if let name = t.lost_behaviour {
                    guard let behaviour = LostSubjectBehaviour(rawValue: name) else {
                        let names = LostSubjectBehaviour.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                        throw Invalid(description: "\(source): tracking.lost_behaviour must be one of \(names)")
                    }
                    c.tracking.lostBehaviour = behaviour
                }
                if let hold = t.lost_hold_s {
                    guard hold >= 0 && hold <= 600 else { throw Invalid(description: "\(source): tracking.lost_hold_s must be in [0, 600]") }
                    c.tracking.lostHold = hold
                }
            }
            return c
        }
    }
}
