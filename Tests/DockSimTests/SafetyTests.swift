import Testing
import DockProtocol
@testable import DockSim

@Suite("Safety") struct SafetyTests {
    @Test func hostSilenceStopsTheMotorsAndSendsHeartbeatLost() throws {
        var host = TestHost()
        host.handshake(heartbeatTimeoutMs: 200)
        host.send(.velocity([AxisValue(.yaw, 2)]))
        let lastSent = host.now
        host.run(0.15, keepAlive: false)
        #expect(host.faults.isEmpty, "no fault before the timeout")
        #expect(host.last(.yaw)!.velocity > 1.5, "still moving inside the timeout")

        host.run(0.6, keepAlive: false)
        let lost = host.faults.filter { $0.fault.code == FaultCode.heartbeatLost.rawValue }
        #expect(lost.count == 1, "one FAULT, not one per tick")
        let time = try #require(lost.first).time
        #expect(time > lastSent + 200_000 && time <= lastSent + 210_000)
        #expect(lost.first?.fault.severity == FaultSeverity.warning.rawValue)
        #expect(abs(host.last(.yaw)!.velocity) < 0.01)
        #expect(host.stand.heartbeatLapsed)

        // The next actuation command moves it again.
        host.send(.velocity([AxisValue(.yaw, 1)]))
        host.run(0.5)
        #expect(abs(host.last(.yaw)!.velocity - 1) < 0.02)
    }

    @Test func heartbeatsKeepTheSessionAlive() {
        var host = TestHost()
        host.handshake(heartbeatTimeoutMs: 200)
        host.send(.velocity([AxisValue(.yaw, 1)]))
        host.run(2.0)  // heartbeat every 100 ms
        #expect(host.faults.isEmpty)
        #expect(abs(host.last(.yaw)!.velocity - 1) < 0.02)
    }

    @Test func aStallSendsAFaultAndFreezesTheAxisWithStatusStalled() throws {
        var host = TestHost()
        host.handshake()
        host.send(.velocity([AxisValue(.pitch, 0.2)]))
        host.run(0.5)
        host.apply(.stall(.pitch, seconds: 1.0))
        let fault = try #require(host.faults.first?.fault)
        #expect(fault.code == FaultCode.stall.rawValue)
        #expect(fault.axis == Axis.pitch.rawValue)
        let frozenAt = host.stand.truth(.pitch)!.motorPosition
        host.run(0.5)
        #expect(host.last(.pitch)!.status.contains(.stalled))
        #expect(abs(host.stand.truth(.pitch)!.motorPosition - frozenAt) < 1e-9)
        host.run(0.7)
        #expect(!host.last(.pitch)!.status.contains(.stalled), "the stall ends after its time")
        #expect(host.stand.truth(.pitch)!.motorPosition > frozenAt + 0.02)
    }

    @Test func motorsOffReportsDisabled() {
        var host = TestHost()
        host.handshake()
        host.send(.motors(enabled: AxisMask([Axis.yaw])), ack: true)
        host.run(0.05)
        #expect(host.last(.pitch)!.status.contains(.disabled))
        #expect(!host.last(.yaw)!.status.contains(.disabled))
    }
}
