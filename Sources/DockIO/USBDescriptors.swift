import CV4L2
#if canImport(Glibc)
import Glibc
#endif

/// A USB device's descriptors as sysfs shows them (its `descriptors` file): what a UVC camera says
/// it can do and which unit ids its extension units have, read without opening the camera.
public enum USBDescriptors {
    /// The descriptors of the USB device `syspath` is, or is below (a video4linux device's path, a
    /// /sys/class link); nil when no ancestor is a USB device.
    public static func of(syspath: String) -> [UInt8]? {
        guard let resolved = realpath(syspath, nil) else { return nil }
        defer { free(resolved) }
        var directory = String(cString: resolved)
        while directory.count > "/sys/devices".count {
            if access(directory + "/idVendor", F_OK) == 0, let bytes = try? WholeFile.read(directory + "/descriptors", atMost: largest) {
                return bytes
            }
            guard let slash = directory.lastIndex(of: "/") else { break }
            directory = String(directory[..<slash])
        }
        return nil
    }

    /// sysfs descriptors are a few KiB.
    private static let largest = 65536

    /// The descriptors of the USB device behind the character device at `devicePath` (/dev/videoN,
    /// or a /dev/v4l/by-id link): found through /sys/dev/char/MAJOR:MINOR.
    public static func of(devicePath: String) -> [UInt8]? {
        var major: UInt32 = 0, minor: UInt32 = 0
        guard dockd_char_device(devicePath, &major, &minor) == 0 else { return nil }
        return of(syspath: "/sys/dev/char/\(major):\(minor)")
    }
}
