#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DockProtocol

/// A named pose the engine can be sent to: a preset as the daemon stored it (nil for an axis it
/// does not name). The engine keeps the pose, not the name's look-up: presets live in the daemon.
public struct NamedPose: Sendable, Equatable {
    public var name: String
    public var yaw: Double?
    public var pitch: Double?

    public init(name: String, yaw: Double?, pitch: Double?) {
        self.name = name; self.yaw = yaw; self.pitch = pitch
    }
}

/// Rates that bring the stand onto a pose and hold it there: proportional on the error, capped,
/// the way the motion controller's velocity mode takes them (it clamps to the limits and the
/// acceleration). A continuous axis goes the shortest way round, never unwinding whole turns.
struct PoseApproach: Sendable, Equatable {
    /// 1/s: from 1 rad off, within 0.01 rad in about 2.5 s after the cap lets go.
    static let gain = 2.0
    /// rad/s: a return or a tour's move is a calm move, not a jump.
    static let maxRate = 1.0
    /// rad: how close counts as there.
    static let tolerance = 0.01

    /// The rates toward `pose` from `positions`; `arrived` once every axis it names is within the tolerance.
    static func rates(toward pose: NamedPose, positions: [Axis: Double], continuousAxes: Set<Axis>) -> (rates: [Axis: Double], arrived: Bool) {
        var rates = positions.mapValues { _ in 0.0 }
        var arrived = true
        for (axis, goal) in [(Axis.yaw, pose.yaw), (.pitch, pose.pitch)] {
            guard let goal, let position = positions[axis] else { continue }
            let error = continuousAxes.contains(axis) ? remainder(goal - position, 2 * .pi) : goal - position
            if abs(error) > tolerance { arrived = false }
            rates[axis] = min(maxRate, max(-maxRate, gain * error))
        }
        return (rates, arrived)
    }
}
