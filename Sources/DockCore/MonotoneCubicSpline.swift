/// A C¹ cubic Hermite spline through keyframes, with Steffen's (1990) tangents and zero velocity at
/// both ends. Steffen's tangents make each segment monotone between its keyframes, so the curve never
/// overshoots a keyframe: checking the keyframes against the position limits checks the whole path.
/// At a turning point (a nod's top) the tangent is zero, so the stand reverses at rest.
struct MonotoneCubicSpline: Sendable, Equatable {
    let times: [Double]
    let values: [Double]
    /// dp/dt at each keyframe.
    let slopes: [Double]

    /// `times` strictly increasing, at least two.
    init(times: [Double], values: [Double]) {
        precondition(times.count >= 2 && times.count == values.count)
        self.times = times
        self.values = values
        var slopes = [Double](repeating: 0, count: times.count)
        for i in 1..<(times.count - 1) {
            let h0 = times[i] - times[i - 1], h1 = times[i + 1] - times[i]
            let d0 = (values[i] - values[i - 1]) / h0, d1 = (values[i + 1] - values[i]) / h1
            let p = (d0 * h1 + d1 * h0) / (h0 + h1)
            let bound = Swift.min(abs(d0), abs(d1), 0.5 * abs(p))
            slopes[i] = (Self.sign(d0) + Self.sign(d1)) * bound
        }
        self.slopes = slopes
    }

    var duration: Double { times[times.count - 1] }

    /// Position and velocity at `t`; held at the ends outside the keyframes' span.
    func sample(at t: Double) -> (position: Double, velocity: Double) {
        if t <= times[0] { return (values[0], 0) }
        if t >= duration { return (values[values.count - 1], 0) }
        var i = 0
        while times[i + 1] < t { i += 1 }
        let h = times[i + 1] - times[i]
        let s = (t - times[i]) / h
        let (p0, p1, m0, m1) = (values[i], values[i + 1], slopes[i] * h, slopes[i + 1] * h)
        let s2 = s * s, s3 = s2 * s
        let position = (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * m1
        let dp = (6 * s2 - 6 * s) * p0 + (3 * s2 - 4 * s + 1) * m0 + (-6 * s2 + 6 * s) * p1 + (3 * s2 - 2 * s) * m1
        return (position, dp / h)
    }

    /// Exact peak |velocity| and |acceleration| of segment i (keyframe i to i+1): the velocity is a
    /// quadratic in s (peak at an end or its vertex), the acceleration linear (peak at an end).
    func segmentPeaks(_ i: Int) -> (speed: Double, accel: Double) {
        let h = times[i + 1] - times[i]
        let (p0, p1, m0, m1) = (values[i], values[i + 1], slopes[i] * h, slopes[i + 1] * h)
        // v(s)·h = a·s² + b·s + c
        let a = 6 * p0 + 3 * m0 - 6 * p1 + 3 * m1
        let b = -6 * p0 - 4 * m0 + 6 * p1 - 2 * m1
        let c = m0
        var speed = Swift.max(abs(c), abs(a + b + c))
        if a != 0 {
            let vertex = -b / (2 * a)
            if vertex > 0 && vertex < 1 { speed = Swift.max(speed, abs((a * vertex + b) * vertex + c)) }
        }
        // acc(s)·h² = 2a·s + b
        let accel = Swift.max(abs(b), abs(2 * a + b))
        return (speed / h, accel / (h * h))
    }

    private static func sign(_ x: Double) -> Double { x > 0 ? 1 : (x < 0 ? -1 : 0) }
}
