/// One Kalman-filtered box of a track (a body, a face or an object) with its last measurement.
///
/// Keeps the filter as it stood right after the last update so that a re-found track can replay the
/// gap along a straight virtual path from the last sighting to the new one (OC-SORT's
/// observation-centric re-update): the velocity then reflects where the subject really went while
/// hidden, instead of the stale pre-occlusion velocity plus one large jump.
public struct TrackedBox: Sendable, Hashable {
    public private(set) var filter: BoxKalmanFilter
    public private(set) var lastMeasurement: Box
    public private(set) var lastUpdateTime: Double
    /// The last measurement's edges that lay on the image's border: where the box may go on unseen.
    public private(set) var clippedEdges: BoxEdges = []
    private var filterAtLastUpdate: BoxKalmanFilter

    init(box: Box, confidence: Double, time: Double, settings: KalmanSettings, clipped: BoxEdges) {
        clippedEdges = clipped
        filter = BoxKalmanFilter(box: box, settings: settings)
        filter.update(measurement: box, confidence: confidence)
        lastMeasurement = box
        lastUpdateTime = time
        filterAtLastUpdate = filter
    }

    /// The filtered box; while it coasts unmeasured its size stays within `maximumGrowth` of the
    /// last measured size (a constant-velocity size estimate would otherwise grow without bound).
    public var box: Box {
        let estimate = filter.box
        let limit = Self.maximumGrowth
        return Box(centerX: estimate.centerX, centerY: estimate.centerY,
                   width: min(max(estimate.width, lastMeasurement.width / limit), lastMeasurement.width * limit),
                   height: min(max(estimate.height, lastMeasurement.height / limit), lastMeasurement.height * limit))
    }

    static let maximumGrowth = 1.5

    mutating func predict(dt: Double) { filter.predict(dt: dt) }

    /// `stepInterval` is the tracker's usual time between frames: gaps longer than one and a half of
    /// them are replayed in steps of that size.
    mutating func update(measurement: Box, confidence: Double, time: Double, stepInterval: Double, clipped: BoxEdges) {
        clippedEdges = clipped
        let gap = time - lastUpdateTime
        if stepInterval > 0, gap > 1.5 * stepInterval {
            var replay = filterAtLastUpdate
            let steps = Int((gap / stepInterval).rounded())
            let interval = gap / Double(steps)
            for step in 1..<steps {
                let fraction = Double(step) / Double(steps)
                replay.predict(dt: interval)
                replay.update(measurement: interpolate(lastMeasurement, measurement, fraction), confidence: confidence)
            }
            replay.predict(dt: interval)
            filter = replay
        }
        filter.update(measurement: measurement, confidence: confidence)
        lastMeasurement = measurement
        lastUpdateTime = time
        filterAtLastUpdate = filter
    }

    /// Measured by another filter instead of a detection (a face by its body, `FaceOnBody`): a
    /// whole box where the other one puts it, no edge of it seen on the border. (Keeping the edges
    /// last cut — a face seen only cut is carried as small as it was seen — was tried: a head shot
    /// of a person standing up overshot in tilt more, BENCHMARKS.md's zoom section.)
    mutating func follow(_ estimate: BoxKalmanFilter, time: Double) {
        clippedEdges = []
        filter = estimate
        lastMeasurement = estimate.box
        lastUpdateTime = time
        filterAtLastUpdate = filter
    }

    private func interpolate(_ from: Box, _ to: Box, _ fraction: Double) -> Box {
        Box(centerX: from.centerX + (to.centerX - from.centerX) * fraction,
            centerY: from.centerY + (to.centerY - from.centerY) * fraction,
            width: from.width + (to.width - from.width) * fraction,
            height: from.height + (to.height - from.height) * fraction)
    }
}
