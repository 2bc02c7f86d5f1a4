import DockDrivers
import DockIO

/// A video device's camera controls as its USB device's descriptors list them, read from sysfs:
/// the udev rule (through `dockd --uvc-controls`) and dockd's hotplug both decide this way whether a
/// webcam is a PTZ camera, without opening the video device (udev's v4l_id already did, once).
package enum UVCSysfs {
    /// The controls of the USB video class camera that `syspath` (a video4linux device's, or any
    /// below the USB device) belongs to; nil when no ancestor is a USB device with a Camera Terminal.
    package static func controls(syspath: String) -> UVCCameraControls? {
        USBDescriptors.of(syspath: syspath).flatMap(UVCCameraControls.parse)
    }

    /// What `dockd --uvc-controls SYSPATH` prints for udev's IMPORT{program}: nothing for a device
    /// that cannot pan or tilt.
    package static func udevProperties(syspath: String) -> String {
        guard let controls = controls(syspath: syspath), controls.canPanTilt else { return "" }
        return "DOCKD_V4L2_PTZ=1\nDOCKD_UVC_CONTROLS=\(controls.description)"
    }
}
