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
        #expect(generic.pan.sign == 1 && generic.absoluteSpeed == .panTilt && generic.limitSet == true)
        let x400 = try VISCAProfile.load(Fixtures.profiles + "/sony-brc-x400.json")
        #expect(x400.pan.nibbles == 4 && x400.tilt.nibbles == 4 && x400.pan.speeds.count == 24 && x400.tilt.speeds.count == 23)
        #expect(x400.absoluteSpeed == .single)
        let h700 = try VISCAProfile.load("sony-brc-h700", searchPaths: [Fixtures.profiles])
        #expect(h700.pan.nibbles == 5 && h700.pan.sign == -1 && h700.tilt.sign == 1)
        // Sony's BRC-H700 list: left end 0x08A58, right end 0xF75A8, up end 0x493D, down end 0xE796 (±1 unit).
        for (degrees, units) in [(-170.0, 0x8A58), (170.0, 0xF75A8 - 0x100000)] { #expect(abs(h700.pan.units(degrees: degrees) - units) <= 1) }
        for (degrees, units) in [(90.0, 0x493D), (-30.0, 0xE796 - 0x10000)] { #expect(abs(h700.tilt.units(degrees: degrees) - units) <= 1) }
    }

    @Test func everyShippedFigureSaysWhetherItIsCitedEstimatedOrMeasured() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.profiles).filter { $0.hasSuffix(".json") }
        #expect(names.count >= 3)
        for name in names {
            let profile = try VISCAProfile.load(Fixtures.profiles + "/" + name)
            let provenance = try #require(profile.provenance, "\(name) has no provenance")
            #expect(Set(provenance.keys) == Set(profile.figuresToAccountFor), "\(name)")
            #expect(profile.zoom != nil, "\(name) has no zoom")
        }
    }

    @Test func aProfileWithoutSignOrNewFieldsStillLoads() throws {
        let old = #"{"name":"x","vendor":"v","model":"m","pan":{"nibbles":4,"unitsPerDegree":1,"minDegrees":-1,"maxDegrees":1,"speeds":[1],"maxAccelDegrees":1},"tilt":{"nibbles":4,"unitsPerDegree":1,"minDegrees":-1,"maxDegrees":1,"speeds":[1],"maxAccelDegrees":1}}"#
        let p = try VISCAProfile.decode(Data(old.utf8))
        #expect(p.pan.sign == 1 && p.absoluteSpeed == nil && p.limitSet == nil)
        let reversed = old.replacingOccurrences(of: #""nibbles":4,"unitsPerDegree":1,"minDegrees":-1"#, with: #""nibbles":4,"sign":-1,"unitsPerDegree":1,"minDegrees":-1"#)
        #expect(try VISCAProfile.decode(Data(reversed.utf8)).pan.sign == -1)
        let badSign = old.replacingOccurrences(of: #""nibbles":4,"unitsPerDegree":1,"minDegrees":-1"#, with: #""nibbles":4,"sign":2,"unitsPerDegree":1,"minDegrees":-1"#)
        #expect(throws: VISCAProfileError.invalid("pan.sign must be 1 or -1")) { try VISCAProfile.decode(Data(badSign.utf8)) }
        let badOrigin = old.replacingOccurrences(of: #""model":"m""#, with: #""model":"m","provenance":{"pan.speeds":"from memory"}"#)
        #expect(throws: VISCAProfileError.invalid("provenance of pan.speeds must start with cited:, estimate: or measured:")) {
            try VISCAProfile.decode(Data(badOrigin.utf8))
        }
        // What --calibrate writes loads back the same.
        #expect(try VISCAProfile.decode(try p.encoded()) == p)
    }

    @Test func invalidProfilesAreRejected() throws {
        let bad = #"{"name":"x","vendor":"v","model":"m","pan":{"nibbles":3,"unitsPerDegree":1,"minDegrees":-1,"maxDegrees":1,"speeds":[1],"maxAccelDegrees":1},"tilt":{"nibbles":4,"unitsPerDegree":1,"minDegrees":-1,"maxDegrees":1,"speeds":[1],"maxAccelDegrees":1}}"#
        #expect(throws: VISCAProfileError.invalid("pan.nibbles must be 4 or 5")) { try VISCAProfile.decode(Data(bad.utf8)) }
        #expect(throws: VISCAProfileError.self) { try VISCAProfile.load("no-such-camera", searchPaths: [Fixtures.profiles]) }
    }

    @Test func speedsMapToTheNearestByteOfTheNonlinearTable() throws {
        let p = try VISCAProfile.load("generic-ptzoptics", searchPaths: [Fixtures.profiles]).pan
        #expect(p.nearestSpeedByte(17.2) == 15)   // 19 deg/s (15 is further)
        #expect(p.nearestSpeedByte(-17.2) == 15)
        #expect(p.nearestSpeedByte(0.4) == 0)     // nearer stop than 1.0 deg/s
        #expect(p.nearestSpeedByte(0.6) == 1)
        #expect(p.nearestSpeedByte(100) == 23)    // 105
        #expect(p.nearestSpeedByte(1000) == 24)
        #expect(p.speedByteCovering(9.5) == 14)   // 15 deg/s is the slowest that covers 9.5
    }
}
