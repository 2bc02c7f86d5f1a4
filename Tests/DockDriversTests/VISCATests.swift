import DockDrivers
import DockProtocol
import Foundation
import Testing

@Suite struct VISCAEncodingTests {
    @Test func commandsMatchTheBytesVISCAOverIPSends() throws {
        let entries = try Fixtures.entries("visca_commands.json")
        #expect(entries.count >= 9)
        for e in entries {
            let d = e["dockd"] as! [String: Any]
            let int = { (k: String) in (d[k] as! NSNumber).intValue }
            let bytes: [UInt8]
            switch d["kind"] as! String {
            case "if_clear": bytes = VISCA.ifClear(address: 1)
            case "home": bytes = VISCA.home(address: 1)
            case "position_inquiry": bytes = VISCA.positionInquiry(address: 1)
            case "drive":
                bytes = VISCA.drive(address: 1, panSpeed: UInt8(int("pan_speed")), tiltSpeed: UInt8(int("tilt_speed")),
                                    pan: int("pan"), tilt: int("tilt"))
            case "move":
                bytes = VISCA.move(address: 1, relative: d["relative"] as! Bool, panSpeed: UInt8(int("pan_speed")),
                                   tiltSpeed: UInt8(int("tilt_speed")), pan: int("pan_units"), tilt: int("tilt_units"),
                                   panNibbles: 4, tiltNibbles: 4)
            default: Issue.record("unknown kind in \(e["name"]!)"); continue
            }
            let expected = (e["dockd_hex"] as? String) ?? (e["visca_over_ip"] as! String)
            #expect(bytes.hexText == expected, "\(e["name"]!)")
        }
    }

    @Test func fiveNibblePositionsRoundTrip() {
        let n = VISCA.nibbles(-8704, count: 5)
        #expect(n == [0x0F, 0x0D, 0x0E, 0x00, 0x00])
        #expect(VISCA.signedValue(n[...]) == -8704)
        #expect(VISCA.signedValue(VISCA.nibbles(4608, count: 4)[...]) == 4608)
    }

    @Test func streamDecoderSplitsMessagesAndFlagsGarbage() throws {
        var d = VISCAStreamDecoder()
        let out = d.feed([0x90, 0x41, 0xFF, 0x12, 0x90, 0x51] ) + d.feed([0xFF, 0x90, 0x50, 0x00, 0xFF])
        #expect(out.count == 4)
        #expect(try out[0].get() == [0x90, 0x41, 0xFF])
        #expect(out[1] == .failure(.malformed))
        #expect(try out[2].get() == [0x90, 0x51, 0xFF])
        #expect(VISCA.classify(try out[2].get()) == .completion(socket: 1, data: []))
        #expect(VISCA.classify([0x90, 0x61, 0x41, 0xFF]) == .error(socket: 1, code: 0x41))
        #expect(VISCA.classify([0x88, 0x30, 0x02, 0xFF]) == .addressSet(next: 2))
    }

    @Test func overIPHeaderWrapsAndUnwraps() {
        let p = VISCAOverIP.wrap([0x81, 0x09, 0x06, 0x12, 0xFF], type: 0x0110, sequence: 0x01020304)
        #expect(p.hexText == "01 10 00 05 01 02 03 04 81 09 06 12 ff")
        let (packets, garbage) = VISCAOverIP.unwrap(p + VISCAOverIP.resetSequence())
        #expect(garbage == 0)
        #expect(packets.map(\.type) == [0x0110, 0x0200])
        #expect(packets[1].payload == [0x01])
    }
}

@Suite struct VISCAProfileTests {
    @Test func shippedProfilesLoadAndValidate() throws {
        let generic = try VISCAProfile.load("generic-ptzoptics", searchPaths: [Fixtures.profiles])
        #expect(generic.pan.nibbles == 4 && generic.pan.speeds.count == 24 && generic.tilt.speeds.count == 20)
        let sony = try VISCAProfile.load(Fixtures.profiles + "/sony-brc-x400.json")
        #expect(sony.pan.nibbles == 5 && sony.tilt.nibbles == 4)
        #expect(sony.pan.unitsPerDegree == 51.2)
    }

    @Test func invalidProfilesAreRejected() throws {
        let bad = #"{"name":"x","vendor":"v","model":"m","pan":{"nibbles":3,"unitsPerDegree":1,"minDegrees":-1,"maxDegrees":1,"speeds":[1],"maxAccelDegrees":1},"tilt":{"nibbles":4,"unitsPerDegree":1,"minDegrees":-1,"maxDegrees":1,"speeds":[1],"maxAccelDegrees":1}}"#
        #expect(throws: VISCAProfileError.invalid("pan.nibbles must be 4 or 5")) { try VISCAProfile.decode(Data(bad.utf8)) }
        #expect(throws: VISCAProfileError.self) { try VISCAProfile.load("no-such-camera", searchPaths: [Fixtures.profiles]) }
    }

    @Test func speedsMapToTheNearestByteOfTheNonlinearTable() throws {
        let p = try VISCAProfile.load("generic-ptzoptics", searchPaths: [Fixtures.profiles]).pan
        #expect(p.nearestSpeedByte(17.2) == 13)   // 17.0 deg/s
        #expect(p.nearestSpeedByte(-17.2) == 13)
        #expect(p.nearestSpeedByte(0.4) == 0)     // nearer stop than 1.0 deg/s
        #expect(p.nearestSpeedByte(0.6) == 1)
        #expect(p.nearestSpeedByte(63) == 23)     // between 60 and 67
        #expect(p.nearestSpeedByte(1000) == 24)
        #expect(p.speedByteCovering(9.5) == 10)   // 10.7 deg/s is the slowest that covers 9.5
    }
}

@Suite struct VISCADriverTests {
    let profile: VISCAProfile

    init() throws { profile = try VISCAProfile.load("generic-ptzoptics", searchPaths: [Fixtures.profiles]) }

    /// Through AddressSet, IF_Clear and the first poll (pan −10 units = 10/14.4° left, tilt +16).
    func readyDriver(_ transport: VISCADriver.Transport = .serial) -> (VISCADriver, [DriverReport]) {
        var d = VISCADriver(profile: profile, address: 1, transport: transport, pollHz: 20)
        #expect(d.start(at: 0) == [0x88, 0x30, 0x01, 0xFF])
        #expect(d.receive([0x88, 0x30, 0x02, 0xFF], at: 0.01).isEmpty)
        #expect(d.tick(at: 0.02).bytes == [0x81, 0x01, 0x00, 0x01, 0xFF])
        _ = d.receive([0x90, 0x50, 0xFF], at: 0.03)
        #expect(d.tick(at: 0.04).bytes == [0x81, 0x09, 0x06, 0x12, 0xFF])
        let reports = d.receive([0x90, 0x50, 0x0F, 0x0F, 0x0F, 0x06, 0x00, 0x00, 0x01, 0x00, 0xFF], at: 0.05)
        return (d, reports)
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
        #expect(abs(Double(yaw.maxSpeed) - 67 * .pi / 180) < 1e-5)
        // Pan −10 units is to the LEFT, i.e. positive stand yaw.
        #expect(abs(Double(f.axis(.yaw)!.position) - 10 / 14.4 * .pi / 180) < 1e-6)
        #expect(abs(Double(f.axis(.pitch)!.position) - 16 / 14.4 * .pi / 180) < 1e-6)
        #expect(d.counters.decoder.frames == 3)
    }

    @Test func oneMessageInFlightAndIdenticalVelocitiesAreNotResent() {
        var (d, _) = readyDriver()
        let left = Message.velocity([AxisValue(.yaw, 0.3), AxisValue(.pitch, 0.1)])
        #expect(d.send(left, at: 0.06).hexText == "81 01 06 01 0d 07 01 01 ff")
        // Link busy: the next command waits; the same command again is dropped.
        #expect(d.send(.velocity([AxisValue(.yaw, -0.3)]), at: 0.061).isEmpty)
        #expect(d.tick(at: 0.07).bytes.isEmpty)
        _ = d.receive([0x90, 0x41, 0xFF], at: 0.071)
        #expect(d.tick(at: 0.075).bytes.isEmpty)  // ACKed but not completed
        _ = d.receive([0x90, 0x51, 0xFF], at: 0.08)
        // Poll is due (0.05 + 0.05) and the last message was a command: poll first, then the drive.
        #expect(d.tick(at: 0.1).bytes == VISCA.positionInquiry(address: 1))
        _ = d.receive([0x90, 0x50, 0x0F, 0x0F, 0x0F, 0x06, 0x00, 0x00, 0x01, 0x00, 0xFF], at: 0.11)
        #expect(d.tick(at: 0.12).bytes.hexText == "81 01 06 01 0d 01 02 03 ff")
        _ = d.receive([0x90, 0x42, 0xFF, 0x90, 0x52, 0xFF], at: 0.125)
        #expect(d.send(.velocity([AxisValue(.yaw, -0.3)]), at: 0.126).isEmpty)  // unchanged: not resent
        #expect(d.send(.stop, at: 0.126).hexText == "81 01 06 01 01 01 03 03 ff")
    }

    @Test func bufferFullBacksOffThenResendsTheSameCommand() {
        var (d, _) = readyDriver()
        let bytes = d.send(.velocity([AxisValue(.yaw, 0.3)]), at: 0.06)
        #expect(d.receive([0x90, 0x60, 0x03, 0xFF], at: 0.065).isEmpty)
        #expect(d.tick(at: 0.1).bytes.isEmpty)       // backing off
        #expect(d.tick(at: 0.17).bytes == bytes)     // same command again after 100 ms
        #expect(d.counters.retries == 1)
    }

    @Test func cameraErrorsBecomeRefusals() {
        var (d, _) = readyDriver()
        _ = d.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.5)]), at: 0.06)
        let r = d.receive([0x90, 0x61, 0x41, 0xFF], at: 0.07)
        #expect(r == [.refused(command: MessageType.position.rawValue, reason: "command not executable")])
        _ = d.send(.led(LedCommand(mode: .on)), at: 0.08)
        #expect(d.tick(at: 0.09).reports == [.refused(command: MessageType.led.rawValue, reason: "not supported by VISCA cameras")])
        #expect(d.counters.refused == 2)
    }

    @Test func positionalMovesFreeTheLinkAfterTheirACK() {
        var (d, _) = readyDriver()
        let move = d.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: -0.2)]), at: 0.06)
        // Yaw −0.2 rad = 11.46° right = +165 units; tilt stays at +16 units; speed covers 12.1°/s → 12.6 (byte 11).
        #expect(move.hexText == "81 01 06 02 0b 01 00 00 0a 05 00 00 01 00 ff")
        _ = d.receive([0x90, 0x41, 0xFF], at: 0.07)
        #expect(d.tick(at: 0.1).bytes == VISCA.positionInquiry(address: 1))
        let r = d.receive([0x90, 0x50, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0xFF], at: 0.11)
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
        #expect(d.tick(at: 0.62).bytes == addressSet)
        let last = d.tick(at: 0.93)
        #expect(last.bytes.isEmpty)
        guard case .fatal = last.reports.first else { Issue.record("expected fatal, got \(last.reports)"); return }
    }

    @Test func otherCamerasRepliesAreIgnored() {
        var (d, _) = readyDriver()
        _ = d.send(.velocity([AxisValue(.yaw, 0.3)]), at: 0.06)
        _ = d.receive([0xA0, 0x41, 0xFF, 0xA0, 0x51, 0xFF], at: 0.07)  // camera 2
        #expect(d.tick(at: 0.08).bytes.isEmpty)
    }

    @Test func overIPResetsTheSequenceAndNumbersEachMessage() {
        var d = VISCADriver(profile: profile, transport: .ip)
        #expect(d.start(at: 0).hexText == "02 00 00 01 00 00 00 00 01")
        _ = d.receive([0x02, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01], at: 0.01)
        #expect(d.tick(at: 0.02).bytes.hexText == "01 00 00 05 00 00 00 00 81 01 00 01 ff")
        _ = d.receive(VISCAOverIP.wrap([0x90, 0x50, 0xFF], type: 0x0111, sequence: 0), at: 0.03)
        #expect(d.tick(at: 0.04).bytes.hexText == "01 10 00 05 00 00 00 01 81 09 06 12 ff")
        let r = d.receive(VISCAOverIP.wrap([0x90, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF], type: 0x0111, sequence: 1), at: 0.05)
        #expect(r.count == 2)
        // No answer: retransmitted with the same sequence number.
        let drive = d.send(.velocity([AxisValue(.pitch, -0.1)]), at: 0.06)
        #expect(drive.hexText == "01 00 00 09 00 00 00 02 81 01 06 01 01 07 03 02 ff")
        #expect(d.tick(at: 0.37).bytes == drive)  // the profile's 0.3 s reply timeout
    }
}

@Suite struct DriverFactoryTests {
    @Test func makesDriversFromConfigOptions() throws {
        let v = try DriverFactory.make(name: "visca", options: ["profile": Fixtures.profiles + "/sony-brc-x400.json",
                                                                "address": "2", "transport": "ip", "poll_hz": "25", "name": "stage-left"])
        let visca = try #require(v as? VISCADriver)
        #expect(visca.address == 2 && visca.transport == .ip && visca.serialName == "stage-left" && visca.profile.pan.nibbles == 5)
        let m = try DriverFactory.make(name: "mavlink", options: ["system_id": "5", "target_component": "154"])
        #expect((m as? MAVLinkGimbalDriver)?.settings.systemID == 5)
        let tcp = try DriverFactory.make(name: "visca", options: ["transport": "raw-tcp", "profile": Fixtures.profiles + "/generic-ptzoptics.json"])
        var t = try #require(tcp as? VISCADriver)
        #expect(t.start(at: 0) == VISCA.ifClear(address: 1))  // no AddressSet on a TCP stream
        #expect(DriverFactory.defaultBaud(for: "visca") == 9600)
    }

    @Test func rejectsUnknownDriversAndOptions() {
        #expect(throws: DriverFactory.Failure.self) { try DriverFactory.make(name: "bgc", options: [:]) }
        #expect(throws: DriverFactory.Failure.self) { try DriverFactory.make(name: "mavlink", options: ["baud": "9600"]) }
        #expect(throws: DriverFactory.Failure.self) { try DriverFactory.make(name: "visca", options: ["address": "9"]) }
    }
}
