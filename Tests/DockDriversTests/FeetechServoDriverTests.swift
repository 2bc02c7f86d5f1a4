import DockCore
@testable import DockDrivers
import DockProtocol
import StandEngine
import Testing
import VirtualTime

/// The Feetech bus servo driver: made from its options; its connect (read both servos, hold them
/// where they are, torque on), one request at a time on the half-duplex bus, rates as goals ahead,
/// a servo's error byte reported as a refusal; and under the virtual host against
/// `FeetechServosPeer`: oriented on the measured positions, stopped on shutdown.
@Suite struct FeetechServoDriverTests {
    static func status(_ id: UInt8, error: UInt8 = 0, _ parameters: [UInt8]) -> [UInt8] {
        let body = [id, UInt8(parameters.count + 2), error] + parameters
        return [0xFF, 0xFF] + body + [~body.reduce(0, &+)]
    }

    static func make(_ options: [String: String] = [:]) throws -> FeetechServoDriver {
        try #require(try FeetechServoDriver.definition.make(texts: options, heartbeatTimeoutMs: 500) as? FeetechServoDriver)
    }

    @Test func itIsMadeFromItsDeclaredOptions() throws {
        #expect(throws: DriverFailure.self) { try FeetechServoDriver.definition.make(texts: ["tilt_id": "1"], heartbeatTimeoutMs: 500) }
        #expect(throws: DriverFailure.self) { try FeetechServoDriver.definition.make(texts: ["pan_min": "0", "pan_max": "0"], heartbeatTimeoutMs: 500) }
        #expect(throws: DriverFailure.self) { try FeetechServoDriver.definition.make(texts: ["pan_direction": "left"], heartbeatTimeoutMs: 500) }
        let made = try Self.make(["pan_id": "7", "tilt_direction": "reversed", "tilt_centre": "1000"])
        #expect(made.settings.pan == .init(id: 7, sign: 1, centre: 2048, range: -3...3))
        #expect(made.settings.tilt == .init(id: 2, sign: -1, centre: 1000, range: -1.5...1.5))
        #expect(made.settings.countsPerRev == 4096 && made.settings.pollHz == 50)
        #expect(FeetechServoDriver.definition.defaultBaud == 1_000_000 && FeetechServoDriver.definition.hotplug == nil)
    }

    @Test func itConnectsOneReadAtATimeThenHoldsBothServosWhereTheyAreBeforeTorqueOn() throws {
        var driver = try Self.make()
        let first = driver.start(at: 0)
        #expect(first == Feetech.read(id: 1, .presentPosition, count: 4))
        let waiting = driver.tick(at: 0.05).bytes
        #expect(waiting == [], "nothing while the pan's answer is awaited")
        // Pan at 0x0900 = 2304 steps, still.
        let pan = driver.receive(Self.status(1, [0x00, 0x09, 0x00, 0x00]), at: 0.051)
        #expect(pan == [])
        let tiltRead = driver.tick(at: 0.06).bytes
        #expect(tiltRead == Feetech.read(id: 2, .presentPosition, count: 4))
        let reports = driver.receive(Self.status(2, [0x00, 0x07, 0x00, 0x00]), at: 0.061)
        guard case .ready(let identity, _)? = reports.first else { Issue.record("not ready: \(reports)"); return }
        #expect(identity.serial == "feetech-1-2")
        guard case .feedback(let feedback)? = reports.last else { Issue.record("no feedback: \(reports)"); return }
        // 256 steps of 4096 a turn to the left of the centre: π/8; the tilt 256 below it.
        #expect(abs(Double(feedback.axes[0].position) - .pi / 8) < 1e-6 && abs(Double(feedback.axes[1].position) + .pi / 8) < 1e-6)
        let top = Int((2.0 * 4096 / (2 * .pi)).rounded())
        let hold = Feetech.syncWrite(.goalPosition, [(1, Feetech.goal(position: 2304, speed: top)), (2, Feetech.goal(position: 1792, speed: top))])
        let torque = Feetech.syncWrite(.torqueEnable, [(1, [1]), (2, [1])])
        #expect(driver.nextDeadline! <= 0.061, "the hold goes at once")
        let held = driver.tick(at: 0.062).bytes
        #expect(held == hold + torque + Feetech.read(id: 1, .presentPosition, count: 4))
    }

    static let centred: [UInt8] = [0x00, 0x08, 0x00, 0x00]

    /// Started, both servos read at 2048 (reads 0.02 s apart at 50 Hz), then at 0.04 the hold, torque
    /// on and the next read of the pan, whose answer is awaited.
    static func connected(_ options: [String: String] = [:]) throws -> FeetechServoDriver {
        var driver = try make(options)
        _ = driver.start(at: 0)
        _ = driver.receive(status(1, centred), at: 0.001)
        _ = driver.tick(at: 0.02)
        _ = driver.receive(status(2, centred), at: 0.021)
        let sent = driver.tick(at: 0.04).bytes
        #expect(sent.suffix(8) == Feetech.read(id: 1, .presentPosition, count: 4)[...])
        return driver
    }

    @Test func aRateIsAGoalALeadAheadAtItsSpeedRenewedWhileInForceAndNeverSentOverAnAnswer() throws {
        var driver = try Self.connected(["pan_direction": "reversed"])
        let early = driver.send(.velocity([AxisValue(.yaw, 0.5)]), at: 0.041)
        #expect(early == [], "a read is awaited: the rate waits for its answer")
        _ = driver.receive(Self.status(1, Self.centred), at: 0.042)
        // 0.5 rad/s = 326 steps/s, the pan's steps growing to the right: 0.3 s of it below 2048.
        let speed = Int((0.5 * 4096 / (2 * .pi)).rounded()), top = Int((2.0 * 4096 / (2 * .pi)).rounded())
        let goals = Feetech.syncWrite(.goalPosition, [(1, Feetech.goal(position: 2048 - Int((Double(speed) * 0.3).rounded()), speed: speed)),
                                                      (2, Feetech.goal(position: 2048, speed: top))])
        #expect(driver.nextDeadline! <= 0.042)
        let sent = driver.tick(at: 0.043).bytes
        #expect(sent == goals)
        // Renewed 0.1 s after it was asked, with no new rate; every read answered.
        var renewed = false
        var time = 0.044
        while time < 0.3, !renewed {
            let bytes = driver.tick(at: time).bytes
            renewed = bytes.starts(with: Feetech.header + [Feetech.broadcast, 18, Feetech.Instruction.syncWrite.rawValue])
            if bytes.count >= 8, bytes[bytes.count - 4] == Feetech.Instruction.read.rawValue {
                _ = driver.receive(Self.status(bytes[bytes.count - 6], Self.centred), at: time)
            }
            time += 0.001
        }
        #expect(renewed && time > 0.141 && time < 0.15, "renewed at \(time)")
    }

    @Test func aStopHoldsBothServosWhereTheirReadsPutThemAndIsConfirmedOnceBothReadStill() throws {
        var driver = try Self.connected()
        // The pan read at 2100 turning at 300 steps/s; the tilt at 2048.
        _ = driver.receive(Self.status(1, [0x34, 0x08, 0x2C, 0x01]), at: 0.041)
        _ = driver.send(.velocity([AxisValue(.yaw, 0.5)]), at: 0.042)
        let stop = driver.send(.stop, at: 0.05)
        let top = Int((2.0 * 4096 / (2 * .pi)).rounded())
        // 2100 + 300 steps/s × the read's 9 ms: 2102.7.
        #expect(stop == Feetech.syncWrite(.goalPosition, [(1, Feetech.goal(position: 2103, speed: top)), (2, Feetech.goal(position: 2048, speed: top))]),
                "goal = where the read puts the servo now, never goal speed 0 (the servo's top speed)")
        #expect(!driver.stopConfirmed)
        _ = driver.tick(at: 0.06)
        _ = driver.receive(Self.status(2, Self.centred), at: 0.061)
        _ = driver.tick(at: 0.08)
        _ = driver.receive(Self.status(1, [0x34, 0x08, 0x00, 0x00]), at: 0.081)
        #expect(driver.stopConfirmed, "both servos read still after the stop")
    }

    /// A stop asked while an answer is awaited goes when the bus is free, holding the servo where it
    /// is then: worked out when asked, the pan turning at 300 steps/s was held 27 steps behind
    /// itself by the time the goal went 90 ms later (the answer lost, its timeout run out).
    @Test func aStopWaitingForTheBusHoldsTheServoWhereItIsWhenItGoes() throws {
        var driver = try Self.connected()  // the pan's read sent at 0.04, its answer awaited
        _ = driver.receive(Self.status(1, [0x34, 0x08, 0x2C, 0x01]), at: 0.041)  // 2100, 300 steps/s
        let read = driver.tick(at: 0.06).bytes
        #expect(read == Feetech.read(id: 2, .presentPosition, count: 4))
        let asked = driver.send(.stop, at: 0.061)
        #expect(asked == [], "the tilt's answer is awaited: nothing goes over it")
        let sent = driver.tick(at: 0.16).bytes  // the tilt's answer lost: its 0.1 s timeout runs out
        let top = Int((2.0 * 4096 / (2 * .pi)).rounded())
        // 2100 + 300 steps/s × 0.119 s since the read: 2135.7.
        #expect(sent.starts(with: Feetech.syncWrite(.goalPosition, [(1, Feetech.goal(position: 2136, speed: top)), (2, Feetech.goal(position: 2048, speed: top))])),
                "held where the read puts the pan when the goal goes")
    }

    /// The range dockd is told is the one the servo can reach: `pan_centre` 100 leaves 100 steps
    /// (0.153 rad) to the right in its turn, not the configured 3 rad.
    @Test func theRangeReportedIsTheConfiguredOneCutToTheServosTurn() throws {
        var driver = try Self.make(["pan_centre": "100"])
        _ = driver.start(at: 0)
        _ = driver.receive(Self.status(1, [0x64, 0x00, 0x00, 0x00]), at: 0.001)
        _ = driver.tick(at: 0.02)
        let reports = driver.receive(Self.status(2, Self.centred), at: 0.021)
        guard case .ready(_, let capabilities)? = reports.first else { Issue.record("not ready: \(reports)"); return }
        let pan = try #require(capabilities.axes.first { $0.axis == .yaw })
        let step = 2 * Double.pi / 4096  // the ends fall on whole steps
        #expect(abs(Double(pan.min) + 100 * step) < 1e-4 && abs(Double(pan.max) - 3) < step, "pan \(pan.min)…\(pan.max)")
        let tilt = try #require(capabilities.axes.first { $0.axis == .pitch })
        #expect(abs(Double(tilt.min) + 1.5) < step && abs(Double(tilt.max) - 1.5) < step, "tilt \(tilt.min)…\(tilt.max)")
    }

    /// A centre configured past the servo's turn (each option is valid alone, so it is taken): a
    /// rate's goals stay on the turn's last step, never a step the servo does not have (the reach
    /// was 63579…63579 for a centre of 65535: goal 63579, sent as its low 16 bits).
    @Test func aCentrePastTheTurnNeverSendsAStepTheServoLacks() throws {
        var driver = try Self.make(["pan_centre": "65535"])
        _ = driver.start(at: 0)
        _ = driver.receive(Self.status(1, [0xFF, 0x0F, 0x00, 0x00]), at: 0.001)  // at 4095
        _ = driver.tick(at: 0.02)
        _ = driver.receive(Self.status(2, Self.centred), at: 0.021)
        _ = driver.tick(at: 0.022)  // the hold and torque on
        _ = driver.receive(Self.status(1, [0xFF, 0x0F, 0x00, 0x00]), at: 0.023)
        let sent = driver.send(.velocity([AxisValue(.yaw, 0.5)]), at: 0.03)
        // FF FF FE len 83 2A 06 | id, position (2), time (2), speed (2) | …
        #expect(sent.count > 10 && sent[4] == 0x83 && sent[7] == 1)
        let goal = Int(sent[8]) | Int(sent[9]) << 8
        #expect(goal <= 4095, "pan goal \(goal)")
    }

    @Test func aRateAskedAfterAStopStillWaitingForTheBusIsNoStopToConfirm() throws {
        var driver = try Self.connected()
        _ = driver.send(.stop, at: 0.041)
        _ = driver.send(.velocity([AxisValue(.yaw, 0.5)]), at: 0.042)
        _ = driver.receive(Self.status(1, Self.centred), at: 0.043)
        let sent = driver.tick(at: 0.044).bytes
        #expect(sent.starts(with: Feetech.header + [Feetech.broadcast, 18, Feetech.Instruction.syncWrite.rawValue]), "the rate's goals")
        #expect(driver.stopConfirmed, "the stop was replaced before it went: nothing to confirm")
    }

    @Test func aRateAskedBeforeAReconnectIsNotRenewedAfterIt() throws {
        var driver = try Self.connected()
        _ = driver.receive(Self.status(1, Self.centred), at: 0.041)
        _ = driver.send(.velocity([AxisValue(.yaw, 0.5)]), at: 0.042)
        _ = driver.start(at: 1)
        _ = driver.receive(Self.status(1, Self.centred), at: 1.001)
        _ = driver.tick(at: 1.02)
        _ = driver.receive(Self.status(2, Self.centred), at: 1.021)
        var writes: [[UInt8]] = []
        var time = 1.022
        while time < 1.5 {
            var bytes = driver.tick(at: time).bytes
            if bytes.count >= 8, bytes[bytes.count - 4] == Feetech.Instruction.read.rawValue {
                _ = driver.receive(Self.status(bytes[bytes.count - 6], Self.centred), at: time)
                bytes.removeLast(8)
            }
            if !bytes.isEmpty { writes.append(bytes) }
            time += 0.005
        }
        let top = Int((2.0 * 4096 / (2 * .pi)).rounded())
        let hold = Feetech.syncWrite(.goalPosition, [(1, Feetech.goal(position: 2048, speed: top)), (2, Feetech.goal(position: 2048, speed: top))])
        #expect(writes == [hold + Feetech.syncWrite(.torqueEnable, [(1, [1]), (2, [1])])], "the hold and torque on, no goal of the old rate")
    }

    @Test func aServosErrorByteIsARefusalNamingItAndSoIsMotionAskedWhileItLasts() throws {
        var driver = try Self.connected()
        let refusal = DriverReport.refused(command: MessageType.velocity.rawValue, reason: "servo 1 (pan) reports overload")
        let first = driver.receive(Self.status(1, error: 0x20, Self.centred), at: 0.041)
        #expect(first.first == refusal)
        _ = driver.tick(at: 0.06)
        _ = driver.receive(Self.status(2, Self.centred), at: 0.061)
        _ = driver.tick(at: 0.08)
        let again = driver.receive(Self.status(1, error: 0x20, Self.centred), at: 0.081)
        #expect(!again.contains(refusal), "once per error, not at every read")
        _ = driver.send(.velocity([AxisValue(.yaw, 0.2)]), at: 0.09)
        let refused = driver.tick(at: 0.09).reports
        #expect(refused == [refusal], "motion asked while the servo is in trouble")
        #expect(driver.counters.refused == 2)
    }

    @Test func aServoThatDoesNotAnswerFailsTheConnect() throws {
        var driver = try Self.make(["tilt_id": "9"])
        _ = driver.start(at: 0)
        _ = driver.receive(Self.status(1, [0x00, 0x08, 0x00, 0x00]), at: 0.001)
        var reports: [DriverReport] = []
        var time = 0.002
        while time < 2, reports.isEmpty {
            let out = driver.tick(at: time)
            reports = out.reports
            if out.bytes.suffix(8).starts(with: Feetech.header + [1]) { _ = driver.receive(Self.status(1, [0x00, 0x08, 0x00, 0x00]), at: time) }
            time += 0.01
        }
        #expect(reports == [.fatal("servo 9 (tilt) does not answer on the bus")])
        #expect(time > 0.3 && time < 0.7, "three reads of 0.1 s missed (\(time))")
    }

    static func host(_ options: [String: DriverValue] = [:]) throws -> VirtualHost<FeetechServosPeer> {
        let driver = try FeetechServoDriver.definition.make(options, heartbeatTimeoutMs: ProtocolTiming.defaultHeartbeatTimeoutMs)
        var host = VirtualHost(driver: driver, peer: FeetechServosPeer(at: 1500), name: "virtual:feetech")
        let connected = host.connect(timeout: 5)
        #expect(connected)
        return host
    }

    @Test(arguments: ["normal", "reversed"])
    func theOrientationCompletesOnTheMeasuredPositions(_ direction: String) throws {
        var host = try Self.host(["pan_direction": .text(direction), "tilt_direction": .text(direction)])
        host.run(for: 0.3)
        guard case .motion(let id)? = try host.send(.orient([.yaw: 0.5, .pitch: -0.2], relative: false, duration: 1.5)) else {
            Issue.record("the orientation was not taken")
            return
        }
        let ended = host.run(until: host.now + 20) { host in
            host.notifications.contains { if case .motionProgress(let p) = $0.notification, p.id == id, p.state.isFinal { true } else { false } }
        }
        #expect(ended, "\(host.logs.suffix(4))")
        var state: MotionProgress.State?
        for case .motionProgress(let p) in host.notifications.map(\.notification) where p.id == id && p.state.isFinal { state = p.state }
        #expect(state == .completed)
        let rested = host.run(until: host.now + 5) { $0.peer.still }
        #expect(rested, "the servos were stopped")
        let sign = direction == "normal" ? 1.0 : -1.0, perRadian = 4096 / (2 * Double.pi)
        let yaw = sign * (host.peer.steps(1) - 2048) / perRadian, pitch = sign * (host.peer.steps(2) - 2048) / perRadian
        let tolerance = MotionConfiguration().positionTolerance
        #expect(abs(yaw - 0.5) < tolerance && abs(pitch + 0.2) < tolerance, "\(direction): at (\(yaw), \(pitch))")
    }

    @Test func aReconnectReadsBothServosAndHoldsThemBeforeAnythingElse() throws {
        var host = try Self.host()
        _ = host.command(.velocity([.yaw: 0.5]))
        host.run(for: 0.5)
        let before = host.peer.received.count
        host.unplug(reopenAfter: 0.5)
        let reconnected = host.run(until: host.now + 5) { $0.engine.linkState == .connected && $0.peer.received.count > before + 3 }
        #expect(reconnected)
        let after = Array(host.peer.received[before...])
        #expect(after.prefix(2).map { [$0[2], $0[4], $0[5]] } == [[1, 0x02, 0x38], [2, 0x02, 0x38]], "both read first")
        let hold = try #require(after.first { $0[4] == 0x83 })
        #expect(hold[5] == 0x2A, "the first write is a goal: the hold")
        let goal = Int(hold[8]) | Int(hold[9]) << 8
        #expect(abs(Double(goal) - host.peer.steps(1)) <= 1, "held where the servo was when read again, not a rate's goal ahead")
        let held = host.peer.steps(1)
        host.run(for: 0.5)
        #expect(host.peer.still && host.peer.steps(1) == held, "nothing asked before the reconnect goes on after it")
    }

    @Test func shutdownHoldsMovingServosWhereTheyWereRead() throws {
        var host = try Self.host()
        _ = host.command(.velocity([.yaw: 0.5, .pitch: 0.2]))
        host.run(for: 0.4)  // inside the engine's velocity deadman (0.5 s), which stops the servos itself
        #expect(!host.peer.still && host.peer.steps(1) > 1500 + 50)
        host.shutdown()
        let stopped = host.run(until: host.now + 0.2) { $0.peer.still }
        #expect(stopped, "the servos stop when dockd does")
        #expect(abs(Double(host.peer.goal(1)) - host.peer.steps(1)) < 1 && host.peer.tables[1]?[0x28] == 1, "held, torque on")
    }

    /// A zero rate after a fast one (here the engine's velocity deadman, 0.5 s after a rate not
    /// renewed; the end of an orientation too) holds each servo where it is now; held where it was
    /// last read, the servo still turning was sent back (0.018–0.030 rad at 1.5 rad/s, the review's
    /// run through dockd).
    @Test func aZeroRateHoldsAServoWhereItIsNotWhereItWasLastRead() throws {
        var host = try Self.host()
        _ = host.command(.velocity([.yaw: 1.5, .pitch: 1.0]))
        var farthest = (host.peer.steps(1), host.peer.steps(2)), back = 0.0
        _ = host.run(until: host.now + 1.5) { h in
            back = max(back, farthest.0 - h.peer.steps(1), farthest.1 - h.peer.steps(2))
            farthest = (max(farthest.0, h.peer.steps(1)), max(farthest.1, h.peer.steps(2)))
            return false
        }
        #expect(back < 1, "a servo went \(back) steps back after the zero rate")
        #expect(host.peer.still)
    }

    /// A servo that stops answering once connected closes the link (its feedback would repeat the
    /// last read while the engine steered on it), so the engine says the stand is gone.
    @Test func aServoFallingSilentOnceConnectedClosesTheLink() throws {
        var host = try Self.host()
        host.atPeer { peer, _ in peer.remove(2); return [] }
        let left = host.run(until: host.now + 3) { $0.engine.linkState != .connected }
        #expect(left, "still connected 3 s after servo 2 fell silent")
    }

    /// A servo found outside its axis's range at connect (tilt 948, the range's end at 1070) is held
    /// there: the connect moves nothing (clamped to the range, the tilt went to 1071 at full speed).
    @Test func theConnectHoldsAServoOutsideItsRangeWhereItIs() throws {
        let driver = try FeetechServoDriver.definition.make([:], heartbeatTimeoutMs: ProtocolTiming.defaultHeartbeatTimeoutMs)
        var host = VirtualHost(driver: driver, peer: FeetechServosPeer(at: 948), name: "virtual:feetech")
        let connected = host.connect(timeout: 5)
        #expect(connected)
        host.run(for: 0.5)
        #expect(host.peer.steps(1) == 948 && host.peer.steps(2) == 948, "moved to \(host.peer.steps(1)), \(host.peer.steps(2))")
    }

    /// Motion refused because a servo reports trouble is not sent: the servos stay where they are.
    @Test func motionRefusedForAServoInTroubleIsNotSent() throws {
        var host = try Self.host()
        host.atPeer { peer, _ in peer.errors[1] = 0x20; return [] }
        host.run(for: 0.2)
        let at = (host.peer.steps(1), host.peer.steps(2))
        _ = host.command(.velocity([.yaw: 0.5, .pitch: 0.3]))
        host.run(for: 0.4)
        #expect(host.peer.steps(1) == at.0 && host.peer.steps(2) == at.1,
                "moved from \(at) to (\(host.peer.steps(1)), \(host.peer.steps(2))) while refused")
    }
}
