/// A stand axis, numbered as on the wire (PROTOCOL.md §4).
public enum Axis: UInt8, CaseIterable, Sendable, Codable, Comparable, CustomStringConvertible {
    case yaw = 0
    case pitch = 1
    case roll = 2
    /// Optical zoom (protocol 1.1): position = magnification relative to the widest setting (1.0 =
    /// widest), velocity = magnification per second. Not an angle: orientation moves leave it alone.
    case zoom = 3

    public var description: String {
        switch self {
        case .yaw: "yaw"
        case .pitch: "pitch"
        case .roll: "roll"
        case .zoom: "zoom"
        }
    }

    /// What follows a position of this axis in a message: " rad", or "×" for the zoom's magnification.
    public var unitSuffix: String { self == .zoom ? "×" : " rad" }

    public init?(name: String) {
        guard let axis = Axis.allCases.first(where: { $0.description == name }) else { return nil }
        self = axis
    }

    public static func < (a: Axis, b: Axis) -> Bool { a.rawValue < b.rawValue }
}

/// The axis mask of the wire format: bit 0 yaw, bit 1 pitch, bit 2 roll, bit 3 zoom.
public struct AxisMask: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init<S: Sequence>(_ axes: S) where S.Element == Axis {
        self.rawValue = axes.reduce(0) { $0 | (1 << $1.rawValue) }
    }

    /// The axes set, in wire order. Bits above zoom are reserved and ignored.
    public var axes: [Axis] { Axis.allCases.filter { rawValue & (1 << $0.rawValue) != 0 } }
}
