/// A UVC camera's zoom as the stand's zoom axis: ZOOM_ABSOLUTE's range (the camera's own units,
/// UVC names no magnification) mapped linearly to magnification 1…`maxZoom` (the profile's), or,
/// where the camera has no absolute zoom, ZOOM_CONTINUOUS as a signed speed (its maximum the
/// lens's top rate). `fullRangeSeconds` is how long the lens takes from wide to tele (0: at once,
/// a digital zoom); where the camera does not read its zoom back as it moves, the zoom is
/// estimated from what was sent at that pace.
struct V4L2ZoomDrive: Sendable {
    let control: V4L2Wire.ControlInfo
    /// ZOOM_ABSOLUTE, where the camera has it (steered and read back).
    let absolute: V4L2Wire.ControlInfo?
    let maxZoom: Double
    let fullRangeSeconds: Double

    var steersByPosition: Bool { absolute != nil }
    var measured: Bool { absolute?.isVolatile ?? false }

    /// ZOOM_ABSOLUTE's range; a continuous-only camera's zoom is tracked in 0…1.
    var range: ClosedRange<Double> {
        guard let a = absolute else { return 0...1 }
        return Double(a.minimum)...Double(a.maximum)
    }
    private var span: Double { range.upperBound - range.lowerBound }

    func magnification(_ units: Double) -> Double {
        1 + (min(range.upperBound, max(range.lowerBound, units)) - range.lowerBound) / span * (maxZoom - 1)
    }

    /// ZOOM_ABSOLUTE units of a magnification, on the control's step and within its range.
    func units(magnification: Double) -> Int32 {
        let m = magnification.isFinite ? min(maxZoom, max(1, magnification)) : 1
        let step = Double(max(1, control.step))
        let exact = range.lowerBound + (m - 1) / (maxZoom - 1) * span
        return Int32(min(range.upperBound, max(range.lowerBound, range.lowerBound + ((exact - range.lowerBound) / step).rounded() * step)))
    }

    /// Magnification/s at full speed (a digital zoom's: 10× a second, a jump in effect).
    var topRate: Double { fullRangeSeconds > 0 ? (maxZoom - 1) / fullRangeSeconds : 10 * (maxZoom - 1) }
    /// Zoom units/s at full speed.
    var topSpeed: Double { topRate / (maxZoom - 1) * span }

    /// A rate (magnification/s) as ZOOM_CONTINUOUS's speed value.
    func speed(_ rate: Double) -> Int32 {
        let top = Double(control.maximum)
        return Int32(min(top, max(-top, (rate / topRate * top).rounded())))
    }

    /// Where the zoom is (its units) by what it was told: moving at `topSpeed` from `last` toward
    /// the target, or at the speed held, within its range.
    func estimate(from last: (value: Double, time: Double), told: (value: Double, time: Double)?, at time: Double) -> Double {
        guard let told else { return last.value }
        let elapsed = max(0, time - max(last.time, told.time))
        if !steersByPosition {
            let rate = topSpeed * told.value / Double(max(1, control.maximum))
            return min(range.upperBound, max(range.lowerBound, last.value + rate * elapsed))
        }
        if fullRangeSeconds <= 0 { return told.value }
        let step = topSpeed * elapsed, distance = told.value - last.value
        return abs(distance) <= step ? told.value : last.value + (distance > 0 ? step : -step)
    }
}
