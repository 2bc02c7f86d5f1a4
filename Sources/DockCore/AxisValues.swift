import DockProtocol

/// A value for some of the axes, held inline: what a dictionary keyed by axis says, without its
/// allocation and hashing (the controller's predicted angles are asked at every FEEDBACK).
public struct AxisValues: Sendable, Equatable {
    private var yaw, pitch, roll, zoom: Double?

    public init() {}

    public subscript(axis: Axis) -> Double? {
        get {
            switch axis {
            case .yaw: yaw
            case .pitch: pitch
            case .roll: roll
            case .zoom: zoom
            }
        }
        set {
            switch axis {
            case .yaw: yaw = newValue
            case .pitch: pitch = newValue
            case .roll: roll = newValue
            case .zoom: zoom = newValue
            }
        }
    }
}
