import DockProtocol

/// Turns an `Animation` into one spline per stand axis, starting at the present pose, and refuses
/// what the stand cannot play. Pure: everything it needs is passed in.
struct AnimationPlanner {
    let axes: [Axis]
    let limits: [EffectiveAxisLimits]
    let start: [Double]
    let configuration: MotionConfiguration

    /// Built-ins stay this far inside the position limits.
    static let builtInMargin = 0.02

    func plan(_ animation: Animation) throws(MotionError) -> [MonotoneCubicSpline] {
        switch animation.source {
        case .keyframes(let keyframes, let positioning): try planCustom(keyframes, positioning)
        case .builtIn(let kind): try planBuiltIn(kind)
        }
    }

    // MARK: - Custom

    private func planCustom(_ keyframes: [Keyframe], _ positioning: Animation.Positioning) throws(MotionError) -> [MonotoneCubicSpline] {
        guard !keyframes.isEmpty else { throw .invalidParameter("an animation needs at least one keyframe") }
        guard keyframes.count <= configuration.maxKeyframes else {
            throw .invalidParameter("\(keyframes.count) keyframes; at most \(configuration.maxKeyframes)")
        }
        var previous = 0.0
        for (k, frame) in keyframes.enumerated() {
            guard frame.time.isFinite, frame.pitch.isFinite, frame.yaw.isFinite, frame.roll?.isFinite ?? true else {
                throw .invalidParameter("keyframe \(k) has a non-finite number")
            }
            guard frame.time > previous else {
                throw .invalidParameter("keyframe \(k) at \(frame.time.formatted3) s: times must be strictly increasing and after 0")
            }
            previous = frame.time
        }
        guard previous <= configuration.maxAnimationDuration else {
            throw .invalidParameter("lasts \(previous.formatted3) s; at most \(configuration.maxAnimationDuration.formatted3) s")
        }
        let rollCount = keyframes.count { $0.roll != nil }
        guard rollCount == 0 || rollCount == keyframes.count else {
            throw .invalidParameter("roll must be given in every keyframe or in none")
        }
        // An axis the stand lacks may appear only with zeros (the default for pitch and yaw).
        for axis in Axis.allCases where !axes.contains(axis) {
            if keyframes.contains(where: { Self.value(of: axis, in: $0).map { $0 != 0 } ?? false }) { throw .notSupported(axis) }
        }

        let times = [0.0] + keyframes.map(\.time)
        var splines: [MonotoneCubicSpline] = []
        for (i, axis) in axes.enumerated() {
            let values = keyframes.map { frame -> Double in
                guard let v = Self.value(of: axis, in: frame) else { return start[i] }  // roll not animated: hold
                return positioning == .relative ? start[i] + v : v
            }
            for (k, v) in values.enumerated() where !limits[i].contains(v) {
                throw .invalidParameter("keyframe \(k) (t = \(keyframes[k].time.formatted3) s) puts \(axis) at \(v.formatted3)\(axis.unitSuffix), outside the limits \(limits[i].rangeText(of: axis))")
            }
            let spline = MonotoneCubicSpline(times: times, values: [start[i]] + values)
            try checkFeasible(spline, axis: axis, limits: limits[i])
            splines.append(spline)
        }
        return splines
    }

    private static func value(of axis: Axis, in frame: Keyframe) -> Double? {
        switch axis {
        case .yaw: frame.yaw
        case .pitch: frame.pitch
        case .roll: frame.roll
        case .zoom: nil  // keyframes are angles; the zoom holds through an animation
        }
    }

    private func checkFeasible(_ spline: MonotoneCubicSpline, axis: Axis, limits: EffectiveAxisLimits) throws(MotionError) {
        for segment in 0..<(spline.times.count - 1) {
            let peaks = spline.segmentPeaks(segment)
            let span = "\(spline.times[segment].formatted3)–\(spline.times[segment + 1].formatted3) s"
            if peaks.speed > limits.maxSpeed * (1 + 1e-9) {
                throw .invalidParameter("\(axis) needs \(peaks.speed.formatted3) rad/s between \(span); the limit is \(limits.maxSpeed.formatted3) rad/s")
            }
            if peaks.accel > limits.maxAccel * (1 + 1e-9) {
                throw .invalidParameter("\(axis) needs \(peaks.accel.formatted3) rad/s² between \(span); the limit is \(limits.maxAccel.formatted3) rad/s²")
            }
        }
    }

    // MARK: - Built-ins

    private func planBuiltIn(_ kind: Animation.BuiltIn) throws(MotionError) -> [MonotoneCubicSpline] {
        guard axes.contains(kind.primaryAxis) else { throw .notSupported(kind.primaryAxis) }
        for (i, axis) in axes.enumerated() where !limits[i].contains(start[i]) {
            throw .outOfRange("\(axis) is at \(start[i].formatted3)\(axis.unitSuffix), outside the limits \(limits[i].rangeText(of: axis))")
        }
        var times: [Double], values: [[Double]]
        (times, values) = kind == .wakeup ? wakeupTrack() : relativeTrack(kind)
        // Slow the whole timeline uniformly: speed scales with 1/k and acceleration with 1/k².
        let margin = configuration.planningMargin
        var stretch = 1.0
        for (i, track) in values.enumerated() {
            let spline = MonotoneCubicSpline(times: times, values: track)
            for segment in 0..<(times.count - 1) {
                let peaks = spline.segmentPeaks(segment)
                stretch = max(stretch, peaks.speed / (margin * limits[i].maxSpeed),
                              (peaks.accel / (margin * limits[i].maxAccel)).squareRoot())
            }
        }
        times = times.map { $0 * stretch }
        guard times[times.count - 1] <= configuration.maxAnimationDuration else {
            throw .invalidParameter("\(kind.rawValue) would take \(times[times.count - 1].formatted3) s at this stand's limits; at most \(configuration.maxAnimationDuration.formatted3) s")
        }
        return values.map { MonotoneCubicSpline(times: times, values: $0) }
    }

    /// Times (from 0) and absolute values per axis for yes / no / kapow, amplitudes fitted to the limits.
    private func relativeTrack(_ kind: Animation.BuiltIn) -> ([Double], [[Double]]) {
        let shape = kind.relativeShape!
        let times = [0.0] + shape.points.map(\.time)
        let values = axes.enumerated().map { i, axis -> [Double] in
            guard axis == shape.axis else { return times.map { _ in start[i] } }
            let up = (limits[i].max - Self.builtInMargin) - start[i]
            let down = start[i] - (limits[i].min + Self.builtInMargin)
            var scale = 1.0
            for point in shape.points where point.offset != 0 {
                scale = min(scale, point.offset > 0 ? up / point.offset : down / -point.offset)
            }
            scale = max(0, scale)
            return [start[i]] + shape.points.map { start[i] + scale * $0.offset }
        }
        return (times, values)
    }

    private func wakeupTrack() -> ([Double], [[Double]]) {
        let B = Animation.BuiltIn.self
        let times = [0.0] + B.wakeupTimes
        let values = axes.enumerated().map { i, axis -> [Double] in
            let l = limits[i]
            func inside(_ x: Double) -> Double {
                min(l.max - Self.builtInMargin, max(l.min + Self.builtInMargin, x))
            }
            let home = inside(0)
            let s = start[i]
            guard axis == .pitch else {
                // Yaw and roll hold while the head droops, then turn home during the rise.
                return [s, s, s, home, home]
            }
            let droop = min(s, inside(home - B.wakeupDroop))
            return [s, droop, droop, inside(home + B.wakeupStretch), home]
        }
        return (times, values)
    }
}
