import DockCore

extension RPCError {
    /// The controller's refusals as the API's DockKit-like error codes.
    init(motion error: MotionError) {
        switch error {
        case .notSupported: self = .notSupported(error.description)
        case .invalidParameter, .outOfRange: self = .invalidParameter(error.description)
        case .frameRateTooHigh: self = .frameRateTooHigh
        case .noFeedback: self = .notConnected(nil)
        case .linkTooSlow: self = .motionFailed(error.description)
        }
    }
}

extension MotionProgress.State {
    var name: String {
        switch self {
        case .running: "running"
        case .completed: "completed"
        case .preempted: "preempted"
        case .cancelled: "cancelled"
        case .failed: "failed"
        }
    }

    var reason: String? {
        if case .failed(let reason) = self { return reason }
        return nil
    }
}
