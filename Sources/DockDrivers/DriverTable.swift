/// Every driver dockd has, one line each (gpsd's `gpsd_driver_array[]`). To add one, copy
/// Tests/DockDriversTests/Skeleton/SkeletonDriver.swift into a folder here and list it (docs/HARDWARE.md,
/// "Adding a driver").
public enum DriverTable {
    public static let all: [DriverDefinition] = [
        NativeDriver.definition,
        VISCADriver.definition,
        MAVLinkGimbalDriver.definition,
        V4L2CameraDriver.definition,
        ONVIFCameraDriver.definition,
        PelcoDDriver.definition,
        FeetechServoDriver.definition,
    ]

    public static var names: [String] { all.map(\.name) }

    public static func named(_ name: String) -> DriverDefinition? { all.first { $0.name == name } }

    /// What a device is driven with when no driver is named: the first driver that runs over its
    /// link (native on a tty, v4l2 on a video node, onvif for an onvif:// camera).
    public static func defaultDriver(for link: LinkKind) -> DriverDefinition {
        all.first { $0.links.contains(link) } ?? NativeDriver.definition
    }

    /// The driver `name`, or why there is none.
    public static func definition(_ name: String) throws(DriverFailure) -> DriverDefinition {
        guard let definition = named(name) else { throw DriverFailure("driver '\(name)' is not one of \(names.joined(separator: ", "))") }
        return definition
    }
}
