/// The head of the emulated ONVIF camera (`EmulatedONVIFCamera`): pan and tilt in degrees, each
/// turning at a velocity (a ContinuousMove) or toward a target at a rate (an absolute or relative
/// move), stopping at its ends — tests/peers/onvif_camera.py's `Axis` and the motion of its
/// `Camera`, without the zoom.
public struct EmulatedONVIFHead: Sendable {
    public struct Axis: Sendable {
        /// The degrees at the generic space's −1 and 1.
        public let atMinusOne: Double, atOne: Double
        /// Degrees/s at a velocity (or Speed) of 1.
        public let speed: Double
        public internal(set) var position: Double
        var velocity = 0.0
        var target: (goal: Double, rate: Double)?

        init(atMinusOne: Double, atOne: Double, speed: Double, generic: Double) {
            self.atMinusOne = atMinusOne
            self.atOne = atOne
            self.speed = speed
            position = atMinusOne + (generic + 1) / 2 * (atOne - atMinusOne)
        }

        var low: Double { min(atMinusOne, atOne) }
        var high: Double { max(atMinusOne, atOne) }
        func degrees(generic g: Double) -> Double { atMinusOne + (g + 1) / 2 * (atOne - atMinusOne) }
        var generic: Double { (position - atMinusOne) / (atOne - atMinusOne) * 2 - 1 }

        /// Moving, as GetStatus's MoveStatus says: toward a target, or at a velocity not against an end.
        var moving: Bool {
            if target != nil { return true }
            if velocity > 0 { return position < high - 1e-6 }
            if velocity < 0 { return position > low + 1e-6 }
            return false
        }

        mutating func advance(_ dt: Double) {
            guard dt > 0 else { return }
            if let (goal, rate) = target {
                let d = goal - position
                let step = min(abs(d), rate * dt)
                position += d > 0 ? step : -step
                if abs(goal - position) < 1e-9 { (position, target) = (goal, nil) }
            } else {
                position += velocity * dt
            }
            position = min(high, max(low, position))
        }

        mutating func stop() { (velocity, target) = (0, nil) }
    }

    public internal(set) var pan: Axis
    public internal(set) var tilt: Axis
    /// When the running ContinuousMove ends (its Timeout), s on the camera's clock.
    var deadline: Double?
    private var time = 0.0

    /// `start`: the generic position the head starts at.
    public init(pan: (atMinusOne: Double, atOne: Double, speed: Double), tilt: (atMinusOne: Double, atOne: Double, speed: Double),
                start: (pan: Double, tilt: Double)) {
        self.pan = Axis(atMinusOne: pan.atMinusOne, atOne: pan.atOne, speed: pan.speed, generic: start.pan)
        self.tilt = Axis(atMinusOne: tilt.atMinusOne, atOne: tilt.atOne, speed: tilt.speed, generic: start.tilt)
    }

    public var moving: Bool { pan.moving || tilt.moving }

    /// Brings the head up to `now` (s) with the motion in force; a velocity move ends at its deadline.
    mutating func run(to now: Double) {
        if let end = deadline, end <= now {
            pan.advance(end - time); tilt.advance(end - time)
            pan.velocity = 0; tilt.velocity = 0
            time = max(time, end)
            deadline = nil
        }
        pan.advance(now - time); tilt.advance(now - time)
        time = max(time, now)
    }

    /// A new move replaces the motion in force.
    mutating func stop() {
        pan.stop(); tilt.stop()
        deadline = nil
    }

    /// Velocities (−1…1 of the top speeds, the generic position's way) until `deadline`.
    mutating func turn(x: Double, y: Double, until deadline: Double) {
        stop()
        pan.velocity = x * pan.speed
        tilt.velocity = y * tilt.speed
        self.deadline = deadline
    }

    /// Toward degrees, each axis at `speed` of its top speed (0: the top speed); pan and tilt arrive
    /// together, the slower one setting the time, as on most heads.
    mutating func go(pan goalPan: Double, tilt goalTilt: Double, speed: Double) {
        stop()
        let fraction = speed <= 0 ? 1 : speed
        let goals = (pan: min(pan.high, max(pan.low, goalPan)), tilt: min(tilt.high, max(tilt.low, goalTilt)))
        let span = max(abs(goals.pan - pan.position) / (pan.speed * fraction), abs(goals.tilt - tilt.position) / (tilt.speed * fraction))
        pan.target = (goals.pan, span > 0 ? max(abs(goals.pan - pan.position) / span, 1e-9) : pan.speed * fraction)
        tilt.target = (goals.tilt, span > 0 ? max(abs(goals.tilt - tilt.position) / span, 1e-9) : tilt.speed * fraction)
    }
}
