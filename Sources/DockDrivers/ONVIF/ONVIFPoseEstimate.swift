/// Where an ONVIF camera is by what it was told, in the generic space: for cameras whose GetStatus
/// does not follow the head while it moves (it says where the motion began until the head is
/// still again, or nothing new at all). A rate runs until a Stop or its Timeout; a target is
/// approached at the speed the move carried (a fraction of the top speeds; 1 without one). Pure and clock-free: times are the driver's (a move's reply).
/// It keeps how far it may be off (`doubt`), for the driver to have the camera read before it is
/// too far.
struct ONVIFPoseEstimate: Sendable {
    enum Motion: Sendable, Equatable {
        case still
        /// Generic units/s, until `until` (the ContinuousMove's Timeout).
        case rate(x: Double, y: Double, until: Double)
        case toward(x: Double, y: Double, speed: Double = 1)
    }

    /// The top speeds, generic units/s.
    let topSpeed: (x: Double, y: Double)
    private(set) var base: (x: Double, y: Double, time: Double)
    private(set) var motion = Motion.still
    /// How far the pose may be off, generic units: a move counts from its reply, but the camera
    /// changed its rate somewhere between its send and its reply, so each change adds what that
    /// window at the difference of the rates turns; a read clears it.
    private(set) var doubt: (x: Double, y: Double) = (0, 0)

    init(topSpeed: (x: Double, y: Double), at pose: (x: Double, y: Double), time: Double) {
        self.topSpeed = topSpeed
        base = (pose.x, pose.y, time)
    }

    func pose(at time: Double) -> (x: Double, y: Double) {
        let elapsed = max(0, time - base.time)
        switch motion {
        case .still:
            return (base.x, base.y)
        case .rate(let x, let y, let until):
            let moving = max(0, min(time, until) - base.time)
            return (Self.clamp(base.x + x * moving), Self.clamp(base.y + y * moving))
        case .toward(let x, let y, let speed):
            return (Self.approach(base.x, x, speed * topSpeed.x * elapsed), Self.approach(base.y, y, speed * topSpeed.y * elapsed))
        }
    }

    /// Generic units/s at `time`.
    func rate(at time: Double) -> (x: Double, y: Double) {
        switch motion {
        case .still: return (0, 0)
        case .rate(let x, let y, let until): return time < until ? (x, y) : (0, 0)
        case .toward(let x, let y, let speed):
            let now = pose(at: time), top = (x: speed * topSpeed.x, y: speed * topSpeed.y)
            return (now.x == x ? 0 : (x > now.x ? top.x : -top.x), now.y == y ? 0 : (y > now.y ? top.y : -top.y))
        }
    }

    /// Whether the camera should be moving by what it was told.
    func moving(at time: Double) -> Bool { rate(at: time) != (0, 0) }

    /// A move `sent` then, answered at `time`: the pose so far is kept, the new motion replaces the
    /// old (as ONVIF's does).
    mutating func told(_ motion: Motion, sent: Double, at time: Double) {
        let before = rate(at: time), now = pose(at: time)
        base = (now.x, now.y, time)
        self.motion = motion
        let after = rate(at: time), window = max(0, time - sent)
        doubt = (doubt.x + abs(after.x - before.x) * window, doubt.y + abs(after.y - before.y) * window)
    }

    /// A read the driver trusts: the pose is it from now on, still heading where it was told.
    mutating func read(x: Double, y: Double, at time: Double) {
        if case .rate(_, _, let until) = motion, time >= until { motion = .still }
        base = (x, y, time)
        doubt = (0, 0)
    }

    private static func approach(_ from: Double, _ to: Double, _ step: Double) -> Double {
        abs(to - from) <= step ? to : from + (to > from ? step : -step)
    }

    private static func clamp(_ g: Double) -> Double { min(1, max(-1, g)) }
}
