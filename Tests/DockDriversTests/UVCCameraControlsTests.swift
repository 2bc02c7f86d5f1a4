import DockDrivers
import Testing

/// Which webcams are PTZ cameras, from USB descriptors laid out as UVC 1.5 and USB 2.0 define them
/// (what sysfs shows as a USB device's `descriptors`).
@Suite struct UVCCameraControlsTests {
    static let device: [UInt8] = [18, 0x01, 0x00, 0x02, 0xEF, 0x02, 0x01, 64, 0x64, 0x35, 0xF8, 0xFE, 0x00, 0x01, 1, 2, 3, 1]
    static let configuration: [UInt8] = [9, 0x02, 0x00, 0x01, 3, 1, 0, 0x80, 250]
    static func interface(number: UInt8, klass: UInt8, subclass: UInt8) -> [UInt8] { [9, 0x04, number, 0, 1, klass, subclass, 0, 0] }
    static let videoControlHeader: [UInt8] = [13, 0x24, 0x01, 0x10, 0x01, 0x50, 0x00, 0x00, 0x6C, 0xDC, 0x02, 1, 1]
    /// A Camera Terminal (VC_INPUT_TERMINAL, ITT_CAMERA 0x0201) with a 3-byte bmControls.
    static func cameraTerminal(_ controls: UInt32) -> [UInt8] {
        [18, 0x24, 0x02, 1, 0x01, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 3, UInt8(controls & 0xFF), UInt8(controls >> 8 & 0xFF), UInt8(controls >> 16 & 0xFF)]
    }
    static let outputTerminal: [UInt8] = [9, 0x24, 0x03, 3, 0x01, 0x01, 0, 2, 0]
    /// A USB Audio 2.0 input terminal: also subtype 0x02 and type 0x0201 (a microphone there), 17
    /// bytes long; read as a camera terminal, its bmControls (0x0002) and iTerminal (string 8)
    /// would be a bControlSize of 2 and the PanTilt (Absolute) bit.
    static let microphone: [UInt8] = [17, 0x24, 0x02, 1, 0x01, 0x02, 0, 1, 2, 0x03, 0, 0, 0, 0, 0x02, 0x00, 8]

    static let focusAndExposure: UInt32 = 1 << 3 | 1 << 5 | 1 << 17
    static let ptz: UInt32 = focusAndExposure | 1 << 9 | 1 << 11

    func camera(_ controls: UInt32) -> [UInt8] {
        Self.device + Self.configuration + Self.interface(number: 0, klass: 0x0E, subclass: 0x01) + Self.videoControlHeader
            + Self.cameraTerminal(controls) + Self.outputTerminal + Self.interface(number: 1, klass: 0x0E, subclass: 0x02)
    }

    @Test func aPTZCameraListsPanTiltAndZoom() throws {
        let controls = try #require(UVCCameraControls.parse(camera(Self.ptz)))
        #expect(controls.panTiltAbsolute && controls.zoomAbsolute && !controls.panTiltRelative && !controls.zoomRelative)
        #expect(controls.canPanTilt && controls.description == "pantilt-absolute zoom-absolute")
        let speedOnly = try #require(UVCCameraControls.parse(camera(Self.focusAndExposure | 1 << 12)))
        #expect(speedOnly.canPanTilt && !speedOnly.panTiltAbsolute)
    }

    @Test func anExtensionUnitIsFoundByItsGUID() {
        // OBSBOT's {9a1e7291-6843-4683-6d92-39bc7906ee49} as the descriptor holds it, on unit 2.
        let guid: [UInt8] = [0x91, 0x72, 0x1e, 0x9a, 0x43, 0x68, 0x83, 0x46, 0x6d, 0x92, 0x39, 0xbc, 0x79, 0x06, 0xee, 0x49]
        let unit: [UInt8] = [26, 0x24, 0x06, 2] + guid + [7, 1, 1, 1, 0x7f, 0]
        let bytes = Self.device + Self.configuration + Self.interface(number: 0, klass: 0x0E, subclass: 0x01) + Self.videoControlHeader
            + Self.cameraTerminal(Self.ptz) + unit + Self.outputTerminal
        #expect(UVCCameraControls.extensionUnit(guid, in: bytes) == 2)
        #expect(UVCCameraControls.extensionUnit(Array(guid.reversed()), in: bytes) == nil)
        #expect(UVCCameraControls.extensionUnit(guid, in: camera(Self.ptz)) == nil)
    }

    @Test func aPlainWebcamIsNotOne() throws {
        let controls = try #require(UVCCameraControls.parse(camera(Self.focusAndExposure)))
        #expect(!controls.canPanTilt)
    }

    @Test func anAudioInterfacesMicrophoneIsNoCamera() {
        let headset = Self.device + Self.configuration + Self.interface(number: 0, klass: 0x01, subclass: 0x01)
            + [9, 0x24, 0x01, 0x00, 0x02, 0x03, 0x1E, 0x00, 0x00] + Self.microphone
        #expect(UVCCameraControls.parse(headset) == nil)
    }

    @Test func malformedDescriptorsEndTheWalkWithoutACrash() {
        var bytes = camera(Self.ptz)
        #expect(UVCCameraControls.parse(Array(bytes.prefix(40))) == nil, "cut inside the camera terminal")
        bytes[18] = 0  // the configuration descriptor's length
        #expect(UVCCameraControls.parse(bytes) == nil)
        #expect(UVCCameraControls.parse([]) == nil && UVCCameraControls.parse([1]) == nil)
        // A camera terminal whose bControlSize runs past its own length.
        var short = Self.cameraTerminal(Self.ptz)
        short[14] = 9
        #expect(UVCCameraControls.parse(Self.device + Self.interface(number: 0, klass: 0x0E, subclass: 0x01) + short) == nil)
    }
}
