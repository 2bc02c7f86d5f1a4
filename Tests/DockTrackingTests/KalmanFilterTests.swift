import Testing
@testable import DockTracking

@Suite struct KalmanFilterTests {
    @Test func predictMovesByVelocityAndGrowsUncertainty() {
        var axis = ConstantVelocityAxis(position: 1, positionVariance: 0.01, velocityVariance: 0.04)
        axis.update(measurement: 1, measurementVariance: 0.01)
        let varianceBefore = axis.positionVariance
        axis.predict(dt: 0.5, accelerationDensity: 0.1)
        #expect(axis.position == 1)
        #expect(axis.positionVariance > varianceBefore)
    }

    @Test func updatePullsTowardMeasurementAndShrinksUncertainty() {
        var axis = ConstantVelocityAxis(position: 0, positionVariance: 1, velocityVariance: 1)
        axis.update(measurement: 2, measurementVariance: 1)
        // Equal prior and measurement variance: halfway, with half the variance.
        #expect(abs(axis.position - 1) < 1e-12)
        #expect(abs(axis.positionVariance - 0.5) < 1e-12)
    }

    @Test func learnsConstantVelocityAndPredictsAhead() {
        var filter = BoxKalmanFilter(box: Box(centerX: 0, centerY: 0, width: 0.1, height: 0.3), settings: KalmanSettings())
        let speed = 0.2  // units per second
        for step in 1...60 {
            filter.predict(dt: 1.0 / 30)
            filter.update(measurement: Box(centerX: speed * Double(step) / 30, centerY: 0, width: 0.1, height: 0.3))
        }
        #expect(abs(filter.velocity.x - speed) < 0.01)
        filter.predict(dt: 1)
        #expect(abs(filter.box.centerX - speed * 3) < 0.01)
        // A measurement where the subject should be is close in Mahalanobis terms; one far off is not.
        #expect(filter.mahalanobisSquared(to: Box(centerX: 0.6, centerY: 0, width: 0.1, height: 0.3)) < 1)
        #expect(filter.mahalanobisSquared(to: Box(centerX: 0.2, centerY: 0, width: 0.1, height: 0.3)) > 9.49)
    }
}
