/// Where a head is by what it was told, for drivers whose stand does not say where it is while
/// it moves: an ONVIF camera whose GetStatus says where the motion began until the head is still
/// again (or nothing new at all), or gives no position, whose pose is dead-reckoned from the moves
/// alone (`travel`); a Pelco-D unit that answers no position query. A rate runs until a stop or
/// its end (an ONVIF ContinuousMove's Timeout); a target is approached at the speed the move
/// carried (a fraction of the top speeds; 1 without one). Units are the driver's (`PanTiltRange`).
/// Pure and clock-free: times are the driver's (a move's reply).
/// It keeps how far it may be off (`doubt`), for the driver to have the head read before it is
/// too far.
struct PoseEstimate: Sendable {
    enum Motion: Sendable, Equatable {
        case still
        /// Units/s, until `until` (an ONVIF ContinuousMove's Timeout; .infinity: until told otherwise).
        case rate(x: Double, y: Double, until: Double)
        case toward(x: Double, y: Double, speed: Double = 1)
    }

    /// The top speeds, units/s.
    let topSpeed: (x: Double, y: Double)
    /// The positions the head takes: the pose stays within them.
    let range: PanTiltRange
    /// Dead-reckoned (nothing read): how wide the head's range is. Where in it the
    /// head started is unknown, but it turns no further from any pose it reached than that: told
    /// on past it, the head has stopped at its end, and so does the pose. nil where reads place
    /// the pose in `range`.
    let travel: (x: Double, y: Double)?
    /// The lowest and highest pose reached, for `travel`.
    private var reached: (x: ClosedRange<Double>, y: ClosedRange<Double>)
    private(set) var base: (x: Double, y: Double, time: Double)
    private(set) var motion = Motion.still
    /// How far the pose may be off: a move counts from its reply, but the head
    /// changed its rate somewhere between its send and its reply, so each change adds what that
    /// window at the difference of the rates turns; a read clears it.
    private(set) var doubt: (x: Double, y: Double) = (0, 0)

    init(topSpeed: (x: Double, y: Double), at pose: (x: Double, y: Double), time: Double, range: PanTiltRange = PanTiltRange(),
         travel: (x: Double, y: Double)? = nil) {
        self.topSpeed = topSpeed
        self.range = range
        self.travel = travel
        base = (pose.x, pose.y, time)
        reached = (pose.x...pose.x, pose.y...pose.y)
    }

    func pose(at time: Double) -> (x: Double, y: Double) {
        let elapsed = max(0, time - base.time)
        switch motion {
        case .still:
            return (base.x, base.y)
        case .rate(let x, let y, let until):
            let moving = max(0, min(time, until) - base.time)
            return limits.clamped(x: base.x + x * moving, y: base.y + y * moving)
        case .toward(let x, let y, let speed):
            let target = limits.clamped(x: x, y: y)
            return (Self.approach(base.x, target.x, speed * topSpeed.x * elapsed), Self.approach(base.y, target.y, speed * topSpeed.y * elapsed))
        }
    }

    /// Units/s at `time`: none on an axis held at the end of where it may go.
    func rate(at time: Double) -> (x: Double, y: Double) {
        let now = pose(at: time), limits = limits
        switch motion {
        case .still: return (0, 0)
        case .rate(let x, let y, let until):
            guard time < until else { return (0, 0) }
            return (Self.unlessHeld(x, at: now.x, within: limits.x), Self.unlessHeld(y, at: now.y, within: limits.y))
        case .toward(let x, let y, let speed):
            let target = limits.clamped(x: x, y: y), top = (x: speed * topSpeed.x, y: speed * topSpeed.y)
            return (now.x == target.x ? 0 : (target.x > now.x ? top.x : -top.x), now.y == target.y ? 0 : (target.y > now.y ? top.y : -top.y))
        }
    }

    /// Whether the head should be moving by what it was told.
    func moving(at time: Double) -> Bool { rate(at: time) != (0, 0) }

    /// A move `sent` then, answered at `time`: the pose so far is kept, the new motion replaces the
    /// old (as an ONVIF camera's and a Pelco-D unit's do).
    mutating func told(_ motion: Motion, sent: Double, at time: Double) {
        let before = rate(at: time), now = pose(at: time)
        rebase(now, at: time)
        self.motion = motion
        let after = rate(at: time), window = max(0, time - sent)
        doubt = (doubt.x + abs(after.x - before.x) * window, doubt.y + abs(after.y - before.y) * window)
    }

    /// A read the driver trusts: the pose is it from now on, still heading where it was told.
    mutating func read(x: Double, y: Double, at time: Double) {
        if case .rate(_, _, let until) = motion, time >= until { motion = .still }
        rebase((x, y), at: time)
        doubt = (0, 0)
    }

    private mutating func rebase(_ pose: (x: Double, y: Double), at time: Double) {
        base = (pose.x, pose.y, time)
        reached = (min(reached.x.lowerBound, pose.x)...max(reached.x.upperBound, pose.x),
                   min(reached.y.lowerBound, pose.y)...max(reached.y.upperBound, pose.y))
    }

    /// Where the pose may go from `base`: `range`, and dead-reckoned, no further than `travel`
    /// from the lowest and the highest pose reached. (Within one motion the pose runs one way, so
    /// limits from the poses reached before it hold throughout.)
    private var limits: PanTiltRange {
        guard let travel else { return range }
        return PanTiltRange(x: Self.within(range.x, reached.x, travel.x), y: Self.within(range.y, reached.y, travel.y))
    }

    private static func within(_ range: ClosedRange<Double>, _ reached: ClosedRange<Double>, _ travel: Double) -> ClosedRange<Double> {
        let low = max(range.lowerBound, reached.upperBound - travel), high = min(range.upperBound, reached.lowerBound + travel)
        return low...high
    }

    private static func unlessHeld(_ rate: Double, at pose: Double, within limits: ClosedRange<Double>) -> Double {
        (rate > 0 && pose >= limits.upperBound) || (rate < 0 && pose <= limits.lowerBound) ? 0 : rate
    }

    private static func approach(_ from: Double, _ to: Double, _ step: Double) -> Double {
        abs(to - from) <= step ? to : from + (to > from ? step : -step)
    }
}
