import DockCore
import DockProtocol
@testable import StandEngine
import Testing

/// The command gate alone (the lease, a stop that holds, refused drives, replies awaiting the
/// stand): pure, its clock the times passed in.
@Suite("Engine: the command gate")
struct CommandGateTests {
    private func admit(_ gate: inout CommandGate, _ command: EngineCommand, from client: ClientRef, force: Bool = false,
                       at now: Double = 10) -> (EngineOutput, EngineError?) {
        var out = EngineOutput()
        do throws(EngineError) {
            try gate.admit(command, from: client, force: force, stand: "S1", at: now, &out)
            return (out, nil)
        } catch {
            return (out, error)
        }
    }

    @Test func anotherClientTakesTheLeaseOnlyWithForceAndThatIsPublished() {
        var gate = CommandGate()
        #expect(admit(&gate, .velocity([.yaw: 0.1]), from: .app).1 == nil)
        #expect(admit(&gate, .velocity([.yaw: 0.1]), from: .other).1 == .busy(holder: .app, stand: "S1"))
        let (out, error) = admit(&gate, .velocity([.yaw: 0.1]), from: .other, force: true)
        #expect(error == nil && gate.lease.holder == .other)
        #expect(out.notifications == [.leaseChanged(client: ClientRef.other.id, takenFrom: ClientRef.app.id)])
        #expect(admit(&gate, .stop, from: .app).1 == nil, "a stop needs no lease")
    }

    @Test func aStopHoldsTheHoldersMotionUntilItResumes() throws {
        var gate = CommandGate()
        _ = admit(&gate, .velocity([.yaw: 0.1]), from: .app)
        gate.stop(by: .other, token: nil, deadline: nil)
        #expect(gate.holdsMotionBack(at: 10))
        #expect(admit(&gate, .velocity([.yaw: 0.1]), from: .app).1 == .stopped(by: .other, stand: "S1"))
        #expect(admit(&gate, .setTracking(true), from: .app).1 == .stopped(by: .other, stand: "S1"))
        #expect(try gate.resume(.app, stand: "S1"))
        #expect(!gate.holdsMotionBack(at: 10))
        #expect(admit(&gate, .velocity([.yaw: 0.1]), from: .app).1 == nil)
    }

    @Test func refusedDrivesHoldMotionBackAfterTheThird() {
        var gate = CommandGate()
        var out = EngineOutput()
        #expect(gate.handle(.refused(.velocity, reason: "busy"), at: 10, &out) == .nothingMore)
        #expect(gate.handle(.refused(.position, reason: "busy"), at: 10.1, &out) == .nothingMore)
        let third = gate.handle(.refused(.velocity, reason: "busy"), at: 10.2, &out)
        #expect(third == .motionHeldBack(reason: "the stand refused VELOCITY: busy"))
        #expect(gate.holdsMotionBack(at: 10.5) && !gate.holdsMotionBack(at: 11.2))
        guard case .motionFailed(let why)? = admit(&gate, .velocity([.yaw: 0.1]), from: .app, at: 10.5).1 else {
            Issue.record("a drive is refused while motion is held back"); return
        }
        #expect(why.hasPrefix("the stand refused VELOCITY: busy; motion is held back for 0.7 s"))
    }

    @Test func aRefusedLimitsLeavesTheLimitsTheStandKept() {
        var gate = CommandGate()
        var out = EngineOutput()
        let wide = [Axis.yaw: LimitRequest(min: -1, max: 1)], narrow = [Axis.yaw: LimitRequest(min: -0.5, max: 0.5)]
        gate.limitsSent(wide, token: 1, deadline: nil, &out)
        #expect(out.replies.map(\.token) == [1], "a driver that needs no acknowledgement: answered at once")
        _ = gate.handle(.state(stopConfirmed: false, limitsAcknowledged: true, connected: true, stand: "S1"), at: 10, &out)
        gate.limitsSent(narrow, token: 2, deadline: 11.5, &out)
        #expect(gate.lease.limits == narrow)
        #expect(gate.nextDeadline == 11.5)
        out = EngineOutput()
        #expect(gate.handle(.refused(.limits, reason: "no"), at: 10.2, &out) == .limitsInForce(wide))
        #expect(out.replies.first?.result == .failure(.motionFailed("the stand refused LIMITS: no")))
        #expect(gate.lease.limits == wide)
    }
}
