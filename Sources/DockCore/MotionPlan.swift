import DockProtocol

/// The reference path of one axis during a planned motion.
enum AxisPath: Sendable, Equatable {
    case move(MinimumJerkMove)
    case spline(MonotoneCubicSpline)

    /// Reference position and velocity `t` seconds after the motion started.
    func sample(at t: Double) -> (position: Double, velocity: Double) {
        switch self {
        case .move(let move): move.sample(at: t)
        case .spline(let spline): spline.sample(at: t)
        }
    }

    var finalPosition: Double { sample(at: .infinity).position }
}

/// An accepted orientation move or animation: a reference path for every axis of the stand (axes it
/// does not move hold their start position), all sharing one clock so they stay synchronized.
struct MotionPlan: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case orientation
        case animation(name: String)
    }

    let id: MotionID
    let kind: Kind
    /// Host time the motion started.
    let start: Double
    let duration: Double
    /// One per controller axis, in the controller's axis order.
    let paths: [AxisPath]
    /// The stand follows it itself (one POSITION); the controller only watches the feedback.
    var delegated = false
    /// How close to its target it must come to rest to complete (`MotionConfiguration.positionTolerance`
    /// unless the caller asked for closer: a preset's recall).
    var tolerance: Double
    /// When its fine approach began (`MotionController.fineApproach`); nil: not begun.
    var fineApproachSince: Double?
    /// When its fine approach stopped the head to read where it rests; nil: creeping.
    var fineStopSince: Double?

    func fraction(at time: Double) -> Double {
        guard duration > 0 else { return 1 }
        return Swift.min(1, Swift.max(0, (time - start) / duration))
    }

    var activity: MotionState.Activity {
        switch kind {
        case .orientation: .orientation(id)
        case .animation(let name): .animation(id, name: name)
        }
    }
}
