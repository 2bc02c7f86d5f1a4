import DockDrivers
import DockProtocol
import DockSim
import Testing

/// A stand written by hand, frame by frame, against the driver in virtual time: what PROTOCOL.md
/// v1.1 says the host must do with it (handshake timing, the stand's ACK requests, impossible values).
struct ScriptedStand {
    var driver: NativeDriver
    var sequencer = FrameSequencer()
    var decoder = FrameDecoder()
    var reports: [DriverReport] = []
    /// Every frame the host sent, with when.
    var received: [(time: Double, frame: Frame)] = []
    var time = 0.0
    let heartbeatTimeoutMs: UInt16

    init(heartbeatTimeoutMs: UInt16 = 500) {
        self.heartbeatTimeoutMs = heartbeatTimeoutMs
        driver = NativeDriver(heartbeatTimeoutMs: heartbeatTimeoutMs)
        hear(driver.start(at: 0))
    }

    mutating func hear(_ bytes: [UInt8]) {
        for case .success(let frame) in decoder.feed(bytes) { received.append((time, frame)) }
    }

    /// The stand sends `message` now.
    mutating func send(_ message: Message, ack: Bool = false) {
        reports += driver.receive(FrameEncoder.encode(sequencer.frame(message, ackRequested: ack)), at: time)
    }

    mutating func sendRaw(_ bytes: [UInt8]) { reports += driver.receive(bytes, at: time) }

    mutating func tick(at t: Double) {
        time = t
        let out = driver.tick(at: t)
        reports += out.reports
        hear(out.bytes)
    }

    /// Ticks every `period` until `end`; `each` runs before every tick (the stand's own output).
    mutating func run(until end: Double, period: Double = 0.02, each: (inout ScriptedStand) -> Void = { _ in }) {
        var t = time
        while t + period <= end + 1e-9 {
            t += period
            time = t
            each(&self)
            tick(at: t)
        }
    }

    mutating func handshake(batteries: [String] = ["internal"]) {
        send(.helloReply(HelloReply(heartbeatTimeoutMs: heartbeatTimeoutMs, model: "scripted", firmware: "1.1.0", hardware: "A", serial: "S-1")))
        send(.capabilities(Self.capabilities(batteries: batteries)))
    }

    static func capabilities(batteries: [String]) -> Capabilities {
        Capabilities(feedbackHz: 100, imuHz: 0, features: [], buttons: [], customButtons: 0,
                     axes: [AxisCapability(axis: .pitch, continuous: false, min: -0.5, max: 0.5, maxSpeed: 1, maxAccel: 4, countsPerRev: 4096)],
                     batteries: batteries)
    }

    var hellos: [Double] { received.filter { if case .hello = $0.frame.message { true } else { false } }.map(\.time) }
    var fatal: [String] { reports.compactMap { if case .fatal(let text) = $0 { text } else { nil } } }
    var incompatible: [String] { reports.compactMap { if case .incompatible(let text) = $0 { text } else { nil } } }
    var rejected: [String] { reports.compactMap { if case .rejected(let text) = $0 { text } else { nil } } }
    var ready: Bool { reports.contains { if case .ready = $0 { true } else { false } } }
    /// ACK/NACK frames the host sent, as (seq answered, type answered, NACK code or nil).
    var answers: [(seq: UInt16, type: UInt8, code: UInt8?)] {
        received.compactMap {
            switch $0.frame.message {
            case .ack(let a): (a.seq, a.type, nil)
            case .nack(let n): (n.seq, n.type, n.code)
            default: nil
            }
        }
    }
}

/// A frame of a type this version does not know, with a valid CRC.
private func unknownTypeFrame(type: UInt8, seq: UInt16, ack: Bool) -> [UInt8] {
    var packet: [UInt8] = [type, ack ? 1 : 0, UInt8(seq & 0xFF), UInt8(seq >> 8), 1, 2, 3]
    let crc = CRC16.checksum(packet)
    packet += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    return COBS.encode(packet) + [0]
}

@Suite("Native driver: protocol 1.1 session")
struct NativeDriverSessionTests {
    @Test func aSilentStandGetsFiveHellosOnTheSpecsScheduleThenTheHandshakeFails() {
        var stand = ScriptedStand()
        stand.run(until: 1.0)
        let expected = (0..<ProtocolTiming.helloAttempts).map { Double($0) * ProtocolTiming.helloInterval }
        #expect(stand.hellos.count == 5)
        for (got, want) in zip(stand.hellos, expected) { #expect(abs(got - want) < 0.021, "HELLO at \(got) s, due \(want) s") }
        #expect(stand.fatal.count == 1)
        let text = stand.fatal.first ?? ""
        #expect(text.contains("5 HELLOs") && text.contains("1.1"), "\(text)")
        // It gives up inside the host's link timeout, so the reason names the handshake.
        #expect(ProtocolTiming.handshakeTimeout < ProtocolTiming.linkTimeout)
        #expect(stand.driver.nextDeadline == nil)
    }

    @Test func aLateTickDoesNotShiftTheHelloSchedule() {
        var stand = ScriptedStand()
        stand.tick(at: 0.37)  // late: HELLO 1 was due at 0.15 and HELLO 2 at 0.30
        stand.run(until: 0.7)
        #expect(stand.hellos.count == 5)
        #expect(stand.hellos.last.map { abs($0 - 0.6) < 0.021 } == true, "\(stand.hellos)")
    }

    @Test func aStandThatHeartbeatsBeforeItsReplyIsHeardAndAnswersTheFifthHello() {
        var stand = ScriptedStand()
        var lastBeat = 0.0
        stand.run(until: 0.62) { s in
            if s.time - lastBeat >= ProtocolTiming.standHeartbeatInterval {
                lastBeat = s.time
                s.send(.heartbeat(uptimeMs: UInt32(s.time * 1000)))
            }
        }
        // Two heartbeats decoded before any HELLO_REPLY: the counter the daemon's link watchdog reads.
        #expect(stand.driver.counters.decoder.frames == 2)
        #expect(stand.hellos.count == 5)
        stand.handshake()
        #expect(stand.ready)
        stand.run(until: 1.2)
        #expect(stand.fatal.isEmpty)
    }

    @Test func aVersionMismatchNamesBothVersions() {
        var stand = ScriptedStand()
        stand.send(.helloReply(HelloReply(major: 2, minor: 3, heartbeatTimeoutMs: 500, model: "m", firmware: "f", hardware: "h", serial: "s")), ack: true)
        #expect(stand.incompatible == ["the stand speaks protocol 2.3, dockd speaks 1.1: refused"])
        // The stand asked for an ACK: it learns why before the link closes, and then nothing more.
        #expect(stand.driver.nextDeadline == 0)
        stand.tick(at: 0.01)
        #expect(stand.answers.map(\.code) == [NackCode.versionMismatch.rawValue])
        #expect(stand.driver.nextDeadline == nil)
        stand.run(until: 1)
        #expect(stand.received.count == 2, "HELLO and the NACK only")

        var refusing = ScriptedStand()
        refusing.send(.nack(Nack(seq: 0, type: MessageType.hello.rawValue, code: .versionMismatch, detail: "stand speaks 2.0")))
        #expect(refusing.incompatible == ["the stand refused dockd's protocol 1.1: stand speaks 2.0"])
    }

    @Test func everyAckRequestFromTheStandIsAnswered() {
        var stand = ScriptedStand()
        stand.handshake()
        stand.time = 0.1
        stand.send(.event(StandEvent(timeUs: 1, kind: .shutter)), ack: true)                                       // seq 2
        stand.send(.heartbeat(uptimeMs: 5), ack: true)                                                              // seq 3
        stand.send(.fault(Fault(timeUs: 2, severity: .warning, code: .stall, axis: .pitch, text: "stalled")), ack: true) // seq 4
        stand.send(.battery(BatteryState(index: 0, level: .nan, charge: .charging, low: false)), ack: true)          // seq 5
        stand.send(.ack(Ack(seq: 0, type: 1)), ack: true)                                                           // seq 6: never answered
        stand.sendRaw(unknownTypeFrame(type: 0x30, seq: 7, ack: true))
        stand.sendRaw(unknownTypeFrame(type: 0x31, seq: 8, ack: false))
        // A heartbeat whose payload is one byte short: malformed, but its header is good.
        var short: [UInt8] = [MessageType.heartbeat.rawValue, 1, 9, 0, 1, 2, 3]
        let crc = CRC16.checksum(short)
        short += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        stand.sendRaw(COBS.encode(short) + [0])
        // The answers are due at once: a caller that follows the deadline sends them now.
        #expect(stand.driver.nextDeadline.map { $0 <= 0.1 } == true)
        stand.tick(at: 0.1)
        let answers = stand.answers.map { "\($0.seq)/\(String($0.type, radix: 16))/\($0.code.map { "\($0)" } ?? "ack")" }
        #expect(answers == ["2/22/ack", "3/4/ack", "4/24/ack", "5/23/2", "7/30/1", "9/4/5"])
        #expect(stand.rejected.count == 1)
    }

    @Test func impossibleBatteryReportsAreRefusedNotPassedOn() {
        var stand = ScriptedStand()
        stand.send(.battery(BatteryState(index: 0, level: 0.5, charge: .charging, low: false)))  // before CAPABILITIES
        stand.handshake(batteries: ["internal"])
        for level: Float in [.nan, 1.5, -0.25, .infinity] {
            stand.send(.battery(BatteryState(index: 0, level: level, charge: .charging, low: false)))
        }
        stand.send(.battery(BatteryState(index: 3, level: 0.5, charge: .charging, low: false)))
        stand.send(.battery(BatteryState(index: 0, level: 0.42, charge: .notCharging, low: false)))
        let passed = stand.reports.compactMap { if case .battery(let b) = $0 { b.level } else { nil } }
        #expect(passed == [0.42])
        #expect(stand.rejected.count == 6)
        #expect(stand.rejected.contains { $0.contains("index 3") && $0.contains("1 battery") })
        #expect(stand.rejected.contains { $0.contains("nan") })
    }

    @Test func capabilitiesThatAreNotNumbersEndTheLink() {
        var stand = ScriptedStand()
        stand.send(.helloReply(HelloReply(heartbeatTimeoutMs: 500, model: "m", firmware: "f", hardware: "h", serial: "s")))
        var caps = ScriptedStand.capabilities(batteries: [])
        caps.axes[0].maxSpeed = .nan
        stand.send(.capabilities(caps))
        #expect(!stand.ready)
        #expect(stand.fatal.first?.contains("max_speed") == true)
    }
}

@Suite("Native driver: heartbeat pace")
struct NativeDriverHeartbeatTests {
    /// The host's frames as the stand sees them, idle, with the daemon's 20 ms ticks (PROTOCOL.md
    /// §3: at most `heartbeat_timeout_ms / 4` apart).
    @Test("idle gaps stay within a quarter of the timeout with 20 ms ticks", arguments: [100, 200, 500, 1000] as [UInt16])
    func idleHeartbeatPace(timeoutMs: UInt16) {
        var stand = ScriptedStand(heartbeatTimeoutMs: timeoutMs)
        stand.handshake()
        stand.run(until: 5)
        let times = stand.received.map(\.time).filter { $0 > 0.5 }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        let limit = Double(timeoutMs) / 4000
        #expect(gaps.count > 10)
        #expect((gaps.max() ?? 1) <= limit + 1e-9, "largest gap \(gaps.max() ?? 0) s, limit \(limit) s")
        // No flood either: never more often than the ticks, and near the limit when ticks allow it.
        #expect((gaps.min() ?? 0) >= min(0.02, limit) - 1e-9)
        if limit >= 0.1 { #expect((gaps.min() ?? 0) >= 0.75 * limit, "smallest gap \(gaps.min() ?? 0) s") }
    }

    @Test("a caller that ticks only at nextDeadline keeps the pace", arguments: [100, 500, 5000] as [UInt16])
    func deadlineDrivenPace(timeoutMs: UInt16) throws {
        var stand = ScriptedStand(heartbeatTimeoutMs: timeoutMs)
        stand.handshake()
        var ticks = 0
        while stand.time < 20, ticks < 10_000 {
            let due = try #require(stand.driver.nextDeadline)
            #expect(due > stand.time - 1e-9 || ticks == 0)
            stand.tick(at: max(stand.time, due))
            ticks += 1
        }
        let times = stand.received.map(\.time).filter { $0 > 0.1 }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        let limit = Double(timeoutMs) / 4000
        #expect((gaps.max() ?? 1) <= limit + 1e-9)
        #expect((gaps.min() ?? 0) >= 0.75 * limit)
        #expect(ticks < Int(20 / (0.75 * limit)) + 10, "\(ticks) ticks: one per heartbeat, no busy loop")
    }

    @Test func aLateTickSendsAtOnceAndThePaceResumes() {
        var stand = ScriptedStand(heartbeatTimeoutMs: 500)
        stand.handshake()
        stand.run(until: 1)
        stand.tick(at: 1.3)  // the caller was 300 ms late
        #expect(stand.received.last.map { abs($0.time - 1.3) < 1e-9 } == true)
        stand.run(until: 3)
        let times = stand.received.map(\.time).filter { $0 > 1.29 }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect((gaps.max() ?? 1) <= 0.125 + 1e-9)
    }
}
