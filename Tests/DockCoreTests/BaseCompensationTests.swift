#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DockCore
import DockProtocol
import Testing

@Suite("Hand-held base compensation")
struct BaseCompensationTests {
    /// 100 Hz IMU samples of a base swaying `amplitude` rad in yaw at `frequency` Hz and nodding up
    /// by `pitchAmplitude` at 1.8 Hz, with a gyro bias; the estimator after each one.
    private func sway(seconds: Double, amplitude: Double, pitchAmplitude: Double, frequency: Double = 0.25,
                      bias: Float = 0.001, check: (Double, BaseAttitudeEstimator) -> Void) {
        var estimator = BaseAttitudeEstimator()
        let w = 2 * Double.pi * frequency, wp = 2 * Double.pi * 1.8
        for step in 0...Int(seconds * 100) {
            let t = Double(step) / 100
            let yawRate = amplitude * w * cos(w * t), pitchUpRate = pitchAmplitude * wp * cos(wp * t)
            // PROTOCOL.md's base frame: z up (yaw left positive), y left (pitch up is negative about y).
            let sample = ImuSample(timeUs: UInt64(step) * 10_000, gyro: (x: 0, y: Float(-pitchUpRate) + bias, z: Float(yawRate) + bias),
                                   accel: (x: 0, y: 0, z: 9.81))
            estimator.add(sample, at: t + 0.003)
            check(t, estimator)
        }
    }

    @Test("the gyro's integral follows a hand's sway and bob, pitch up from a negative rate about y")
    func followsSway() {
        var worst = (yaw: 0.0, pitch: 0.0)
        sway(seconds: 20, amplitude: 0.07, pitchAmplitude: 0.0175) { t, estimator in
            guard t > 10 else { return }
            let w = 2 * Double.pi * 0.25, wp = 2 * Double.pi * 1.8
            worst.yaw = max(worst.yaw, abs(estimator.current.yaw - 0.07 * sin(w * t)))
            worst.pitch = max(worst.pitch, abs(estimator.current.pitch - 0.0175 * sin(wp * t)))
        }
        // The leak (a 4 s high-pass) costs a few degrees of phase at 0.25 Hz, under a fifth of the
        // sway; the 0.001 rad/s bias leaves a steady offset of bias × time constant, 0.004 rad.
        let biasOffset = 0.001 * 4
        #expect(worst.yaw < 0.2 * 0.07 + biasOffset)
        #expect(worst.pitch < 0.1 * 0.0175 + biasOffset)
    }

    @Test("a base at rest reads level: bias and noise are not compensated")
    func restIsLevel() {
        var last = BaseAttitudeEstimator()
        sway(seconds: 5, amplitude: 0, pitchAmplitude: 0, bias: 0.003) { _, estimator in last = estimator }
        #expect(!last.isMoving)
        #expect(last.current == .level)
    }

    @Test("the controller cancels the base's rate, even inside its dead band")
    func cancelsBaseRate() {
        var controller = TrackingController(configuration: .tuned)
        // The subject is straight ahead in the world; the base is turned 0.05 rad left and turning
        // left at 0.2 rad/s, the motor already 0.05 rad right: the camera is on target.
        let base = BaseAttitude(yaw: 0.05, pitch: 0, yawRate: 0.2, pitchRate: 0)
        let target = TrackingTarget(yaw: 0, pitch: 0, time: 1)
        let rates = controller.command(target: target, positions: [.yaw: -0.05 - 0.2 * 0.03, .pitch: 0], base: base, at: 1)
        #expect(abs((rates[.yaw] ?? 0) + 0.2) < 1e-9)
        #expect(abs(rates[.pitch] ?? 1) < 1e-9)
    }
}
