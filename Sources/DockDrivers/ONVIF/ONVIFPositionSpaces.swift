/// The generic pan/tilt positions a camera takes: the XRange and YRange of its absolute pan/tilt
/// position space (GetConfigurationOptions' Spaces: its PTZ node's SupportedPTZSpaces), narrowed by
/// the PanTiltLimits of the profile's PTZ configuration, within the generic −1…1. A ceiling dome
/// advertises a tilt of −1…0.2, say, and answers an AbsoluteMove beyond with a SOAP fault.
extension PanTiltRange {
    /// The space the driver's moves are in: they name none, so the camera's default, the generic one.
    static let genericSpace = "http://www.onvif.org/ver10/tptz/PanTiltSpaces/PositionGenericSpace"
    /// The generic translation space, whose XRange and YRange bound a RelativeMove's translations
    /// (the same shape: the driver keeps them as a range too).
    static let translationSpace = "http://www.onvif.org/ver10/tptz/PanTiltSpaces/TranslationGenericSpace"

    /// Narrowed by the XRange and YRange of the first of `spaces` (Space2DDescriptions, or
    /// PanTiltLimits Ranges) in the generic space (`uri`) or naming none; a range that does not
    /// parse or leaves nothing is ignored.
    func narrowed(by spaces: [XMLElement], uri: String = genericSpace) -> PanTiltRange {
        guard let space = spaces.first(where: { $0.value("URI").map { $0 == uri } ?? true }) else { return self }
        var out = self
        if let x = Self.range(space.child("XRange"), within: x) { out.x = x }
        if let y = Self.range(space.child("YRange"), within: y) { out.y = y }
        return out
    }

    private static func range(_ element: XMLElement?, within outer: ClosedRange<Double>) -> ClosedRange<Double>? {
        guard let low = element?.value("Min").flatMap(Double.init), let high = element?.value("Max").flatMap(Double.init) else { return nil }
        let narrowed = (low: max(low, outer.lowerBound), high: min(high, outer.upperBound))
        return narrowed.low < narrowed.high ? narrowed.low...narrowed.high : nil
    }
}
