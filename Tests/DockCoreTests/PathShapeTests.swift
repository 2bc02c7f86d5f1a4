@testable import DockCore
import Testing

@Suite("Path shapes")
struct PathShapeTests {
    @Test("the monotone spline passes through its keyframes, never overshoots them, and its peaks are exact")
    func spline() {
        let times = [0, 0.3, 0.65, 1.0, 1.2, 1.6], values = [0.2, 0.35, 0.1, 0.3, 0.31, 0.2]
        let spline = MonotoneCubicSpline(times: times, values: values)
        for (t, v) in zip(times, values) { #expect(abs(spline.sample(at: t).position - v) < 1e-12) }
        #expect(spline.sample(at: 0).velocity == 0 && spline.sample(at: 1.6).velocity == 0)
        for segment in 0..<(times.count - 1) {
            let lo = min(values[segment], values[segment + 1]), hi = max(values[segment], values[segment + 1])
            var speed = 0.0, accel = 0.0, previous = spline.sample(at: times[segment]).velocity
            let h = (times[segment + 1] - times[segment]) / 1000
            for k in 1...1000 {
                let s = spline.sample(at: times[segment] + Double(k) * h - 1e-12)
                #expect(s.position >= lo - 1e-9 && s.position <= hi + 1e-9)
                speed = max(speed, abs(s.velocity))
                accel = max(accel, abs(s.velocity - previous) / h)
                previous = s.velocity
            }
            let peaks = spline.segmentPeaks(segment)
            #expect(abs(peaks.speed - speed) < 1e-3 * max(1, speed))
            #expect(peaks.accel >= accel * 0.99 && peaks.accel < accel * 1.02 + 1e-6)
        }
    }

    @Test("minimum jerk: rest to rest, peak speed 1.875·d/T, shortest duration meets both limits")
    func minimumJerk() {
        let move = MinimumJerkMove(start: 1, end: 3, duration: 2)
        #expect(move.sample(at: 0) == (1, 0) && move.sample(at: 2) == (3, 0))
        #expect(abs(move.sample(at: 1).velocity - 1.875) < 1e-12 && abs(move.sample(at: 1).position - 2) < 1e-12)
        let d = 2.0
        let T = MinimumJerkMove.shortestDuration(distance: d, maxSpeed: 2.4, maxAccel: 9.6)
        #expect(abs(T - 1.5625) < 1e-9)
        let fast = MinimumJerkMove(start: 0, end: d, duration: T)
        var peakAccel = 0.0
        for k in 1..<1000 {
            let a = (fast.sample(at: Double(k + 1) * T / 1000).velocity - fast.sample(at: Double(k) * T / 1000).velocity) / (T / 1000)
            peakAccel = max(peakAccel, abs(a))
        }
        #expect(peakAccel <= 9.6)
    }
}
