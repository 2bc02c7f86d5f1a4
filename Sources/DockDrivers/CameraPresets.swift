/// Presets a camera keeps itself (VISCA CAM_Memory, ONVIF's PTZ presets), beside the poses dockd
/// keeps: dockd recalls its presets with its own trajectory, and a copy in the camera lets the
/// camera's remote, its web page or another controller recall the same pose.

/// Where the camera keeps one preset: a memory number dockd chose, or a token the camera gave.
public enum CameraPresetSlot: Sendable, Hashable, CustomStringConvertible {
    /// A VISCA memory number (CAM_Memory's `pp`).
    case memory(Int)
    /// An ONVIF PresetToken.
    case token(String)

    public var token: String? { if case .token(let token) = self { token } else { nil } }

    public var description: String {
        switch self {
        case .memory(let number): "memory \(number)"
        case .token(let token): "token \(token)"
        }
    }
}

/// How a driver's camera keeps presets.
public enum CameraPresetStorage: Sendable, Equatable {
    /// Numbered memories dockd chooses among (VISCA: the profile's `presetMemories`).
    case memories(ClosedRange<Int>)
    /// The camera names each new preset (ONVIF SetPreset answers a PresetToken).
    case tokens
}

/// What dockd asks of the camera's presets.
public enum CameraPresetRequest: Sendable, Equatable {
    /// Store where the camera points now, as `name`, in `slot` (nil: a new one the camera names).
    case store(name: String, slot: CameraPresetSlot?)
    case remove(CameraPresetSlot)

    public var isStore: Bool { if case .store = self { true } else { false } }

    /// The slot the request names (nil: a new one the camera names).
    public var slot: CameraPresetSlot? {
        switch self {
        case .store(_, let slot): slot
        case .remove(let slot): slot
        }
    }
}

/// The camera did not do what a `CameraPresetRequest` asked, and why (its error, or no answer).
public struct CameraPresetRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
