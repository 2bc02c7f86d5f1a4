import DockProtocol

/// How a camera is steered on one axis, by the controls it lists. UVC cameras offer an absolute
/// pose (CT_PANTILT_ABSOLUTE: PAN/TILT_ABSOLUTE) or a speed (CT_PANTILT_RELATIVE, which uvcvideo
/// lists as PAN/TILT_SPEED); PAN/TILT_RELATIVE, a step from where the camera is, comes from vendor
/// extension units (Logitech's motor control) and other drivers.
public enum V4L2Steering: String, Sendable, CaseIterable {
    /// A target pose the camera moves to by itself.
    case absolute
    /// A step from where the camera is (it moves by itself to the end of the step).
    case relative
    /// A speed held until the next one (0 stops); dockd closes the position loop on its estimate.
    case speed

    /// The control that steers `axis` this way.
    func control(_ axis: Axis) -> V4L2Wire.Control {
        switch (self, axis) {
        case (.absolute, .yaw): .panAbsolute
        case (.absolute, _): .tiltAbsolute
        case (.relative, .yaw): .panRelative
        case (.relative, _): .tiltRelative
        case (.speed, .yaw): .panSpeed
        case (.speed, _): .tiltSpeed
        }
    }

    /// The steering `auto` picks for an axis from the usable controls: an absolute pose where
    /// there is one; else a speed with at least `fineSpeedLevels` levels each way; else relative
    /// steps; else any speed. A speed of a few levels either way (Logitech's ±1 is a direction, not a speed)
    /// moves in leaps of one level × the command interval, where a step lands to the camera's step.
    static func automatic(_ usable: (V4L2Steering) -> V4L2Wire.ControlInfo?) -> V4L2Steering? {
        if usable(.absolute) != nil { return .absolute }
        // Both ways: uvcvideo before 2026 lists the speeds' minimum as −1 (the slowest reverse),
        // whatever the camera's maximum (linux-media, "uvcvideo: … relative pan/tilt/zoom speeds").
        if let speed = usable(.speed), speed.maximum >= fineSpeedLevels, -speed.minimum >= fineSpeedLevels { return .speed }
        if usable(.relative) != nil { return .relative }
        return usable(.speed) != nil ? .speed : nil
    }

    static let fineSpeedLevels: Int64 = 8
}

/// One steered axis: which control, its range, and the sign between the camera's units and
/// dockd's (pan grows to the right, yaw to the left).
struct V4L2AxisDrive: Sendable {
    let axis: Axis
    let steering: V4L2Steering
    let control: V4L2Wire.ControlInfo
    /// The axis's absolute control where the camera has one (read for the pose even when another
    /// control steers, and the source of the axis's range).
    let absolute: V4L2Wire.ControlInfo?
    /// 1 when the camera's pan grows to the right as V4L2 says, −1 for a model whose grows left.
    let panSign: Double

    /// dockd's angle = sign × the camera's (yaw grows to the left).
    var sign: Double { axis == .yaw ? -panSign : 1 }
    var id: UInt32 { control.id }

    /// Whether the camera reports where this axis is: its absolute control follows the pose.
    var measured: Bool { absolute?.isVolatile ?? false }

    /// The axis's range in the camera's arc-seconds: the absolute control's; without one, a
    /// camera's usual range, assumed (UVC has no other way to tell it).
    var range: ClosedRange<Double> {
        if let a = absolute { return Double(a.minimum)...Double(a.maximum) }
        return axis == .yaw ? -Self.assumedPan...Self.assumedPan : -Self.assumedTilt...Self.assumedTilt
    }

    static let assumedPan = 170.0 * 3600, assumedTilt = 90.0 * 3600

    /// An absolute or relative value on the control's step and within its range.
    func quantized(_ value: Double) -> Int32 {
        let step = Double(max(1, control.step))
        let clamped = min(Double(control.maximum), max(Double(control.minimum), (value / step).rounded() * step))
        return Int32(clamped)
    }
}
