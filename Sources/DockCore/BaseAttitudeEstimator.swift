#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DockProtocol

/// How the stand's base is turned in the world, in the stand's angle convention (yaw positive left,
/// pitch positive up, rad), and how fast it turns (rad/s). Level and still on a desk.
public struct BaseAttitude: Sendable, Equatable {
    public var yaw: Double
    public var pitch: Double
    public var yawRate: Double
    public var pitchRate: Double

    public init(yaw: Double, pitch: Double, yawRate: Double = 0, pitchRate: Double = 0) {
        self.yaw = yaw; self.pitch = pitch; self.yawRate = yawRate; self.pitchRate = pitchRate
    }

    public static let level = BaseAttitude(yaw: 0, pitch: 0)
}

/// The base's attitude integrated from the IMU's gyro, so a hand-held stand can tell its own
/// motion from the subject's: the camera's aim in the world is the motor angles plus this.
///
/// The gyro is read in PROTOCOL.md's base frame (x forward, y left, z up, right-handed): yaw (left)
/// is the rate about z, pitch (up) the negated rate about y. The integral leaks back toward level
/// with `leakTimeConstant`, because gyro bias would otherwise drift it without bound; that makes the
/// estimate a high-pass of the base's motion: hand sway and walking bob are compensated, while a
/// slow, deliberate turn of the whole stand is left to the tracker to follow like subject motion.
/// A base at rest reports `.level`: on a desk the gyro reads only noise and bias, which compensating
/// would turn into motor jitter.
public struct BaseAttitudeEstimator: Sendable {
    public var leakTimeConstant: Double
    /// The base counts as moving (hand-held) while its gyro rate, RMS over about a second, exceeds
    /// this, rad/s: several times a MEMS gyro's noise, a fraction of a hand's sway.
    public var restRate: Double
    private var integrated: BaseAttitude = .level
    /// Mean square of the gyro rate, low-passed over `rateWindow` seconds.
    private var meanSquareRate = 0.0
    private let rateWindow = 1.0
    private var lastSampleTime: Double?
    /// (host time, yaw, pitch) over the last `historyDuration`: the attitude at a frame's capture time.
    private var history: [(time: Double, yaw: Double, pitch: Double)] = []
    private let historyDuration = 2.0

    public init(leakTimeConstant: Double = 4, restRate: Double = 0.02) {
        self.leakTimeConstant = leakTimeConstant
        self.restRate = restRate
    }

    /// Whether the base moves enough to be compensated.
    public var isMoving: Bool { meanSquareRate > restRate * restRate }

    /// The attitude now, `.level` while the base is at rest.
    public var current: BaseAttitude { isMoving ? integrated : .level }

    /// Adds one IMU sample that arrived at host time `time` (seconds). The integration step is the
    /// stand's own sample spacing, which transport jitter does not disturb.
    public mutating func add(_ sample: ImuSample, at time: Double) {
        let sampleTime = Double(sample.timeUs) / 1e6
        let yawRate = Double(sample.gyro.z), pitchRate = -Double(sample.gyro.y)
        var next = BaseAttitude(yaw: integrated.yaw, pitch: integrated.pitch, yawRate: yawRate, pitchRate: pitchRate)
        if let last = lastSampleTime, sampleTime > last, sampleTime - last < 0.5 {
            let dt = sampleTime - last
            // Trapezoidal integration, then the leak.
            let keep = exp(-dt / leakTimeConstant)
            next.yaw = (integrated.yaw + 0.5 * (integrated.yawRate + yawRate) * dt) * keep
            next.pitch = (integrated.pitch + 0.5 * (integrated.pitchRate + pitchRate) * dt) * keep
            meanSquareRate += (yawRate * yawRate + pitchRate * pitchRate - meanSquareRate) * (1 - exp(-dt / rateWindow))
        }
        lastSampleTime = sampleTime
        integrated = next
        let reported = current
        history.append((time, reported.yaw, reported.pitch))
        if let first = history.first, time - first.time > historyDuration { history.removeFirst(history.count / 4) }
    }

    /// The attitude at host time `time`, interpolated between samples (for a frame's capture time).
    public func attitude(at time: Double) -> (yaw: Double, pitch: Double) {
        guard let after = history.firstIndex(where: { $0.time >= time }) else {
            let now = current
            return (now.yaw, now.pitch)
        }
        guard after > 0 else { return (history[0].yaw, history[0].pitch) }
        let a = history[after - 1], b = history[after]
        let f = b.time > a.time ? (time - a.time) / (b.time - a.time) : 1
        return (a.yaw + f * (b.yaw - a.yaw), a.pitch + f * (b.pitch - a.pitch))
    }
}
