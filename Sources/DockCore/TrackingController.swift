import DockProtocol

/// Where the framer wants the camera to point, in the stand's angles (yaw positive left, pitch
/// positive up, rad), how fast that point moves (rad/s), and the host time it refers to (the
/// capture time of the frame it came from).
public struct TrackingTarget: Sendable, Equatable {
    public var yaw: Double
    public var pitch: Double
    public var yawRate: Double
    public var pitchRate: Double
    public var time: Double

    public init(yaw: Double, pitch: Double, yawRate: Double = 0, pitchRate: Double = 0, time: Double) {
        self.yaw = yaw; self.pitch = pitch; self.yawRate = yawRate; self.pitchRate = pitchRate; self.time = time
    }
}

/// What the stand does when the subject is gone, after `lostHold` seconds of holding still.
public enum LostSubjectBehaviour: String, Sendable, CaseIterable {
    case hold
    /// A slow yaw sweep around where the subject was last seen.
    case search
    /// Back to the home pose (yaw 0, pitch 0).
    case home
}

public struct TrackingControlConfiguration: Sendable, Equatable {
    /// Proportional gain on the predicted aim error, 1/s.
    public var gain: Double = 4
    /// Command-to-motion latency the target is predicted across, s (one feedback period + transport).
    public var latency: Double = 0.03
    /// A target older than this is not extrapolated further, s (a stale subject is not chased).
    public var maximumPrediction: Double = 0.3
    public var lostHold: Double = 1.5
    public var lostBehaviour: LostSubjectBehaviour = .hold
    /// Search amplitude each side of the last seen yaw, rad, and speed, rad/s.
    public var searchAmplitude: Double = 0.6
    public var searchRate: Double = 0.3
    public var homeGain: Double = 1.0

    public init() {}
}

/// Turns a tracking target into per-axis velocity commands for `MotionController.setVelocity`:
/// feedforward of the target's angular velocity, prediction across the control latency, and
/// proportional feedback on the remaining error measured from the motors' feedback. The
/// MotionController clamps the result to the limits and the acceleration.
public struct TrackingController: Sendable {
    public var configuration: TrackingControlConfiguration
    private var lastTarget: TrackingTarget?
    private var searchDirection = 1.0

    public init(configuration: TrackingControlConfiguration = .init()) {
        self.configuration = configuration
    }

    /// Rates for the axes present in `positions` (yaw and pitch), given the latest target (nil when
    /// no subject is tracked).
    public mutating func command(target: TrackingTarget?, positions: [Axis: Double], at now: Double) -> [Axis: Double] {
        let c = configuration
        if let target {
            lastTarget = target
            let lead = min(c.maximumPrediction, max(0, now - target.time)) + c.latency
            var rates: [Axis: Double] = [:]
            if let yaw = positions[.yaw] {
                rates[.yaw] = target.yawRate + c.gain * (target.yaw + target.yawRate * lead - yaw)
            }
            if let pitch = positions[.pitch] {
                rates[.pitch] = target.pitchRate + c.gain * (target.pitch + target.pitchRate * lead - pitch)
            }
            return rates
        }
        return lostCommand(positions: positions, at: now)
    }

    /// Forgets the subject (tracking turned off, camera flipped).
    public mutating func reset() { lastTarget = nil }

    private mutating func lostCommand(positions: [Axis: Double], at now: Double) -> [Axis: Double] {
        let c = configuration
        let still = positions.mapValues { _ in 0.0 }
        guard let last = lastTarget, now - last.time > c.lostHold else { return still }
        switch c.lostBehaviour {
        case .hold:
            return still
        case .home:
            return positions.mapValues { -c.homeGain * $0 }
        case .search:
            guard let yaw = positions[.yaw] else { return still }
            if yaw > last.yaw + c.searchAmplitude { searchDirection = -1 }
            if yaw < last.yaw - c.searchAmplitude { searchDirection = 1 }
            var rates = still
            rates[.yaw] = searchDirection * c.searchRate
            return rates
        }
    }
}
