import DockDrivers
#if canImport(Glibc)
import Glibc
#endif

/// A video device's camera controls as its USB device's descriptors list them, read from sysfs:
/// the udev rule (through `dockd --uvc-controls`) and dockd's hotplug both decide this way whether a
/// webcam is a PTZ camera, without opening the video device (udev's v4l_id already did, once).
package enum UVCSysfs {
    /// The controls of the USB video class camera that `syspath` (a video4linux device's, or any
    /// below the USB device) belongs to; nil when no ancestor is a USB device with a Camera Terminal.
    package static func controls(syspath: String) -> UVCCameraControls? {
        // /sys/class/video4linux/videoN is a link into /sys/devices, where the parents are.
        guard let resolved = realpath(syspath, nil) else { return nil }
        defer { free(resolved) }
        var directory = String(cString: resolved)
        while directory.count > "/sys/devices".count {
            if FileManagerLite.exists(directory + "/idVendor"), let bytes = read(directory + "/descriptors") {
                return UVCCameraControls.parse(bytes)
            }
            guard let slash = directory.lastIndex(of: "/") else { break }
            directory = String(directory[..<slash])
        }
        return nil
    }

    /// The whole file (sysfs descriptors are a few KiB; at most 64 KiB are read).
    private static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return bytes
    }

    /// What `dockd --uvc-controls SYSPATH` prints for udev's IMPORT{program}: nothing for a device
    /// that cannot pan or tilt.
    package static func udevProperties(syspath: String) -> String {
        guard let controls = controls(syspath: syspath), controls.canPanTilt else { return "" }
        return "DOCKD_V4L2_PTZ=1\nDOCKD_UVC_CONTROLS=\(controls.description)"
    }
}
