/// What a kind of driver is, declared by the driver itself (gpsd's `struct gps_type_t`): its name,
/// the links it runs over, its options with their types, ranges, defaults and docs, the devices
/// hotplug attaches it to, what it can do, and how to make one. dockd's configuration and
/// `--check-config`, `dockd --list-drivers`, dock-driver-probe, the API's `stands.attach` and
/// hotplug read `DriverTable`; dockd.conf(5), the OpenRPC document and the udev rule are checked
/// against it by tests.
public struct DriverDefinition: Sendable {
    public let name: String
    /// One line for people: what it drives.
    public let summary: String
    /// The links it runs over; a configuration naming another is refused.
    public let links: [LinkKind]
    /// The serial rate when a configuration names none (each protocol's usual one); nil for a
    /// driver that runs over no serial line.
    public let defaultBaud: Int?
    public let options: [DriverOption]
    /// The devices udev announces that are this driver's (attached without configuration); nil: none.
    public let hotplug: HotplugMatch?
    public let capabilities: DriverCapabilities
    private let build: @Sendable (DriverSettings) throws -> any StandDriver

    public init(name: String, summary: String, links: [LinkKind], defaultBaud: Int?, options: [DriverOption],
                hotplug: HotplugMatch? = nil, capabilities: DriverCapabilities,
                make: @escaping @Sendable (DriverSettings) throws -> any StandDriver) {
        self.name = name; self.summary = summary; self.links = links; self.defaultBaud = defaultBaud
        self.options = options; self.hotplug = hotplug; self.capabilities = capabilities; build = make
    }

    public func option(_ key: String) -> DriverOption? { options.first { $0.key == key } }

    /// A driver from checked values (a configuration's, the API's, the probe's): unknown keys and
    /// values of the wrong kind or out of range are refused with the key named.
    public func make(_ values: [String: DriverValue], heartbeatTimeoutMs: UInt16) throws(DriverFailure) -> any StandDriver {
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let option = option(key) else {
                let known = options.map(\.key)
                throw DriverFailure(known.isEmpty ? "the \(name) driver takes no options (\(key) given)"
                                                  : "unknown option \(key) (the \(name) driver takes \(known.joined(separator: ", ")))")
            }
            if let problem = option.problem(with: value) { throw DriverFailure("\(key) \(problem)") }
        }
        do {
            return try build(DriverSettings(definition: self, values: values, heartbeatTimeoutMs: heartbeatTimeoutMs))
        } catch let failure as DriverFailure {
            throw failure
        } catch {
            throw DriverFailure("\(error)")
        }
    }

    /// The same from `KEY=VALUE` texts (dock-driver-probe's `--option`), each read as its option's kind.
    public func make(texts: [String: String], heartbeatTimeoutMs: UInt16) throws(DriverFailure) -> any StandDriver {
        var values: [String: DriverValue] = [:]
        for (key, text) in texts {
            guard let option = option(key) else { values[key] = .text(text); continue }  // refused by `make`
            guard let value = option.kind.value(parsing: text) else { throw DriverFailure("\(key) \(option.kind.expectation), not \(text)") }
            values[key] = value
        }
        return try make(values, heartbeatTimeoutMs: heartbeatTimeoutMs)
    }
}

public struct DriverFailure: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The kinds of link a stand is reached over.
public enum LinkKind: String, Sendable, CaseIterable {
    case serial, unix, bluetooth, udp, tcp
    /// A V4L2 device's controls (DockIO's VideoDeviceLink runs their ioctls).
    case video
    /// An ONVIF camera's services over HTTP (DockIO's ONVIFLink does the requests).
    case onvif

    /// The `[[device]]` key that names a link of this kind in dockd.conf (and in `dockd
    /// --list-drivers`, which the manual and the tests read).
    public var configKey: String { self == .serial ? "path" : rawValue }
}

/// udev properties that mark a driver's devices: a marker a udev rule sets, or USB ids.
public struct HotplugMatch: Sendable, Equatable {
    public let subsystem: String
    /// A property the project's udev rule sets to "1" on the devices it recognises.
    public let marker: String
    /// `ID_VENDOR_ID` and `ID_MODEL_ID` (lowercase hex) of devices that are always this driver's.
    public let usbIDs: [(vendor: String, product: String)]

    /// Also any video capture node of a USB video class camera whose Camera Terminal lists pan/tilt
    /// controls (`UVCCameraControls`, from the USB descriptors): every UVC PTZ webcam, known or not.
    public let uvcPanTilt: Bool

    public init(subsystem: String, marker: String, usbIDs: [(vendor: String, product: String)], uvcPanTilt: Bool = false) {
        self.subsystem = subsystem; self.marker = marker; self.usbIDs = usbIDs; self.uvcPanTilt = uvcPanTilt
    }

    /// `uvcControls`: the device's camera controls, asked only when the rest does not match.
    public func matches(_ property: (String) -> String?, uvcControls: () -> UVCCameraControls? = { nil }) -> Bool {
        property(marker) == "1" || usbIDs.contains { property("ID_VENDOR_ID") == $0.vendor && property("ID_MODEL_ID") == $0.product }
            || (uvcPanTilt && uvcControls()?.canPanTilt == true)
    }

    public static func == (a: HotplugMatch, b: HotplugMatch) -> Bool {
        a.subsystem == b.subsystem && a.marker == b.marker && a.usbIDs.map(\.vendor) == b.usbIDs.map(\.vendor)
            && a.usbIDs.map(\.product) == b.usbIDs.map(\.product) && a.uvcPanTilt == b.uvcPanTilt
    }
}

/// What a driver can do, for people and tools choosing hardware (AP_Mount's declared target types).
public struct DriverCapabilities: OptionSet, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Steers by position targets (the device closes its own position loop).
    public static let angles = DriverCapabilities(rawValue: 1 << 0)
    /// Steers by rates.
    public static let rates = DriverCapabilities(rawValue: 1 << 1)
    /// Reports where it points as measured (encoders); without it the position is estimated.
    public static let measuredPosition = DriverCapabilities(rawValue: 1 << 2)
    public static let zoom = DriverCapabilities(rawValue: 1 << 3)
    public static let presets = DriverCapabilities(rawValue: 1 << 4)
    public static let continuousAxes = DriverCapabilities(rawValue: 1 << 5)
    public static let buttons = DriverCapabilities(rawValue: 1 << 6)
    public static let batteries = DriverCapabilities(rawValue: 1 << 7)
    public static let led = DriverCapabilities(rawValue: 1 << 8)
    public static let imu = DriverCapabilities(rawValue: 1 << 9)
    /// What it can do is told by the device at connect time (the native protocol's CAPABILITIES).
    public static let declaredByDevice = DriverCapabilities(rawValue: 1 << 10)

    public static let names: [(DriverCapabilities, String)] = [
        (.angles, "angles"), (.rates, "rates"), (.measuredPosition, "measured-position"), (.zoom, "zoom"), (.presets, "presets"),
        (.continuousAxes, "continuous-axes"), (.buttons, "buttons"), (.batteries, "batteries"), (.led, "led"), (.imu, "imu"),
        (.declaredByDevice, "declared-by-device"),
    ]

    /// The names of the capabilities in the set, in a fixed order.
    public var names: [String] { Self.names.filter { contains($0.0) }.map(\.1) }
}
