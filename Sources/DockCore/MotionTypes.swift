import DockProtocol

/// Names one orientation move or animation, for progress and `cancel`. Numbered from 1 in the order
/// the controller accepted them.
public struct MotionID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "motion#\(rawValue)" }
}

/// How far a motion has got. `fraction` is elapsed time over planned duration, 0…1.
public struct MotionProgress: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        case running
        case completed
        /// A newer command (orientation, animation or velocity) took over.
        case preempted
        /// `cancel` or `stop`.
        case cancelled
        case failed(String)

        public var isFinal: Bool { self != .running }
    }

    public var id: MotionID
    public var fraction: Double
    public var state: State
    public init(id: MotionID, fraction: Double, state: State) {
        self.id = id; self.fraction = fraction; self.state = state
    }
}

/// What one `tick` asks the daemon to do: send `messages` to the stand in order, and publish
/// `progress` to clients.
public struct ControlOutput: Equatable, Sendable {
    public var messages: [Message] = []
    public var progress: [MotionProgress] = []
    public init(messages: [Message] = [], progress: [MotionProgress] = []) {
        self.messages = messages; self.progress = progress
    }
}

/// What the controller is doing, and the stand's latest measured state.
public struct MotionState: Equatable, Sendable {
    public enum Activity: Equatable, Sendable {
        case idle
        case velocity
        case orientation(MotionID)
        case animation(MotionID, name: String)
    }

    public var activity: Activity
    /// From the latest FEEDBACK, rad (unwrapped multi-turn on a continuous axis).
    public var positions: [Axis: Double]
    /// From the latest FEEDBACK, rad/s.
    public var velocities: [Axis: Double]
    /// Host time of the latest FEEDBACK, nil before the first.
    public var feedbackTime: Double?
}
