import CUdev
#if canImport(Glibc)
import Glibc
#endif

/// Which USB device a node is now (a USB-serial adapter's tty, a webcam's video node), from sysfs:
/// its vendor and product ids and its serial number (many CH340 adapters have none: then the ids
/// alone, which tell another make of adapter but not another of the same make). Kernel names are handed out in plug order, so a stand kept on
/// `/dev/ttyUSB0` through an unplug would otherwise take whatever adapter gets that name next and
/// drive it as the stand. nil for a node that is no USB device's (a pty, a board's UART): there
/// the node is the only identity there is. Read from sysfs through libudev, which needs no udev
/// daemon (udev's own ID_SERIAL is made of the same attributes).
enum USBIdentity {
    static func of(node path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFCHR, let udev = udev_new() else { return nil }
        defer { udev_unref(udev) }
        guard let device = udev_device_new_from_devnum(udev, CChar(UInt8(ascii: "c")), info.st_rdev) else { return nil }
        defer { udev_device_unref(device) }
        // Owned by `device`: not unreferenced here.
        guard let usb = udev_device_get_parent_with_subsystem_devtype(device, "usb", "usb_device") else { return nil }
        func attribute(_ name: String) -> String? {
            udev_device_get_sysattr_value(usb, name).map { String(cString: $0) }
        }
        let ids = "usb \(attribute("idVendor") ?? "?"):\(attribute("idProduct") ?? "?")"
        // Without a serial number the ids are all there is: the port would lock the same adapter
        // out when it is plugged into another one.
        guard let serial = attribute("serial"), !serial.isEmpty else { return ids }
        return "\(ids) serial \(serial)"
    }

    /// The node holds another device than the one the stand last answered on.
    struct Changed: Error, CustomStringConvertible {
        let node: String
        let expected: String
        let found: String

        var description: String {
            "\(node) is now another device (\(found)), not this stand's (\(expected)): not opened; "
                + "detach and attach it, or restart dockd, to take the new one"
        }
    }
}
