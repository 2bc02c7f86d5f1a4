@testable import DockDrivers
import Testing

/// The pose of a camera whose GetStatus does not follow its head, by what it was told.
@Suite struct PoseEstimateTests {
    func estimate() -> PoseEstimate { PoseEstimate(topSpeed: (0.5, 0.25), at: (0, 0), time: 10) }
    func near(_ a: (x: Double, y: Double), _ b: (Double, Double)) -> Bool { abs(a.x - b.0) < 1e-9 && abs(a.y - b.1) < 1e-9 }

    @Test func aRateRunsUntilItsTimeoutWithinTheSpace() {
        var e = estimate()
        e.told(.rate(x: 0.2, y: -0.1, until: 11), sent: 10, at: 10)
        #expect(e.pose(at: 10.5) == (0.1, -0.05))
        #expect(e.pose(at: 13) == (0.2, -0.1))  // stopped by its Timeout at 11
        #expect(e.moving(at: 10.9) && !e.moving(at: 11))
        e.told(.rate(x: 1, y: 0, until: 30), sent: 11, at: 11)
        #expect(e.pose(at: 20).x == 1)  // the end of the generic space
    }

    @Test func aTargetIsApproachedAtTheTopSpeedAndHeld() {
        var e = estimate()
        e.told(.toward(x: -0.5, y: 0.1), sent: 10, at: 10)
        #expect(near(e.pose(at: 10.4), (-0.2, 0.1)))
        #expect(e.rate(at: 10.2) == (-0.5, 0.25) && e.rate(at: 10.5) == (-0.5, 0))
        #expect(e.pose(at: 12) == (-0.5, 0.1) && !e.moving(at: 12))
    }

    @Test func aTargetWithASpeedIsApproachedAtThatFractionOfTheTopSpeeds() {
        var e = estimate()
        e.told(.toward(x: 0.5, y: -0.5, speed: 0.2), sent: 10, at: 10)  // 0.1 and 0.05 a second
        #expect(near(e.pose(at: 11), (0.1, -0.05)))
        #expect(near(e.rate(at: 11), (0.1, -0.05)))
    }

    @Test func aNewRateMidMotionKeepsThePoseSoFar() {
        var e = estimate()
        e.told(.rate(x: 0.2, y: 0, until: 12), sent: 10, at: 10)
        e.told(.rate(x: 0.4, y: 0, until: 12.5), sent: 10.5, at: 10.5)
        #expect(abs(e.pose(at: 11).x - 0.3) < 1e-12)
        e.told(.still, sent: 11, at: 11)
        #expect(abs(e.pose(at: 12).x - 0.3) < 1e-12 && !e.moving(at: 12))
    }

    @Test func aTrustedReadIsTheNewStartOfTheSameMotion() {
        var e = estimate()
        e.told(.toward(x: 0.5, y: 0), sent: 10, at: 10)
        e.read(x: 0.1, y: 0, at: 10.5)
        #expect(near(e.pose(at: 10.9), (0.3, 0)))
        e.told(.rate(x: 0.1, y: 0, until: 11), sent: 10.9, at: 10.9)
        e.read(x: 0.2, y: 0, at: 11.5)  // after the Timeout: still where it was read
        #expect(e.pose(at: 15) == (0.2, 0) && !e.moving(at: 15))
    }

    @Test func eachRateChangeAddsItsRoundTripsWorthOfDoubtAndAReadClearsIt() {
        var e = estimate()
        e.told(.rate(x: 0.4, y: -0.2, until: 13), sent: 11.9, at: 12)  // acted on within 0.1 s: 0.04, 0.02
        e.told(.rate(x: 0.4, y: -0.2, until: 14), sent: 12.45, at: 12.5)  // a renewal changes nothing
        e.told(.rate(x: 0.1, y: 0, until: 14), sent: 12.95, at: 13)  // 0.3 and 0.2 less, within 0.05 s
        #expect(near(e.doubt, (0.055, 0.03)))
        e.told(.toward(x: 0.5, y: 0), sent: 13.2, at: 13.4)  // at the top speeds from 0.1 and 0: 0.4 and 0.25 more, 0.2 s
        #expect(near(e.doubt, (0.135, 0.08)))
        e.read(x: 0.3, y: -0.1, at: 13.5)
        #expect(e.doubt == (0, 0))
    }
}
