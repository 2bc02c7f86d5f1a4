import Testing
import DockProtocol
@testable import DockSim

@Suite("Motion") struct MotionTests {
    /// Slope of the reported position over the second second of a constant command.
    private func measuredRate(_ axis: Axis, commanded: Float) -> Double {
        var host = TestHost()
        host.handshake()
        host.send(.velocity([AxisValue(axis, commanded)]))
        host.run(2.0)
        let t1 = host.now - 1_000_000, t2 = host.now
        let p1 = position(axis, at: t1, in: host.feedback)!, p2 = position(axis, at: t2, in: host.feedback)!
        return (p2 - p1) / 1.0
    }

    @Test(arguments: [Float(0.5), 1.0, -2.0])
    func velocityMovesAtTheCommandedRate(rate: Float) {
        #expect(abs(measuredRate(.yaw, commanded: rate) - Double(rate)) < 0.01)
    }

    @Test func velocityIsClampedToMaxSpeed() {
        // Yaw's max_speed is 3 rad/s.
        #expect(abs(measuredRate(.yaw, commanded: 10) - 3.0) < 0.02)
    }

    @Test func accelerationNeverExceedsMaxAccel() {
        var host = TestHost()
        host.handshake()
        host.send(.velocity([AxisValue(.yaw, 3)]))
        host.run(0.6)
        let samples = host.feedback
        // Reported velocity carries 0.002 rad/s noise; allow for it per 10 ms sample.
        for (a, b) in zip(samples, samples.dropFirst()) {
            let dt = Double(b.timeUs - a.timeUs) / 1e6
            let dv = Double(b.axis(.yaw)!.velocity - a.axis(.yaw)!.velocity)
            #expect(dv / dt <= 12.0 * 1.05 + 0.02 / dt, "at \(b.timeUs) µs")
        }
        // 3 rad/s at 12 rad/s² takes at least 0.25 s: not there after 0.2 s, there after 0.5 s.
        let early = samples.last { $0.timeUs <= samples[0].timeUs + 200_000 }!.axis(.yaw)!.velocity
        #expect(early < 2.5)
        #expect(abs(host.last(.yaw)!.velocity - 3) < 0.05)
    }

    @Test func pitchStopsAtItsHardLimitWithStatusAtLimit() {
        var host = TestHost()
        host.handshake()
        host.send(.velocity([AxisValue(.pitch, 2)]))
        host.run(2.0)
        let pitch = host.last(.pitch)!
        #expect(abs(pitch.position - 0.9) < 0.002)
        #expect(abs(pitch.velocity) < 0.01)
        #expect(pitch.status.contains(.atMax))
        #expect(!pitch.status.contains(.atMin))

        host.send(.velocity([AxisValue(.pitch, -2)]))
        host.run(2.0)
        #expect(abs(host.last(.pitch)!.position + 0.6) < 0.002)
        #expect(host.last(.pitch)!.status.contains(.atMin))
    }

    @Test func positionTargetIsReachedInAboutTheGivenDuration() {
        var host = TestHost()
        host.handshake()
        let start = host.now
        let seq = host.send(.position(duration: 1.0, targets: [PositionTarget(axis: .yaw, position: 1.0)]), ack: true)
        #expect(host.acks.map(\.seq) == [seq])
        host.run(1.5)
        let fb = host.feedback
        // Half way in time, a smooth trajectory is about half way in space, not arrived.
        let middle = position(.yaw, at: start + 500_000, in: fb)!
        #expect(abs(middle - 0.5) < 0.1)
        let arrival = position(.yaw, at: start + 1_050_000, in: fb)!
        #expect(abs(arrival - 1.0) < 0.01)
        #expect(abs(host.last(.yaw)!.position - 1.0) < 0.003)
        #expect(fb.first { $0.timeUs > start + 100_000 }!.axis(.yaw)!.status.contains(.movingToTarget))
    }

    @Test func positionOutsideTheRangeIsRefusedOutOfRange() {
        var host = TestHost()
        host.handshake()
        let seq = host.send(.position(duration: 0.5, targets: [PositionTarget(axis: .pitch, position: 1.5)]), ack: true)
        #expect(host.nacks.map(\.seq) == [seq])
        #expect(host.nacks.first?.knownCode == .outOfRange)
        host.run(0.5)
        #expect(abs(host.last(.pitch)!.position) < 0.005, "a refused target does not move the axis")
    }

    /// A continuous yaw takes unwrapped multi-turn targets (PROTOCOL.md §4).
    @Test func continuousYawAcceptsMultiTurnTargets() {
        var host = TestHost()
        host.handshake()
        let seq = host.send(.position(duration: 0, targets: [PositionTarget(axis: .yaw, position: 7.0)]), ack: true)
        #expect(host.acks.map(\.seq) == [seq])
        host.run(4.0)
        #expect(abs(host.last(.yaw)!.position - 7.0) < 0.005)
    }

    @Test func limitsWithMinNotBelowMaxAreRefused() {
        var host = TestHost()
        host.handshake()
        let bad = host.send(.limits([AxisLimits(axis: .pitch, min: 0.3, max: 0.3, maxSpeed: 1, maxAccel: 5)]), ack: true)
        let tooFast = host.send(.limits([AxisLimits(axis: .pitch, min: -0.2, max: 0.3, maxSpeed: 9, maxAccel: 5)]), ack: true)
        #expect(host.nacks.map(\.seq) == [bad, tooFast])
        #expect(host.nacks.allSatisfy { $0.knownCode == .outOfRange })

        let good = host.send(.limits([AxisLimits(axis: .pitch, min: -0.2, max: 0.3, maxSpeed: 1, maxAccel: 5)]), ack: true)
        #expect(host.acks.map(\.seq) == [good])
        // The narrowed range is enforced on targets and on motion.
        let outside = host.send(.position(duration: 0, targets: [PositionTarget(axis: .pitch, position: 0.5)]), ack: true)
        #expect(host.nacks.last?.seq == outside)
        host.send(.velocity([AxisValue(.pitch, 2)]))
        host.run(1.5)
        #expect(abs(host.last(.pitch)!.position - 0.3) < 0.002)
    }

    @Test func stopDeceleratesToRest() {
        var host = TestHost()
        host.handshake()
        host.send(.velocity([AxisValue(.yaw, 2)]))
        host.run(0.5)
        let seq = host.send(.stop, ack: true)
        #expect(host.acks.map(\.seq) == [seq])
        host.run(0.5)
        #expect(abs(host.last(.yaw)!.velocity) < 0.01)
    }
}
