/// One coordinate under a constant-velocity model with continuous white-noise acceleration.
///
/// The box filter below is four of these: with diagonal process and measurement noise and a
/// measurement of each coordinate on its own, the 8-state SORT/DeepSORT filter's covariance stays
/// block-diagonal, so four independent 2-state filters are the same filter exactly — and cost a few
/// dozen flops instead of 8×8 matrix products, which keeps a 10-subject step in microseconds.
public struct ConstantVelocityAxis: Sendable, Hashable {
    public private(set) var position: Double
    /// Units per second.
    public private(set) var velocity: Double
    public private(set) var positionVariance: Double
    public private(set) var covariance: Double
    public private(set) var velocityVariance: Double

    public init(position: Double, positionVariance: Double, velocityVariance: Double) {
        self.position = position
        self.velocity = 0
        self.positionVariance = positionVariance
        self.covariance = 0
        self.velocityVariance = velocityVariance
    }

    /// Advances `dt` seconds; `accelerationDensity` is the white-noise acceleration's spectral density
    /// (units²/s³), the one number saying how fast the velocity is allowed to wander.
    public mutating func predict(dt: Double, accelerationDensity: Double) {
        position += velocity * dt
        let dt2 = dt * dt
        positionVariance += 2 * dt * covariance + dt2 * velocityVariance + accelerationDensity * dt2 * dt / 3
        covariance += dt * velocityVariance + accelerationDensity * dt2 / 2
        velocityVariance += accelerationDensity * dt
    }

    /// Variance of the difference between a measurement and the predicted position.
    public func innovationVariance(measurementVariance: Double) -> Double {
        positionVariance + measurementVariance
    }

    /// This axis's estimate moved to `position` and `velocity`, its uncertainty scaled by `scale`:
    /// a point carried by what this axis tracks.
    func carrying(position: Double, velocity: Double, scale: Double) -> ConstantVelocityAxis {
        var axis = self
        axis.position = position
        axis.velocity = velocity
        axis.positionVariance *= scale * scale
        axis.covariance *= scale * scale
        axis.velocityVariance *= scale * scale
        return axis
    }

    public mutating func update(measurement: Double, measurementVariance: Double) {
        let innovation = measurement - position
        let innovationVariance = positionVariance + measurementVariance
        let positionGain = positionVariance / innovationVariance
        let velocityGain = covariance / innovationVariance
        position += positionGain * innovation
        velocity += velocityGain * innovation
        velocityVariance -= velocityGain * covariance
        covariance *= 1 - positionGain
        positionVariance *= 1 - positionGain
    }
}

/// Noise model of the box filter. All noise is a fraction of the box's own size (width for x and
/// width, height for y and height, as BoT-SORT does), so the same numbers work in pixels and in
/// radians and for near and far subjects.
public struct KalmanSettings: Sendable, Hashable {
    /// Measurement standard deviation as a fraction of box size.
    public var measurementNoise: Double = 0.05
    /// Acceleration noise density: velocity wanders by this fraction of box size per √second.
    public var accelerationNoise: Double = 0.6
    /// Size changes slower than position; scales `accelerationNoise` for width and height.
    public var sizeAccelerationRatio: Double = 0.3
    /// Velocity standard deviation at birth, fraction of box size per second.
    public var initialVelocityNoise: Double = 1.0

    public init() {}
}

/// Constant-velocity Kalman filter over a box's center and size in the tracker's measurement space.
public struct BoxKalmanFilter: Sendable, Hashable {
    public private(set) var centerX: ConstantVelocityAxis
    public private(set) var centerY: ConstantVelocityAxis
    public private(set) var width: ConstantVelocityAxis
    public private(set) var height: ConstantVelocityAxis
    public let settings: KalmanSettings

    /// Smallest size the filter will report, as a fraction of the size at birth, so a shrinking
    /// extrapolation never yields a degenerate box.
    private var minimumWidth: Double
    private var minimumHeight: Double

    public init(box: Box, settings: KalmanSettings) {
        self.settings = settings
        let positionX = sq(2 * settings.measurementNoise * box.width)
        let positionY = sq(2 * settings.measurementNoise * box.height)
        let velocityX = sq(settings.initialVelocityNoise * box.width)
        let velocityY = sq(settings.initialVelocityNoise * box.height)
        centerX = ConstantVelocityAxis(position: box.centerX, positionVariance: positionX, velocityVariance: velocityX)
        centerY = ConstantVelocityAxis(position: box.centerY, positionVariance: positionY, velocityVariance: velocityY)
        width = ConstantVelocityAxis(position: box.width, positionVariance: positionX,
                                     velocityVariance: velocityX * sq(settings.sizeAccelerationRatio))
        height = ConstantVelocityAxis(position: box.height, positionVariance: positionY,
                                      velocityVariance: velocityY * sq(settings.sizeAccelerationRatio))
        minimumWidth = box.width * 0.25
        minimumHeight = box.height * 0.25
    }

    public var box: Box {
        Box(centerX: centerX.position, centerY: centerY.position,
            width: max(width.position, minimumWidth), height: max(height.position, minimumHeight))
    }

    /// Center velocity, units per second.
    public var velocity: (x: Double, y: Double) { (centerX.velocity, centerY.velocity) }

    /// The filter of a box carried by this one (a face on its body), placed in units of this box's
    /// width from its top centre: its centre at (`x`, `y`), its size `width` × `height`. The
    /// carried box moves as the points it sits on and is as uncertain as this box, in proportion.
    func carried(x: Double, y: Double, width w: Double, height h: Double) -> BoxKalmanFilter {
        var carried = self
        let unit = width.position, unitRate = width.velocity
        carried.centerX = centerX.carrying(position: centerX.position + x * unit, velocity: centerX.velocity + x * unitRate, scale: 1)
        carried.centerY = centerY.carrying(position: centerY.position - height.position / 2 + y * unit,
                                           velocity: centerY.velocity - height.velocity / 2 + y * unitRate, scale: 1)
        carried.width = width.carrying(position: w * unit, velocity: w * unitRate, scale: w)
        carried.height = width.carrying(position: h * unit, velocity: h * unitRate, scale: h)
        carried.minimumWidth = minimumWidth * w
        carried.minimumHeight = minimumWidth * h
        return carried
    }

    public mutating func predict(dt: Double) {
        guard dt > 0 else { return }
        let current = box
        let densityX = sq(settings.accelerationNoise * current.width)
        let densityY = sq(settings.accelerationNoise * current.height)
        let sizeRatio = sq(settings.sizeAccelerationRatio)
        centerX.predict(dt: dt, accelerationDensity: densityX)
        centerY.predict(dt: dt, accelerationDensity: densityY)
        width.predict(dt: dt, accelerationDensity: densityX * sizeRatio)
        height.predict(dt: dt, accelerationDensity: densityY * sizeRatio)
    }

    /// `confidence` in [0, 1] scales the measurement noise (after StrongSORT's NSA Kalman): a
    /// 0.3-confidence box moves the estimate less than a 0.99 one.
    public mutating func update(measurement: Box, confidence: Double = 1) {
        let (varianceX, varianceY) = measurementVariances(confidence: confidence)
        centerX.update(measurement: measurement.centerX, measurementVariance: varianceX)
        centerY.update(measurement: measurement.centerY, measurementVariance: varianceY)
        width.update(measurement: measurement.width, measurementVariance: varianceX)
        height.update(measurement: measurement.height, measurementVariance: varianceY)
    }

    /// Squared Mahalanobis distance of a measurement from the prediction (4 degrees of freedom:
    /// chi-square 95 % is 9.49).
    public func mahalanobisSquared(to measurement: Box, confidence: Double = 1) -> Double {
        let (varianceX, varianceY) = measurementVariances(confidence: confidence)
        return sq(measurement.centerX - centerX.position) / centerX.innovationVariance(measurementVariance: varianceX)
            + sq(measurement.centerY - centerY.position) / centerY.innovationVariance(measurementVariance: varianceY)
            + sq(measurement.width - width.position) / width.innovationVariance(measurementVariance: varianceX)
            + sq(measurement.height - height.position) / height.innovationVariance(measurementVariance: varianceY)
    }

    private func measurementVariances(confidence: Double) -> (Double, Double) {
        let current = box
        // Nominal noise for a certain detection, up to twice the variance for a zero-confidence one.
        let factor = 2 - min(max(confidence, 0), 1)
        return (sq(settings.measurementNoise * current.width) * factor,
                sq(settings.measurementNoise * current.height) * factor)
    }
}

@inline(__always) func sq(_ value: Double) -> Double { value * value }
