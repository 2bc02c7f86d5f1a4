/// The pan and tilt positions a head takes, in its driver's units (an ONVIF camera's generic
/// −1…1, a Pelco-D unit's radians): where a pose estimate stays and targets are clamped.
struct PanTiltRange: Sendable, Equatable {
    var x: ClosedRange<Double> = -1...1
    var y: ClosedRange<Double> = -1...1

    func clamped(x: Double, y: Double) -> (x: Double, y: Double) {
        (min(self.x.upperBound, max(self.x.lowerBound, x)), min(self.y.upperBound, max(self.y.lowerBound, y)))
    }
}
