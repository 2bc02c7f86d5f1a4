/// An ONVIF camera's zoom as the stand's zoom axis: the zoom position space's range (the generic
/// space's 0…1 on most cameras) mapped linearly to magnification 1…`maxZoom` (ONVIF names no
/// magnification: the `max_zoom` option does), and a ContinuousMove zoom velocity of 1 crossing
/// that range in `fullRangeSeconds`.
struct ONVIFZoomScale: Sendable, Equatable {
    let range: ClosedRange<Double>
    let maxZoom: Double
    let fullRangeSeconds: Double

    private var span: Double { range.upperBound - range.lowerBound }

    func magnification(_ position: Double) -> Double {
        1 + (min(range.upperBound, max(range.lowerBound, position)) - range.lowerBound) / span * (maxZoom - 1)
    }

    /// The zoom position of a magnification, within the space's range.
    func position(magnification: Double) -> Double {
        let m = magnification.isFinite ? min(maxZoom, max(1, magnification)) : 1
        return range.lowerBound + (m - 1) / (maxZoom - 1) * span
    }

    /// Magnification/s at a zoom velocity of 1.
    var topRate: Double { (maxZoom - 1) / fullRangeSeconds }
    /// Zoom position units/s at a zoom velocity of 1.
    var topSpeed: Double { span / fullRangeSeconds }

    /// Magnification/s → a zoom velocity in −1…1.
    func velocity(_ rate: Double) -> Double { rate.isFinite ? min(1, max(-1, rate / topRate)) : 0 }
}
