/// The value rules of PROTOCOL.md §4 ("Values"): what a receiver refuses although the bytes decoded.
/// A command that breaks them is NACKed `out_of_range` and not applied at all; a report is dropped
/// whole (and NACKed `out_of_range` when it asked for an ACK). Each returns why, or nil when valid.
extension BatteryState {
    /// `batteryCount`: how many batteries the stand's CAPABILITIES declared (nil: none received yet).
    public func problem(batteryCount: Int?) -> String? {
        guard let batteryCount else { return "BATTERY \(index) before CAPABILITIES declared any battery" }
        guard Int(index) < batteryCount else {
            return "BATTERY index \(index), but the stand declared \(batteryCount) \(batteryCount == 1 ? "battery" : "batteries")"
        }
        guard level.isFinite, level >= 0, level <= 1 else { return "BATTERY \(index) level \(level) is not a fraction in 0…1" }
        return nil
    }
}

extension Capabilities {
    /// A stand whose own limits are not numbers cannot be steered safely.
    public var problem: String? {
        var seen = Set<Axis>()
        for a in axes {
            guard seen.insert(a.axis).inserted else { return "CAPABILITIES lists \(a.axis) twice" }
            guard a.maxSpeed.isFinite, a.maxSpeed > 0, a.maxAccel.isFinite, a.maxAccel > 0 else {
                return "CAPABILITIES \(a.axis) max_speed \(a.maxSpeed), max_accel \(a.maxAccel): each must be a finite number above 0"
            }
            guard a.continuous || (a.min.isFinite && a.max.isFinite && a.min < a.max) else {
                return "CAPABILITIES \(a.axis) range \(a.min)…\(a.max): a limited axis needs finite min < max"
            }
        }
        guard !axes.isEmpty else { return "CAPABILITIES lists no axis" }
        return nil
    }
}

extension StandEvent {
    /// Only a zoom's factor means anything; it must be a finite number above 0.
    public var problem: String? {
        guard knownKind == .zoom else { return nil }
        guard factor.isFinite, factor > 0 else { return "EVENT zoom factor \(factor) is not a finite number above 0" }
        return nil
    }
}

extension ImuSample {
    public var problem: String? {
        let values = [gyro.x, gyro.y, gyro.z, accel.x, accel.y, accel.z]
        guard values.allSatisfy(\.isFinite) else { return "IMU sample with a value that is not finite: \(values)" }
        return nil
    }
}
