import DockDrivers
import DockProtocol
import Foundation
import Testing

/// The VISCA driver in virtual time: byte-exact exchanges, and longer runs against a scripted
/// camera (VISCAScriptedCamera.swift).
@Suite struct VISCADriverTests {
    let profile: VISCAProfile
    let h700: VISCAProfile

    /// The shipped profiles without their zoom: these are the pan/tilt's exchanges (the zoom's,
    /// which add CAM_ZoomPosInq to every poll, are VISCAZoomTests').
    init() throws {
        profile = try VISCAProfile.load("generic-ptzoptics", searchPaths: [Fixtures.profiles]).withoutZoom
        h700 = try VISCAProfile.load("sony-brc-h700", searchPaths: [Fixtures.profiles]).withoutZoom
    }

    static let stop = "81 01 06 01 01 01 03 03 ff"
    static let ackAndCompletion: [UInt8] = [0x90, 0x41, 0xFF, 0x90, 0x51, 0xFF]

    static let poll = "81 09 06 12 ff"
    static let position: [UInt8] = [0x90, 0x50, 0x0F, 0x0F, 0x0F, 0x06, 0x00, 0x00, 0x01, 0x00, 0xFF]

    /// Through AddressSet; IF_Clear, the connect Stop and the first poll (pan −10 units = 10/14.4°
    /// left, tilt +16); LimitClear for both corners; the next poll (at 0.07 s; the one after is due
    /// at 0.12 s): each answered by hand. Returns what the first poll's answer reported.
    func readyDriver() -> (VISCADriver, [DriverReport]) {
        var d = VISCADriver(profile: profile, address: 1, transport: .serial, pollHz: 20)
        #expect(d.start(at: 0) == [0x88, 0x30, 0x01, 0xFF])
        #expect(d.receive([0x88, 0x30, 0x02, 0xFF], at: 0.01).isEmpty)
        // Clear, stop and read in one go: the camera takes them in that order.
        #expect(d.tick(at: 0.02).bytes.hexText == "81 01 00 01 ff " + Self.stop + " " + Self.poll)
        #expect(!d.stopConfirmed)
        _ = d.receive([0x90, 0x50, 0xFF], at: 0.025)
        _ = d.receive([0x90, 0x41, 0xFF], at: 0.027)
        #expect(!d.stopConfirmed, "an ACK is not the Stop done")
        _ = d.receive([0x90, 0x51, 0xFF], at: 0.03)
        #expect(d.stopConfirmed)
        let reports = d.receive(Self.position, at: 0.035)
        // The limits, before any drive.
        #expect(d.tick(at: 0.04).bytes.hexText == "81 01 06 07 01 01 07 0f 0f 0f 07 0f 0f 0f ff")
        _ = d.receive(Self.ackAndCompletion, at: 0.045)
        #expect(d.tick(at: 0.05).bytes.hexText == "81 01 06 07 01 00 07 0f 0f 0f 07 0f 0f 0f ff")
        _ = d.receive(Self.ackAndCompletion, at: 0.055)
        #expect(d.tick(at: 0.07).bytes.hexText == Self.poll)
        _ = d.receive(Self.position, at: 0.075)
        return (d, reports)
    }

    /// Answers whatever `d` sends (AddressSet, IF_Clear, commands, Pan-tiltPosInq with `position`)
    /// one message at a time until it reports ready.
    func handshake(_ d: inout VISCADriver, position: [UInt8]) -> [DriverReport] {
        var pending = d.start(at: 0), t = 0.0, reports: [DriverReport] = []
        while t < 1 {
            t += 0.01
            for m in pending.split(separator: 0xFF).map({ Array($0) + [0xFF] }) {
                let answer: [UInt8] = m == VISCA.addressSet() ? [0x88, 0x30, 0x02, 0xFF]
                    : m == VISCA.ifClear(address: 1) ? [0x90, 0x50, 0xFF]
                    : m == VISCA.positionInquiry(address: 1) ? [0x90, 0x50] + position + [0xFF] : Self.ackAndCompletion
                reports += d.receive(answer, at: t)
            }
            if reports.contains(where: { if case .ready = $0 { true } else { false } }) {
                // The limits the camera takes, answered, so the next command goes at once.
                for _ in 0..<4 { t += 0.01; if !d.tick(at: t).bytes.isEmpty { _ = d.receive(Self.ackAndCompletion, at: t) } }
                return reports
            }
            pending = d.tick(at: t).bytes
        }
        Issue.record("no ready: \(reports)")
        return reports
    }

    @Test func handshakeThenFirstPollReportsReadyAndFeedback() throws {
        let (d, reports) = readyDriver()
        #expect(reports.count == 2)
        guard case .ready(let id, let caps) = reports.first, case .feedback(let f) = reports.last else {
            Issue.record("expected ready then feedback, got \(reports)"); return
        }
        #expect(id.serial == "visca-1" && id.model == profile.model)
        #expect(caps.imuHz == 0 && caps.batteries.isEmpty && caps.buttons.isEmpty && caps.features.isEmpty)
        #expect(caps.feedbackHz == 20)
        let yaw = try #require(caps.axis(.yaw)), pitch = try #require(caps.axis(.pitch))
        #expect(abs(Double(yaw.max) - 170 * .pi / 180) < 1e-5 && abs(Double(pitch.min) + 30 * .pi / 180) < 1e-5)
        #expect(abs(Double(yaw.maxSpeed) - 120 * .pi / 180) < 1e-5)
        // Pan −10 units is to the LEFT, i.e. positive stand yaw.
        #expect(abs(Double(f.axis(.yaw)!.position) - 10 / 14.4 * .pi / 180) < 1e-6)
        #expect(abs(Double(f.axis(.pitch)!.position) - 16 / 14.4 * .pi / 180) < 1e-6)
        #expect(d.counters.decoder.frames == 10)
        #expect(d.closesPositionLoop && d.stopConfirmed)
        #expect(d.counters.roundTrip.smoothed != nil, "replies time the link")
    }

    @Test func oneCommandInFlightPollsOnTheirOwnLaneAndIdenticalVelocitiesAreNotResent() {
        var (d, _) = readyDriver()
        let left = Message.velocity([AxisValue(.yaw, 0.3), AxisValue(.pitch, 0.1)])
        // 0.3 rad/s = 17.2°/s → byte 0x0f (19°/s) left; 0.1 rad/s = 5.7°/s → byte 0x06 (6°/s) up.
        #expect(d.send(left, at: 0.08).hexText == "81 01 06 01 0f 06 01 01 ff")
        #expect(!d.stopConfirmed)
        // A drive in flight: the next one waits.
        #expect(d.send(.velocity([AxisValue(.yaw, -0.3)]), at: 0.081).isEmpty)
        #expect(d.tick(at: 0.09).bytes.isEmpty)
        _ = d.receive([0x90, 0x41, 0xFF], at: 0.091)
        #expect(d.tick(at: 0.095).bytes.isEmpty)  // ACKed but not completed
        _ = d.receive([0x90, 0x51, 0xFF], at: 0.1)
        // The newest drive and the due poll go together: commands and inquiries are separate lanes.
        #expect(d.tick(at: 0.125).bytes.hexText == "81 01 06 01 0f 01 02 03 ff 81 09 06 12 ff")
        _ = d.receive([0x90, 0x42, 0xFF, 0x90, 0x52, 0xFF], at: 0.13)
        #expect(d.send(.velocity([AxisValue(.yaw, -0.3)]), at: 0.131).isEmpty)  // in force: not resent
        // The poll is still unanswered: the Stop goes anyway.
        #expect(d.send(.stop, at: 0.132).hexText == Self.stop)
    }

    /// --calibrate times a speed from when the camera took its drive: the ACK of the last drive asked
    /// for, not an earlier one's while the newer waits in the lane.
    @Test func driveTakenAtIsTheLastDrivesAcknowledgement() {
        var (d, _) = readyDriver()
        _ = d.send(.velocity([AxisValue(.yaw, 0.3)]), at: 0.08)
        #expect(d.driveTakenAt == nil)
        _ = d.send(.velocity([AxisValue(.yaw, -0.3)]), at: 0.081)  // waits behind the first
        _ = d.receive([0x90, 0x41, 0xFF], at: 0.091)
        #expect(d.driveTakenAt == nil, "the first drive's ACK, the second still waiting")
        _ = d.receive([0x90, 0x51, 0xFF], at: 0.1)
        #expect(d.tick(at: 0.125).bytes.hexText.hasPrefix("81 01 06 01 0f 01 02 03 ff"))
        #expect(d.driveTakenAt == nil)
        _ = d.receive([0x90, 0x41, 0xFF], at: 0.13)
        #expect(d.driveTakenAt == 0.13)
        _ = d.receive([0x90, 0x51, 0xFF], at: 0.135)
        #expect(d.driveTakenAt == 0.13, "its Completion does not move it")
    }

    @Test func stopGoesOutAtOnceBesideADriveInFlight() {
        var (d, _) = readyDriver()
        #expect(!d.send(.velocity([AxisValue(.yaw, 0.3)]), at: 0.08).isEmpty)
        // No answer to the drive yet; the Stop does not wait behind it (the camera's second socket).
        #expect(d.send(.stop, at: 0.085).hexText == Self.stop)
        // The drive's ACK and completion, then the Stop's, in socket 2.
        _ = d.receive(Self.ackAndCompletion, at: 0.09)
        #expect(!d.stopConfirmed)
        _ = d.receive([0x90, 0x42, 0xFF, 0x90, 0x52, 0xFF], at: 0.095)
        #expect(d.stopConfirmed)
        // A second .stop while one is on its way with nothing after it adds nothing.
        _ = d.send(.velocity([AxisValue(.yaw, 0.3)]), at: 0.1)
        #expect(d.send(.stop, at: 0.101).hexText == Self.stop)
        #expect(d.send(.stop, at: 0.102).isEmpty)
    }

    @Test func aDriveAskedBeforeAStopNeverGoesAfterIt() {
        var (d, _) = readyDriver()
        _ = d.send(.velocity([AxisValue(.yaw, 0.3)]), at: 0.08)
        #expect(d.send(.velocity([AxisValue(.yaw, 0.5)]), at: 0.081).isEmpty)  // waits
        #expect(d.send(.stop, at: 0.082).hexText == Self.stop)
        _ = d.receive(Self.ackAndCompletion + [0x90, 0x42, 0xFF, 0x90, 0x52, 0xFF], at: 0.09)
        for t in stride(from: 0.1, to: 1.0, by: 0.01) {
            let out = d.tick(at: t).bytes
            #expect(out.isEmpty || out == VISCA.positionInquiry(address: 1), "at \(t): \(out.hexText)")
            if !out.isEmpty { _ = d.receive([0x90, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF], at: t + 0.002) }
        }
        #expect(d.stopConfirmed)
    }

    @Test func zeroVelocityToAStoppedCameraSendsNothingButStopAlwaysGoes() {
        var (d, _) = readyDriver()
        #expect(d.send(.velocity([AxisValue(.yaw, 0), AxisValue(.pitch, 0)]), at: 0.08).isEmpty)
        #expect(d.send(.stop, at: 0.09).hexText == Self.stop)
    }

    @Test func bufferFullBacksOffThenResendsTheNewestDriveWhilePollsGoOn() {
        var (d, _) = readyDriver()
        let first = d.send(.velocity([AxisValue(.yaw, 0.3)]), at: 0.08)
        #expect(d.receive([0x90, 0x60, 0x03, 0xFF], at: 0.085).isEmpty)
        #expect(d.tick(at: 0.1).bytes.isEmpty)                                      // backing off 0.1 s
        #expect(d.tick(at: 0.125).bytes == VISCA.positionInquiry(address: 1))      // polls do not wait
        _ = d.receive([0x90, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF], at: 0.13)
        #expect(Array(d.tick(at: 0.19).bytes.prefix(first.count)) == first)        // the same drive, once
        #expect(d.counters.retries == 1)
        // Full again: the wait doubles, and the drive sent is the newest asked for.
        _ = d.receive([0x90, 0x60, 0x03, 0xFF], at: 0.195)
        _ = d.send(.velocity([AxisValue(.yaw, -0.3)]), at: 0.2)
        #expect(d.tick(at: 0.3).bytes.isEmpty || d.tick(at: 0.3).bytes == VISCA.positionInquiry(address: 1))
        #expect(Array(d.tick(at: 0.4).bytes.prefix(9)).hexText == "81 01 06 01 0f 01 02 03 ff")
    }

    @Test func stopThroughAFullBufferClearsTheInterfaceFirst() {
        var cam = ScriptedCamera()
        var (d, t) = connected(profile, &cam)
        // Driving; then a second controller fills both sockets for 2 s.
        cam.feed(d.send(.velocity([AxisValue(.yaw, 0.3)]), at: t), at: t)
        run(&d, &cam, from: t, to: t + 0.2)
        #expect(cam.panRate != 0)
        cam.heldUntil = t + 2.2
        let reports = run(&d, &cam, from: t + 0.2, to: t + 1.2) { d, now in d.send(.velocity([AxisValue(.yaw, -0.5)]), at: now) }
        #expect(reports.filter(\.isFeedback).count >= 18, "polls went on at 20 Hz")
        let tried = cam.messages([0x01, 0x06, 0x01]).filter { $0.time > t + 0.2 }.count
        #expect(tried >= 2 && tried <= 6, "buffer full backs off (0.1, 0.2, 0.4 … s): \(tried) drives in 1 s")
        #expect(reports.filter(\.isRefusal).isEmpty)
        // The Stop: buffer full, so IF_Clear, then the Stop — and no drive after it.
        let stopAt = t + 1.2
        cam.feed(d.send(.stop, at: stopAt), at: stopAt)
        run(&d, &cam, from: stopAt, to: stopAt + 1)
        let after = cam.received.filter { $0.time >= stopAt && $0.message != VISCA.positionInquiry(address: 1) }.map(\.message.hexText)
        #expect(after == [Self.stop, "81 01 00 01 ff", Self.stop])
        #expect(d.stopConfirmed && cam.panRate == 0)
    }

    @Test func refusedDrivesAreReportedAndBackedOffNotAStorm() {
        var cam = ScriptedCamera()
        cam.refuseDrives = 0x41
        var (d, t) = connected(profile, &cam)
        // The controller asks for the same velocity 100 times a second for 3 s.
        let reports = run(&d, &cam, from: t, to: t + 3) { d, now in d.send(.velocity([AxisValue(.yaw, 0.3)]), at: now) }
        let drives = cam.messages([0x01, 0x06, 0x01]).filter { $0.time > t && $0.message[6] != 0x03 }
        #expect(drives.count >= 3 && drives.count <= 6, "\(drives.count) refused drives in 3 s (0.25, 0.5, 1, 2 s apart)")
        let refusals = reports.filter(\.isRefusal)
        #expect(refusals.count == drives.count, "every refusal is reported")
        #expect(refusals.allSatisfy { $0 == .refused(command: MessageType.velocity.rawValue, reason: "command not executable") })
        #expect(d.counters.refused == drives.count)
        // The camera takes drives again: the next one goes at the end of the wait.
        cam.refuseDrives = nil
        run(&d, &cam, from: t + 3, to: t + 5.5) { d, now in d.send(.velocity([AxisValue(.yaw, 0.3)]), at: now) }
        #expect(cam.panRate < 0, "driving left")
    }

    @Test func reconnectClearsStopsThenReadsAndNeverResendsAnOldDrive() {
        var cam = ScriptedCamera()
        var (d, t) = connected(profile, &cam)
        // A drive goes unanswered (the link is dying) and a newer one waits when the link drops.
        cam.silent = true
        cam.feed(d.send(.velocity([AxisValue(.yaw, 0.3)]), at: t), at: t)
        _ = d.send(.velocity([AxisValue(.yaw, 0.5)]), at: t + 0.001)
        cam.silent = false
        let before = cam.received.count
        let again = t + 1
        cam.feed(d.start(at: again), at: again)
        #expect(!d.stopConfirmed)
        let reports = run(&d, &cam, from: again, to: again + 1)
        let sent = cam.received[before...].map(\.message.hexText)
        #expect(Array(sent.prefix(4)) == ["88 30 01 ff", "81 01 00 01 ff", Self.stop, Self.poll])
        #expect(sent.dropFirst(4).filter { $0 != Self.poll }
                == ["81 01 06 07 01 01 07 0f 0f 0f 07 0f 0f 0f ff", "81 01 06 07 01 00 07 0f 0f 0f 07 0f 0f 0f ff"],
                "then the limits and polls only: \(sent)")
        #expect(reports.contains { if case .ready = $0 { true } else { false } })
        #expect(d.stopConfirmed)
    }

    @Test func lateRepliesAreTimedAndDoNotCauseResendStorms() throws {
        var cam = ScriptedCamera()
        cam.latency = 0.45
        var (d, t) = connected(profile, &cam)
        // AddressSet (resent once: its first timeout is shorter), then IF_Clear, Stop and the first poll
        // in one round trip: ready within two round trips and change.
        #expect(t < 1.0, "attaches with replies 450 ms late, after \(t) s")
        let reports = run(&d, &cam, from: t, to: t + 4) { d, now in d.send(.velocity([AxisValue(.yaw, 0.1)]), at: now) }
        let rtt = try #require(d.counters.roundTrip.smoothed)
        #expect(abs(rtt - 0.45) < 0.05, "round trip \(rtt)")
        #expect(d.counters.retries <= 2, "\(d.counters.retries) resends")
        #expect(reports.filter(\.isFeedback).count >= 6, "an inquiry per round trip")
        #expect(reports.filter(\.isRefusal).isEmpty)
    }

    @Test func stopConfirmedFollowsTheCamerasCompletion() {
        var cam = ScriptedCamera()
        var (d, t) = connected(profile, &cam)
        #expect(d.stopConfirmed, "the connect Stop completed")
        cam.feed(d.send(.velocity([AxisValue(.pitch, -0.2)]), at: t), at: t)
        #expect(!d.stopConfirmed)
        run(&d, &cam, from: t, to: t + 0.1)
        #expect(!d.stopConfirmed, "a completed drive is no stop")
        cam.feed(d.send(.stop, at: t + 0.1), at: t + 0.1)
        #expect(!d.stopConfirmed)
        run(&d, &cam, from: t + 0.1, to: t + 0.2)
        #expect(d.stopConfirmed)
        _ = d.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.1)]), at: t + 0.2)
        #expect(!d.stopConfirmed)
    }

    @Test func limitsAreWrittenIntoTheCamera() {
        var (d, _) = readyDriver()
        // Yaw −0.5…1.0 rad: pan right to 28.6° (412 units), left to −57.3° (−825); tilt keeps −30…90°.
        let limits = Message.limits([AxisLimits(axis: .yaw, min: -0.5, max: 1.0, maxSpeed: 1, maxAccel: 1)])
        #expect(d.send(limits, at: 0.08).hexText == "81 01 06 07 00 01 00 01 09 0c 00 05 01 00 ff")
        _ = d.receive(Self.ackAndCompletion, at: 0.085)
        #expect(Array(d.tick(at: 0.09).bytes.prefix(15)).hexText == "81 01 06 07 00 00 0f 0c 0c 07 0f 0e 05 00 ff")
        _ = d.receive(Self.ackAndCompletion, at: 0.095)
        // Back to the whole range: LimitClear.
        let full = Message.limits([AxisLimits(axis: .yaw, min: -3, max: 3, maxSpeed: 1, maxAccel: 1)])
        #expect(d.send(full, at: 0.1).hexText == "81 01 06 07 01 01 07 0f 0f 0f 07 0f 0f 0f ff")
        // A camera that refuses them: reported, nothing else changes.
        #expect(d.receive([0x90, 0x60, 0x02, 0xFF], at: 0.105)
                == [.refused(command: MessageType.limits.rawValue, reason: "Pan-tiltLimitSet: syntax error")])
    }

    @Test func aSonyHeadReadsMovesAndLimitsWithItsSign() throws {
        var d = VISCADriver(profile: h700, transport: .serial)
        // Raw pan +2083 is 10° to the LEFT on a BRC-H700 (its units grow to the left): stand yaw +10°.
        let reports = handshake(&d, position: VISCA.nibbles(2083, count: 5) + VISCA.nibbles(0, count: 4))
        guard case .feedback(let f)? = reports.last else { Issue.record("no feedback: \(reports)"); return }
        #expect(abs(Double(f.axis(.yaw)!.position) - 10 * .pi / 180) < 1e-3)
        // Pan-tiltDrive directions are physical: left is 01 whatever the units do.
        #expect(Array(d.send(.velocity([AxisValue(.yaw, 0.3)]), at: 2).prefix(9)).hexText == "81 01 06 01 0e 01 01 03 ff")
        _ = d.receive(Self.ackAndCompletion, at: 2.01)
        // AbsolutePosition: 11.46° right = −2387 units (5 nibbles), tilt 5.73° = 1194; one speed byte
        // covering 21.5°/s (24.5°/s, byte 0x10), then 00.
        let move = d.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: -0.2), PositionTarget(axis: .pitch, position: 0.1)]), at: 2.02)
        #expect(move == [0x81, 0x01, 0x06, 0x02, 0x10, 0x00] + VISCA.nibbles(-2387, count: 5) + VISCA.nibbles(1194, count: 4) + [0xFF])
        _ = d.receive(Self.ackAndCompletion, at: 2.03)
        // Limits: pan right to 28.6° is −5968 units on this head.
        let out = d.send(.limits([AxisLimits(axis: .yaw, min: -0.5, max: 3, maxSpeed: 1, maxAccel: 1)]), at: 2.04)
        #expect(out == VISCA.limitSet(address: 1, corner: .upRight, pan: -5968, tilt: h700.tilt.units(degrees: 90), panNibbles: 5, tiltNibbles: 4))
    }

    @Test func cameraErrorsBecomeRefusals() {
        var (d, _) = readyDriver()
        _ = d.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.5)]), at: 0.08)
        let r = d.receive([0x90, 0x61, 0x41, 0xFF], at: 0.09)
        #expect(r == [.refused(command: MessageType.position.rawValue, reason: "command not executable")])
        _ = d.send(.led(LedCommand(mode: .on)), at: 0.1)
        #expect(d.tick(at: 0.105).reports == [.refused(command: MessageType.led.rawValue, reason: "not supported by VISCA cameras")])
        #expect(d.counters.refused == 2)
    }

    @Test func positionalMovesFreeTheLinkAfterTheirACK() {
        var (d, _) = readyDriver()
        let move = d.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: -0.2)]), at: 0.08)
        // Yaw −0.2 rad = 11.46° right = +165 units; tilt stays at +16 units; 12.2°/s → 15°/s (byte 14), tilt byte 1.
        #expect(move.hexText == "81 01 06 02 0e 01 00 00 0a 05 00 00 01 00 ff")
        _ = d.receive([0x90, 0x41, 0xFF], at: 0.09)
        #expect(d.tick(at: 0.125).bytes == VISCA.positionInquiry(address: 1))
        let r = d.receive([0x90, 0x50, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0xFF], at: 0.13)
        guard case .feedback(let f) = r.first else { Issue.record("no feedback"); return }
        #expect(f.axis(.yaw)!.status.contains(.movingToTarget))
        _ = d.receive([0x90, 0x51, 0xFF], at: 0.5)  // the move completed in its socket
        #expect(d.tick(at: 0.5).bytes == VISCA.positionInquiry(address: 1))
        guard case .feedback(let g) = d.receive([0x90, 0x50, 0x00, 0x00, 0x0a, 0x05, 0x00, 0x00, 0x01, 0x00, 0xFF], at: 0.51).first else {
            Issue.record("no feedback"); return
        }
        #expect(!g.axis(.yaw)!.status.contains(.movingToTarget))
    }

    @Test func silentCameraIsRetriedThenFatal() {
        var d = VISCADriver(profile: profile, transport: .serial)
        let addressSet = d.start(at: 0)
        #expect(d.tick(at: 0.31).bytes == addressSet)
        #expect(d.tick(at: 0.8).bytes.isEmpty)   // the wait doubles
        #expect(d.tick(at: 0.92).bytes == addressSet)
        #expect(d.tick(at: 2.0).reports.isEmpty)
        let last = d.tick(at: 2.13)
        #expect(last.bytes.isEmpty)
        guard case .fatal = last.reports.first else { Issue.record("expected fatal, got \(last.reports)"); return }
    }

    @Test func aPositionAnswerOfTheWrongLengthIsOneClearFault() {
        var (d, _) = readyDriver()
        #expect(d.tick(at: 0.125).bytes == VISCA.positionInquiry(address: 1))
        let r = d.receive([0x90, 0x50] + VISCA.nibbles(0, count: 5) + VISCA.nibbles(0, count: 4) + [0xFF], at: 0.13)
        guard case .fault(let fault) = r.first else { Issue.record("expected a fault, got \(r)"); return }
        #expect(fault.text.contains("9 position nibbles") && fault.text.contains("expects 8"))
        #expect(d.tick(at: 0.175).bytes == VISCA.positionInquiry(address: 1))
        #expect(d.receive([0x90, 0x50] + [UInt8](repeating: 0, count: 9) + [0xFF], at: 0.18).isEmpty, "said once")
    }

    @Test func otherCamerasRepliesAreIgnored() {
        var (d, _) = readyDriver()
        _ = d.send(.velocity([AxisValue(.yaw, 0.3)]), at: 0.08)
        _ = d.receive([0xA0, 0x41, 0xFF, 0xA0, 0x51, 0xFF], at: 0.09)  // camera 2
        #expect(d.send(.velocity([AxisValue(.yaw, -0.3)]), at: 0.095).isEmpty)  // ours is still in flight
        #expect(d.tick(at: 0.1).bytes.isEmpty)
    }

    @Test func overIPResetsTheSequenceAndMatchesRepliesByIt() {
        var noLimits = profile
        noLimits.limitSet = false
        var d = VISCADriver(profile: noLimits, transport: .ip)
        func reply(_ bytes: [UInt8], _ seq: UInt32) -> [UInt8] { VISCAOverIP.wrap(bytes, type: 0x0111, sequence: seq) }
        #expect(d.start(at: 0).hexText == "02 00 00 01 00 00 00 00 01")
        _ = d.receive([0x02, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01], at: 0.01)
        // One message per datagram: IF_Clear, the Stop, the first poll on three ticks.
        #expect(d.tick(at: 0.02).bytes.hexText == "01 00 00 05 00 00 00 00 81 01 00 01 ff")
        #expect(d.tick(at: 0.021).bytes.hexText == "01 00 00 09 00 00 00 01 " + Self.stop)
        #expect(d.tick(at: 0.022).bytes.hexText == "01 10 00 05 00 00 00 02 81 09 06 12 ff")
        // Replies out of order: the poll's first, then the Stop's, then IF_Clear's.
        #expect(d.receive(reply([0x90, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF], 2), at: 0.03).count == 2)
        _ = d.receive(reply([0x90, 0x41, 0xFF], 1) + reply([0x90, 0x51, 0xFF], 1), at: 0.031)
        #expect(d.stopConfirmed)
        _ = d.receive(reply([0x90, 0x50, 0xFF], 0), at: 0.032)
        // A drive (seq 4) sent after a poll (seq 3): a syntax error naming seq 4 is the drive's,
        // though the poll went first (on a serial line it would be taken for the poll's).
        #expect(d.tick(at: 0.08).bytes.hexText == "01 10 00 05 00 00 00 03 81 09 06 12 ff")
        let drive = d.send(.velocity([AxisValue(.pitch, -0.1)]), at: 0.12)
        #expect(drive.hexText == "01 00 00 09 00 00 00 04 81 01 06 01 01 06 03 02 ff")
        #expect(d.receive(reply([0x90, 0x60, 0x02, 0xFF], 4), at: 0.13)
                == [.refused(command: MessageType.velocity.rawValue, reason: "syntax error")])
        #expect(d.receive(reply([0x90, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF], 3), at: 0.14).count == 1, "the poll's answer")
        // No answer: retransmitted with the same sequence number after the reply timeout.
        let stop = Array(d.send(.stop, at: 0.15).prefix(17))
        #expect(stop.hexText == "01 00 00 09 00 00 00 05 " + Self.stop)
        #expect(d.tick(at: 0.46).bytes.hexText.contains(stop.hexText))
    }

    @Test func theFirstCommandsAfterConnectOnEveryTransport() {
        var noLimits = profile
        noLimits.limitSet = false
        // A stream takes them in one write; a datagram link one per datagram, one a tick.
        var tcp = VISCADriver(profile: noLimits, transport: .tcp)
        #expect(tcp.start(at: 0).hexText == "81 01 00 01 ff " + Self.stop + " " + Self.poll, "no AddressSet on TCP")
        var raw = VISCADriver(profile: noLimits, transport: .raw)
        #expect(raw.start(at: 0).hexText == "81 01 00 01 ff")
        #expect(raw.tick(at: 0.01).bytes.hexText == Self.stop)
        #expect(raw.tick(at: 0.02).bytes.hexText == Self.poll)
    }

    @Test func anIFClearTheCameraRefusesDoesNotStopTheConnect() {
        // Sony: IF_Clear is not available over VISCA-over-IP.
        var noLimits = profile
        noLimits.limitSet = false
        var d = VISCADriver(profile: noLimits, transport: .tcp)
        _ = d.start(at: 0)
        #expect(d.receive([0x90, 0x60, 0x02, 0xFF], at: 0.01).isEmpty, "IF_Clear's syntax error (sent before the poll)")
        _ = d.receive(Self.ackAndCompletion, at: 0.011)
        #expect(d.stopConfirmed)
        #expect(d.receive(Self.position, at: 0.012).count == 2, "ready")
    }

    @Test func aDatagramLinkGetsOneMessagePerWrite() {
        var d = VISCADriver(profile: profile, transport: .raw)
        var writes = [d.start(at: 0)]
        var t = 0.0, answered = 0
        for step in 1...200 {
            t = Double(step) * 0.01
            // The camera answers everything at once; the controller asks for motion, stops, narrows limits.
            let unanswered = writes[answered...].flatMap { $0 }
            answered = writes.count
            for m in unanswered.split(separator: 0xFF).map({ Array($0) + [0xFF] }) {
                let answer: [UInt8] = m == VISCA.ifClear(address: 1) ? [0x90, 0x50, 0xFF]
                    : m == VISCA.positionInquiry(address: 1) ? Self.position : Self.ackAndCompletion
                _ = d.receive(answer, at: t)
            }
            if step % 7 == 0 { writes.append(d.send(.velocity([AxisValue(.yaw, Float(step % 3) * 0.2 - 0.2)]), at: t)) }
            if step % 23 == 0 { writes.append(d.send(.stop, at: t)) }
            if step % 50 == 0 { writes.append(d.send(.limits([AxisLimits(axis: .yaw, min: -1, max: 1, maxSpeed: 1, maxAccel: 1)]), at: t)) }
            writes.append(d.tick(at: t).bytes)
        }
        #expect(writes.allSatisfy { $0.filter { $0 == 0xFF }.count <= 1 }, "\(writes.filter { $0.filter { $0 == 0xFF }.count > 1 }.prefix(3))")
        #expect(writes.filter { $0 == VISCA.positionInquiry(address: 1) }.count >= 35, "polls at 20 Hz")
    }
}

extension VISCAProfile {
    var withoutZoom: VISCAProfile {
        var p = self
        p.zoom = nil
        return p
    }
}
