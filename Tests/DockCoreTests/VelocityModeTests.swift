import DockCore
import DockProtocol
import Testing

@Suite("Velocity mode")
struct VelocityModeTests {
    @Test("moves at the commanded rate; the dead man stops it 0.5 s after the last renewal",
          arguments: ClosedLoopRig.feedbackPhases)
    func tracksRateAndDeadmanStops(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.1)
        var lastRenewal = 0.0
        for _ in 0..<4 {
            lastRenewal = rig.time
            try rig.controller.setVelocity([.yaw: 1.0], at: rig.time)
            rig.run(for: 0.25)
        }
        #expect(rig.controller.state.activity == .velocity)
        #expect(abs(rig.truth(.yaw).velocity - 1.0) < 0.02)
        #expect(abs(rig.truth(.pitch).velocity) < 0.01)
        rig.run(for: 0.2)   // 0.45 s after the renewal: still moving
        #expect(abs(rig.truth(.yaw).velocity - 1.0) < 0.02)
        let yawBefore = rig.truth(.yaw).outputPosition
        rig.run(for: 0.5)

        // Exactly one zero VELOCITY, at the first tick at or after the deadline.
        let zeroTicks = rig.log.filter { entry in
            entry.time > lastRenewal && entry.output.messages.contains(.velocity([AxisValue(.yaw, 0), AxisValue(.pitch, 0)]))
        }
        #expect(zeroTicks.count == 1)
        let stopTime = try #require(zeroTicks.first?.time)
        #expect(stopTime >= lastRenewal + 0.5 - 1e-9 && stopTime < lastRenewal + 0.5 + 0.0101)
        // Nothing but that after the deadline.
        #expect(rig.commands(since: stopTime + 0.001).isEmpty)
        #expect(abs(rig.truth(.yaw).velocity) < 1e-3)
        #expect(rig.controller.state.activity == .idle)
        // It kept going until the deadline, then braked (3 rad/s at 12 rad/s² stops within ~0.1 rad).
        let travelled = rig.truth(.yaw).outputPosition - yawBefore
        #expect(travelled > 0.04 && travelled < 0.15)
        #expect(rig.nacks.isEmpty)
    }

    @Test("rates are clamped to the speed limit, and the axis stops at its position limit",
          arguments: ClosedLoopRig.feedbackPhases)
    func clampsToSpeedAndPositionLimits(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        let start = rig.time
        for _ in 0..<5 {
            try rig.controller.setVelocity([.pitch: 5.0], at: rig.time)
            rig.run(for: 0.3)
        }
        let commands = rig.commands(since: start)
        #expect(commands.allSatisfy { $0.pitch <= 2.0 + 1e-6 })
        #expect(commands.contains { $0.pitch > 1.9 })
        // Braked to a stop at the stand's max pitch (0.9) instead of driving into it.
        #expect(abs(rig.truth(.pitch).motorPosition - 0.9) < 0.01)
        #expect(abs(commands.last!.pitch) < 0.05)
        // It arrived there braked nearly to rest, not stopped by the stand's hard stop at speed.
        let samples = rig.samples(since: start)
        let arrival = try #require(samples.firstIndex { $0.pitch.motorPosition >= 0.9 - 1e-6 })
        #expect(arrival > 0 && samples[arrival - 1].pitch.velocity < 0.1)
        // Resting at the limit, the position jitters by a count or so (noise, quantization): that must
        // not ask for motion into the limit, on any tick (a bare v = √(2·a·room) gave 0.07 rad/s).
        let pushes = rig.commands(since: samples[arrival].time + 0.05).map(\.pitch)
        #expect(!pushes.isEmpty && pushes.allSatisfy { abs($0) < 0.02 })
    }

    @Test("client limits: narrower speed, and a range on the continuous yaw the stand itself does not enforce",
          arguments: ClosedLoopRig.feedbackPhases)
    func clampsToClientLimits(feedbackPhase: Double) throws {
        var rig = try ClosedLoopRig(feedbackPhase: feedbackPhase)
        rig.run(for: 0.05)
        try rig.controller.setLimits([.yaw: LimitRequest(min: -0.5, max: 0.5, maxSpeed: 1.0)])
        let start = rig.time
        for _ in 0..<6 {
            try rig.controller.setVelocity([.yaw: 3.0], at: rig.time)
            rig.run(for: 0.3)
        }
        let yaw = rig.samples(since: start).map(\.yaw)
        #expect(yaw.map(\.velocity).max()! <= 1.0 + 0.01)
        #expect(yaw.map(\.velocity).max()! > 0.95)
        #expect(yaw.map(\.motorPosition).max()! <= 0.5 + 0.01)   // braked from 1 rad/s; without braking it runs on
        #expect(rig.truth(.yaw).motorPosition > 0.48)
        #expect(rig.nacks.isEmpty)
    }

    @Test("an axis the stand lacks or a non-finite rate is refused, and nothing moves")
    func refusals() throws {
        var rig = try ClosedLoopRig()
        rig.run(for: 0.05)
        #expect(throws: MotionError.notSupported(.roll)) { try rig.controller.setVelocity([.roll: 0.1], at: rig.time) }
        #expect(throws: MotionError.invalidParameter("yaw velocity must be finite")) {
            try rig.controller.setVelocity([.yaw: .nan], at: rig.time)
        }
        rig.run(for: 0.2)
        #expect(rig.commands(since: 0).isEmpty)
        #expect(rig.controller.state.activity == .idle)
    }
}
