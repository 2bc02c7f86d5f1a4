/// What a USB video class camera says it can move, read from its USB descriptors (the bytes sysfs
/// shows as the USB device's `descriptors` file, which udev already has: nothing opens the camera).
/// The VideoControl interface's Camera Terminal lists its controls as a bitmap (UVC 1.5, 3.7.2.3,
/// Table 3-6): D9 Zoom (Absolute), D10 Zoom (Relative), D11 PanTilt (Absolute), D12 PanTilt
/// (Relative). A webcam without D11 or D12 has nothing for dockd to steer.
public struct UVCCameraControls: Sendable, Equatable, CustomStringConvertible {
    public var panTiltAbsolute = false
    public var panTiltRelative = false
    public var zoomAbsolute = false
    public var zoomRelative = false

    public init() {}

    /// A camera dockd can steer: it moves on pan/tilt, by position or by speed.
    public var canPanTilt: Bool { panTiltAbsolute || panTiltRelative }

    public var description: String {
        [(panTiltAbsolute, "pantilt-absolute"), (panTiltRelative, "pantilt-relative"), (zoomAbsolute, "zoom-absolute"),
         (zoomRelative, "zoom-relative")].filter(\.0).map(\.1).joined(separator: " ")
    }

    /// The Camera Terminals' controls in `descriptors` (several cameras' in one device are merged);
    /// nil when it has no VideoControl interface with a Camera Terminal.
    public static func parse(_ descriptors: [UInt8]) -> UVCCameraControls? {
        var controls: UVCCameraControls?
        for d in videoControlDescriptors(descriptors) where d.count >= 15 {
            // VC_INPUT_TERMINAL whose wTerminalType is ITT_CAMERA (0x0201; an audio interface's
            // input terminal 0x0201 is a microphone: hence only VideoControl interfaces' descriptors).
            let s = d.startIndex
            guard d[s + 2] == 0x02, d[s + 4] == 0x01, d[s + 5] == 0x02 else { continue }
            let size = Int(d[s + 14])
            guard d.count >= 15 + size else { continue }
            var bits: UInt32 = 0
            for i in 0..<min(size, 4) { bits |= UInt32(d[s + 15 + i]) << (8 * i) }
            var found = controls ?? UVCCameraControls()
            found.zoomAbsolute = found.zoomAbsolute || bits & 1 << 9 != 0
            found.zoomRelative = found.zoomRelative || bits & 1 << 10 != 0
            found.panTiltAbsolute = found.panTiltAbsolute || bits & 1 << 11 != 0
            found.panTiltRelative = found.panTiltRelative || bits & 1 << 12 != 0
            controls = found
        }
        return controls
    }

    /// The unit id of the extension unit (VC_EXTENSION_UNIT, UVC 1.5 Table 3-8) whose GUID is
    /// `guid` (16 bytes as the descriptor holds them), nil when the camera has none.
    public static func extensionUnit(_ guid: [UInt8], in descriptors: [UInt8]) -> UInt8? {
        for d in videoControlDescriptors(descriptors) where d.count >= 20 {
            let s = d.startIndex
            if d[s + 2] == 0x06, Array(d[s + 4..<s + 20]) == guid { return d[s + 3] }
        }
        return nil
    }

    /// The class-specific descriptors of the VideoControl interfaces (bInterfaceClass CC_VIDEO,
    /// bInterfaceSubClass SC_VIDEOCONTROL). Malformed input (a length of 0 or past the end) ends the
    /// walk at that descriptor.
    private static func videoControlDescriptors(_ descriptors: [UInt8]) -> [ArraySlice<UInt8>] {
        var found: [ArraySlice<UInt8>] = []
        var inVideoControl = false
        var at = 0
        while at + 2 <= descriptors.count {
            let length = Int(descriptors[at]), type = descriptors[at + 1]
            guard length >= 2, at + length <= descriptors.count else { break }
            let d = descriptors[at..<at + length]
            if type == interfaceDescriptor && length >= 9 {
                inVideoControl = d[d.startIndex + 5] == 0x0E && d[d.startIndex + 6] == 0x01
            } else if type == classSpecificInterface && inVideoControl && length >= 3 {
                found.append(d)
            }
            at += length
        }
        return found
    }

    private static let interfaceDescriptor: UInt8 = 0x04
    private static let classSpecificInterface: UInt8 = 0x24
}
