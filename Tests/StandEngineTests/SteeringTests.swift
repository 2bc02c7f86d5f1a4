import DockProtocol
@testable import StandEngine
import Testing

/// Who steers (a client's motion or tracking), the LED and the phase, alone: pure, its clock the
/// times passed in.
@Suite("Engine: steering")
struct SteeringTests {
    @Test func aClientsVelocityKeepsTrackingOffTheMotorsUntilItsDeadman() {
        var steering = Steering(systemTracking: true)
        #expect(steering.trackingMayDrive(leaseHeld: false, at: 10))
        _ = steering.handle(.clientVelocity(deadman: 0.5), at: 10)
        #expect(!steering.trackingMayDrive(leaseHeld: false, at: 10.4))
        #expect(steering.trackingMayDrive(leaseHeld: false, at: 10.5))
        let first = steering.takeOver(), second = steering.takeOver()
        #expect(first, "tracking starts afresh where the client left the stand")
        #expect(!second, "once")
    }

    @Test func withTrackingOffOnlyTheLeaseHoldersOwnObservationsDrive() {
        var steering = Steering(systemTracking: true)
        let out = steering.handle(.systemTracking(false, source: "api"), at: 1)
        #expect(out.notifications == [.trackingChanged(enabled: false, source: "api")])
        #expect(!steering.trackingMayDrive(leaseHeld: false, at: 2))
        #expect(steering.trackingMayDrive(leaseHeld: true, at: 2))
    }

    @Test func theLedIsSentOnlyWhenItChangesAndAgainAfterAReconnect() {
        var steering = Steering(systemTracking: true)
        #expect(steering.led(trackingActive: false, inFrame: false) == .on)
        #expect(steering.led(trackingActive: true, inFrame: false) == nil)
        #expect(steering.led(trackingActive: true, inFrame: true) == .blink)
        _ = steering.handle(.systemTracking(false, source: "button"), at: 1)
        #expect(steering.led(trackingActive: true, inFrame: true) == .off)
        _ = steering.handle(.connected, at: 2)
        #expect(steering.led(trackingActive: true, inFrame: true) == .off)
    }

    @Test func aPhaseIsPublishedOncePerChange() {
        var steering = Steering(systemTracking: true)
        #expect(steering.publish(.tracking) == nil)
        #expect(steering.publish(.stopped) == .phaseChanged(.stopped))
        #expect(steering.publish(.stopped) == nil)
    }
}
