/// Where a person's face sits on their body box, in body widths from the box's top centre, as
/// last measured with both: a face the detector misses in a frame whose body it found is, once
/// its own coasting estimate is the less certain, where the body's filter says, moving as the body
/// does, instead of coasting on its own velocity from its last detection (a walker who stops
/// while a face detector finds one frame in ten).
/// Body widths, not heights: sitting or bending shortens the box while the head stays on its top.
struct FaceOnBody: Sendable, Hashable {
    private let x: Double, y: Double, width: Double, height: Double

    init(face: Box, body: Box) {
        let unit = max(body.width, .leastNonzeroMagnitude)
        x = (face.centerX - body.centerX) / unit
        y = (face.centerY - body.top) / unit
        width = face.width / unit
        height = face.height / unit
    }

    /// The body's estimate carried to the face, where that is more certain than the face's own
    /// (coasting since its last detection); nil where it is not: a face missed for a frame or two
    /// keeps its own estimate, steadier than one carried by a body box's larger noise.
    func face(_ face: BoxKalmanFilter, on body: BoxKalmanFilter) -> BoxKalmanFilter? {
        let carried = body.carried(x: x, y: y, width: width, height: height)
        func uncertainty(_ filter: BoxKalmanFilter) -> Double { filter.centerX.positionVariance + filter.centerY.positionVariance }
        return uncertainty(carried) < uncertainty(face) ? carried : nil
    }
}
