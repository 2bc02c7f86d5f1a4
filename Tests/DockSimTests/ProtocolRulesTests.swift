import DockProtocol
@testable import DockSim
import Testing

/// A packet with any type and payload and a valid CRC, framed for the wire.
private func rawFrame(type: UInt8, seq: UInt16, ack: Bool, payload: [UInt8]) -> [UInt8] {
    var packet: [UInt8] = [type, ack ? 1 : 0, UInt8(seq & 0xFF), UInt8(seq >> 8)] + payload
    let crc = CRC16.checksum(packet)
    packet += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    return COBS.encode(packet) + [0]
}

/// The stand's side of PROTOCOL.md 1.1: heartbeat pace, answers to every ACK request, LIMITS on
/// continuous axes and around the present position, the battery report threshold.
@Suite("Protocol 1.1 rules on the simulated stand")
struct ProtocolRulesTests {
    @Test func beforeHelloTheStandHeartbeatsAtTheSpecsInterval() {
        var host = TestHost()
        host.run(2, keepAlive: false)
        let beats = host.received.filter { if case .heartbeat = $0.frame.message { true } else { false } }.map(\.time)
        #expect(beats.count >= 7)
        let gaps = zip(beats.dropFirst(), beats).map { Double($0 - $1) / 1e6 }
        #expect((gaps.max() ?? 1) <= ProtocolTiming.standHeartbeatInterval + 0.0011, "\(gaps)")
        // Four heartbeats fit in the host's link timeout: three can be lost.
        #expect(ProtocolTiming.linkTimeout >= 4 * ProtocolTiming.standHeartbeatInterval)
    }

    @Test func unknownTypesAndMalformedPayloadsAreNackedWhenTheyAskAndAcksNeverAre() {
        var host = TestHost()
        host.handshake()
        host.sendRaw(rawFrame(type: 0x30, seq: 40, ack: true, payload: [1, 2]))
        host.sendRaw(rawFrame(type: 0x31, seq: 41, ack: false, payload: []))
        host.sendRaw(rawFrame(type: MessageType.velocity.rawValue, seq: 42, ack: true, payload: [0x03, 0, 0]))
        host.send(.ack(Ack(seq: 1, type: 0x04)), ack: true)
        host.send(.nack(Nack(seq: 1, type: 0x04, code: .busy, detail: "")), ack: true)
        #expect(host.nacks.map { "\($0.seq)/\(String($0.type, radix: 16))/\($0.code)" } == ["40/30/1", "42/10/5"])
        #expect(host.acks.isEmpty)
    }

    @Test func limitsIgnoreMinAndMaxOnAContinuousAxis() {
        var host = TestHost()
        host.handshake()
        // What a host sends to undo a narrowing (the CAPABILITIES range, 0/0, NaN): all accepted,
        // none confines yaw; the pitch part applies.
        for (lo, hi) in [(-Float.pi, Float.pi), (0, 0), (.nan, .nan)] {
            let seq = host.send(.limits([AxisLimits(axis: .yaw, min: lo, max: hi, maxSpeed: 3, maxAccel: 12),
                                         AxisLimits(axis: .pitch, min: -0.3, max: 0.3, maxSpeed: 2, maxAccel: 10)]), ack: true)
            #expect(host.acks.last?.seq == seq, "yaw \(lo)…\(hi)")
        }
        host.send(.velocity([AxisValue(.yaw, 3), AxisValue(.pitch, 2)]))
        host.run(2)
        #expect(host.last(.yaw)!.position > 4, "yaw turns past π")
        #expect(abs(host.last(.pitch)!.position - 0.3) < 0.002)
        // Speeds and accelerations are still checked, NaN included.
        let nan = host.send(.limits([AxisLimits(axis: .yaw, min: 0, max: 0, maxSpeed: .nan, maxAccel: 12)]), ack: true)
        #expect(host.nacks.last?.seq == nan && host.nacks.last?.knownCode == .outOfRange)
    }

    @Test func aRangeThatExcludesThePositionHoldsTheAxisWhereItIs() {
        var host = TestHost()
        host.handshake()
        host.send(.position(duration: 0.5, targets: [PositionTarget(axis: .pitch, position: 0.6)]))
        host.run(1.5)
        let seq = host.send(.limits([AxisLimits(axis: .pitch, min: -0.2, max: 0.3, maxSpeed: 2, maxAccel: 10)]), ack: true)
        #expect(host.acks.last?.seq == seq)
        host.run(0.3)
        #expect(abs(host.last(.pitch)!.position - 0.6) < 0.003, "no jump into the range")
        #expect(host.last(.pitch)!.status.contains(.atMax))
        host.send(.velocity([AxisValue(.pitch, 1)]))
        host.run(0.5)
        #expect(host.last(.pitch)!.position < 0.603, "no further out")
        host.send(.velocity([AxisValue(.pitch, -1)]))
        host.run(1.5)
        #expect(abs(host.last(.pitch)!.position + 0.2) < 0.003, "back in, and stopped at the new minimum")
        let outside = host.send(.position(duration: 0, targets: [PositionTarget(axis: .pitch, position: 0.5)]), ack: true)
        #expect(host.nacks.last?.seq == outside)
    }

    @Test func batteryIsReportedOnAOnePercentStepAndEveryTenSeconds() {
        var host = TestHost()
        host.handshake()
        func reports(_ host: TestHost) -> [BatteryState] { host.messages.compactMap { if case .battery(let b) = $0 { b } else { nil } } }
        host.apply(.battery(level: 0.795))
        host.run(0.5)
        #expect(reports(host).isEmpty, "half a percent is no change")
        host.apply(.battery(level: 0.785))
        host.run(0.5)
        #expect(reports(host).count == 1)
        #expect(abs((reports(host).first?.level ?? 0) - 0.785) < 0.0001)
        host.clear()
        host.run(10)
        #expect(reports(host).count == 1, "the 10 s refresh")
    }
}

@Suite("Heartbeat lost (PROTOCOL.md §2.1)")
struct HeartbeatLostTests {
    @Test func onlyAnActuationCommandEndsItAndTheFaultIsSentOnce() {
        var host = TestHost()
        host.handshake(heartbeatTimeoutMs: 200)
        host.send(.velocity([AxisValue(.yaw, 1)]))
        host.run(0.4, keepAlive: false)
        #expect(host.stand.heartbeatLapsed)
        #expect(host.faults.count == 1)
        // Heartbeats, a LED, a LIMITS: the link is back, but nothing moves and no second FAULT.
        host.send(.led(LedCommand(mode: .on)))
        host.run(0.2, keepAlive: false)
        host.send(.heartbeat(uptimeMs: 1))
        host.run(0.3, keepAlive: false)
        #expect(host.stand.heartbeatLapsed)
        #expect(host.faults.count == 1)
        #expect(abs(host.stand.truth(.yaw)!.velocity) < 1e-3)
        host.send(.velocity([AxisValue(.yaw, 1)]))
        host.run(0.15, keepAlive: true)
        #expect(!host.stand.heartbeatLapsed)
        #expect(host.stand.truth(.yaw)!.velocity > 0.5)
    }
}
