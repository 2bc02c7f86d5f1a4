import DockProtocol

/// The mechanical model of one axis: what a stand's motor, gearbox and encoder do.
public struct AxisModel: Sendable, Equatable {
    public var axis: Axis
    public var continuous: Bool
    public var min: Double
    public var max: Double
    public var maxSpeed: Double
    public var maxAccel: Double
    /// First-order lag between commanded and actual velocity, seconds.
    public var timeConstant: Double
    public var countsPerRev: UInt32
    /// Standard deviation of the reported position, rad.
    public var positionNoise: Double
    /// Dead band between motor and output shaft, rad (0 = none).
    public var backlash: Double

    public init(axis: Axis, continuous: Bool, min: Double, max: Double, maxSpeed: Double, maxAccel: Double,
                timeConstant: Double = 0.02, countsPerRev: UInt32 = 16384, positionNoise: Double = 0.0002,
                backlash: Double = 0) {
        self.axis = axis; self.continuous = continuous; self.min = min; self.max = max
        self.maxSpeed = maxSpeed; self.maxAccel = maxAccel; self.timeConstant = timeConstant
        self.countsPerRev = countsPerRev; self.positionNoise = positionNoise; self.backlash = backlash
    }

    public var capability: AxisCapability {
        AxisCapability(axis: axis, continuous: continuous, min: Float(min), max: Float(max),
                       maxSpeed: Float(maxSpeed), maxAccel: Float(maxAccel), countsPerRev: countsPerRev)
    }
}

/// What the axis is asked to do.
enum AxisCommand: Sendable, Equatable {
    case velocity(Double)
    /// Cubic Hermite from (p0, v0) at `start` to (p1, v1) at `start + duration`, then hold / coast.
    case trajectory(start: Double, duration: Double, p0: Double, v0: Double, p1: Double, v1: Double)
    case hold(Double)
    /// Decelerate at max acceleration, then hold where it stopped.
    case stopping
}

/// The state of one axis and its integration step. Positions in rad, times in seconds.
struct AxisState: Sendable {
    var model: AxisModel
    /// The host's narrower limits (LIMITS), reset by HELLO.
    var limitMin: Double
    var limitMax: Double
    var limitSpeed: Double
    var limitAccel: Double

    var motorPosition: Double = 0
    /// The output shaft (what the camera sees); differs from the motor by backlash.
    var outputPosition: Double = 0
    var velocity: Double = 0
    var acceleration: Double = 0
    var command: AxisCommand = .hold(0)
    var enabled = true
    var stalledUntil: Double = -1

    init(model: AxisModel) {
        self.model = model
        limitMin = model.min; limitMax = model.max
        limitSpeed = model.maxSpeed; limitAccel = model.maxAccel
        // Powered up at home, or at the nearest end of a range without it (a zoom: 1.0, wide).
        if !model.continuous {
            motorPosition = Swift.min(Swift.max(0, model.min), model.max)
            outputPosition = motorPosition
        }
    }

    mutating func resetLimits() {
        limitMin = model.min; limitMax = model.max
        limitSpeed = model.maxSpeed; limitAccel = model.maxAccel
    }

    func stalled(at time: Double) -> Bool { time < stalledUntil }

    /// Position-loop gain for following a trajectory or holding, 1/s.
    private static let positionGain = 25.0

    mutating func step(dt: Double, time: Double) {
        let desired = desiredVelocity(at: time)
        if stalled(at: time) || !enabled {
            // A stalled motor does not turn; a released one coasts to rest on friction.
            acceleration = stalled(at: time) ? 0 : -velocity / 0.05
            velocity = stalled(at: time) ? 0 : velocity + acceleration * dt
        } else {
            let speed = Swift.min(limitSpeed, model.maxSpeed)
            let accelLimit = Swift.min(limitAccel, model.maxAccel)
            let target = Swift.max(-speed, Swift.min(speed, desired))
            let tau = Swift.max(model.timeConstant, dt)
            acceleration = Swift.max(-accelLimit, Swift.min(accelLimit, (target - velocity) / tau))
            velocity += acceleration * dt
        }
        let before = motorPosition
        motorPosition += velocity * dt
        if !model.continuous {
            // Host LIMITS may exclude where the axis stands: it then moves only back toward the
            // range and never jumps into it (PROTOCOL.md §4 LIMITS). Inside, it stops at the edge.
            let lo = Swift.max(model.min, limitMin), hi = Swift.min(model.max, limitMax)
            if motorPosition <= lo && velocity <= 0 { motorPosition = Swift.max(motorPosition, Swift.min(before, lo)); velocity = 0 }
            if motorPosition >= hi && velocity >= 0 { motorPosition = Swift.min(motorPosition, Swift.max(before, hi)); velocity = 0 }
        }
        let half = model.backlash / 2
        if motorPosition - outputPosition > half { outputPosition = motorPosition - half }
        if outputPosition - motorPosition > half { outputPosition = motorPosition + half }
        if case .stopping = command, abs(velocity) < 1e-4 { command = .hold(motorPosition) }
    }

    private func desiredVelocity(at time: Double) -> Double {
        switch command {
        case .velocity(let v):
            return v
        case .hold(let p):
            return Self.positionGain * (p - motorPosition)
        case .stopping:
            return 0
        case .trajectory(let start, let duration, let p0, let v0, let p1, let v1):
            let t = time - start
            if t >= duration {
                if model.continuous && v1 != 0 { return v1 + Self.positionGain * (p1 + v1 * (t - duration) - motorPosition) }
                return Self.positionGain * (p1 - motorPosition)
            }
            let (p, v) = Self.hermite(t: Swift.max(0, t), duration: duration, p0: p0, v0: v0, p1: p1, v1: v1)
            return v + Self.positionGain * (p - motorPosition)
        }
    }

    /// Position and velocity of the cubic Hermite segment at `t`.
    static func hermite(t: Double, duration T: Double, p0: Double, v0: Double, p1: Double, v1: Double) -> (Double, Double) {
        let s = t / T
        let s2 = s * s, s3 = s2 * s
        let p = (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * T * v0 + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * T * v1
        let dp = ((6 * s2 - 6 * s) * p0 + (3 * s2 - 4 * s + 1) * T * v0 + (-6 * s2 + 6 * s) * p1 + (3 * s2 - 2 * s) * T * v1) / T
        return (p, dp)
    }

    /// The shortest duration that keeps a rest-to-rest Hermite within speed and acceleration limits
    /// (its peak speed is 1.5·d/T, its peak acceleration 6·d/T²).
    func minimumDuration(distance d: Double) -> Double {
        let speed = Swift.min(limitSpeed, model.maxSpeed), accel = Swift.min(limitAccel, model.maxAccel)
        return Swift.max(1.5 * abs(d) / speed, (6 * abs(d) / accel).squareRoot(), 0.01)
    }

    var status: AxisStatus {
        var s: AxisStatus = []
        if !model.continuous {
            if motorPosition <= Swift.max(model.min, limitMin) + 1e-6 { s.insert(.atMin) }
            if motorPosition >= Swift.min(model.max, limitMax) - 1e-6 { s.insert(.atMax) }
        }
        if !enabled { s.insert(.disabled) }
        if case .trajectory = command { s.insert(.movingToTarget) }
        return s
    }
}
