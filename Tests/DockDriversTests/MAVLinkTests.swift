import DockDrivers
import DockProtocol
import Foundation
import Testing

@Suite struct MAVLinkCodecTests {
    @Test func crcIsMCRF4XX() {
        #expect(MAVLink.crc(Array("123456789".utf8)) == 0x6F91)
    }

    @Test func crcExtrasAndIdsMatchPymavlink() throws {
        for e in try Fixtures.entries("mavlink_frames.json") {
            let id = try #require(MAVLink.ID(rawValue: UInt32((e["msgid"] as! NSNumber).intValue)))
            #expect(Int(id.crcExtra) == (e["crc_extra"] as! NSNumber).intValue, "\(e["name"]!)")
        }
    }

    @Test func encodedFramesMatchPymavlinkBytes() throws {
        for e in try Fixtures.entries("mavlink_frames.json") {
            let f = e["fields"] as! [String: Any]
            let payload: [UInt8]
            let id = MAVLink.ID(rawValue: UInt32((e["msgid"] as! NSNumber).intValue))!
            switch id {
            case .heartbeat:
                payload = MAVHeartbeat(type: 18, autopilot: 8).payload
            case .gimbalDeviceSetAttitude:
                let av = (f["angular_velocity"] as! [Any]).map(Fixtures.float)
                payload = MAVGimbalDeviceSetAttitude(q: (f["q"] as! [Any]).map(Fixtures.float), angularVelocity: (av[0], av[1], av[2]),
                                                     flags: GimbalDeviceFlags(rawValue: UInt16((f["flags"] as! NSNumber).intValue)),
                                                     targetSystem: 1, targetComponent: 154).payload
            case .commandLong:
                payload = MAVCommandLong(command: UInt16((f["command"] as! NSNumber).intValue), params: (f["params"] as! [Any]).map(Fixtures.float),
                                         targetSystem: 0, targetComponent: 154).payload
            default:
                continue  // gimbal → host messages: decoded below
            }
            let bytes = MAVLink.encode(id, payload: payload, sequence: UInt8((e["seq"] as! NSNumber).intValue),
                                       systemID: UInt8((e["sys"] as! NSNumber).intValue), componentID: UInt8((e["comp"] as! NSNumber).intValue))
            #expect(bytes.hexText == e["hex"] as! String, "\(e["name"]!)")
        }
    }

    func frame(_ name: String) throws -> (bytes: [UInt8], fields: [String: Any]) {
        let e = try #require(try Fixtures.entries("mavlink_frames.json").first { $0["name"] as! String == name })
        return (Fixtures.hex(e["hex"] as! String), e["fields"] as! [String: Any])
    }

    @Test func decodesGimbalDeviceInformationFromPymavlink() throws {
        let (bytes, _) = try frame("gimbal_device_information")
        var d = MAVLinkDecoder()
        let out = d.feed(bytes)
        let f = try #require(try out.first?.get())
        #expect(f.messageID == 283 && f.componentID == 154 && f.sequence == 3)
        let info = MAVGimbalDeviceInformation(payload: f.payload)
        #expect(info.uid == 0x1122334455667788 && info.modelName == "PeerGimbal" && info.vendorName == "PeerVendor")
        #expect(info.customName == "custom" && info.hardwareVersion == 7)
        #expect(MAVGimbalDeviceInformation.versionText(info.firmwareVersion) == "1.2.3")
        #expect(info.pitchMin == -1.5 && info.pitchMax == 0.5 && info.yawMin == -2.5 && info.yawMax == 2.0 && info.rollMin.isNaN)
        #expect(info.capFlags == 288)
    }

    @Test func decoderResynchronizesAfterNoiseAndCorruption() throws {
        let (bytes, _) = try frame("gimbal_device_attitude_status")
        var corrupted = bytes
        corrupted[12] ^= 0xFF
        var d = MAVLinkDecoder()
        let out = d.feed([0x00, 0x55] + corrupted + bytes.prefix(7)) + d.feed(Array(bytes.dropFirst(7)))
        #expect(out.compactMap { try? $0.get() }.count == 1)
        #expect(out.contains(.failure(.crc)))
    }

    /// Found while writing Fuzz/MAVLinkFuzz.swift: the decoder dropped noise one byte at a time
    /// from the front of its buffer, so one read of n bytes of noise cost n²/2 byte moves (a
    /// megabyte took 27 s in a debug build). Now it is one pass, and the frame after the noise
    /// still decodes.
    @Test func aMegabyteOfNoiseInOneReadIsOneErrorAndTheNextFrameDecodes() throws {
        let (bytes, _) = try frame("gimbal_device_attitude_status")
        var d = MAVLinkDecoder()
        let out = d.feed([UInt8](repeating: 0x55, count: 1 << 20) + bytes)
        #expect(out.count == 2)
        #expect(out.first == .failure(.malformed))
        #expect(try out.last?.get().messageID == 285)
    }
}

@Suite struct MAVLinkGimbalDriverTests {
    func gimbalHeartbeat(seq: UInt8 = 0) -> [UInt8] {
        MAVLink.encode(.heartbeat, payload: MAVHeartbeat(type: MAVHeartbeat.typeGimbal, autopilot: 8).payload,
                       sequence: seq, systemID: 1, componentID: 154)
    }

    func fixture(_ name: String) throws -> [UInt8] {
        let e = try #require(try Fixtures.entries("mavlink_frames.json").first { $0["name"] as! String == name })
        return Fixtures.hex(e["hex"] as! String)
    }

    @Test func handshakeRequestsInformationAndReportsReadyWithItsLimits() throws {
        var d = MAVLinkGimbalDriver()
        var decoder = MAVLinkDecoder()
        let first = decoder.feed(d.start(at: 0)).compactMap { try? $0.get() }
        // Our HEARTBEAT, zero rates (to every system: the gimbal's is not known yet), the requests.
        #expect(first.map(\.messageID) == [0, 284, 76, 76])
        let stop = MAVGimbalDeviceSetAttitude(payload: first[1].payload)
        #expect(stop.angularVelocity.y == 0 && stop.angularVelocity.z == 0 && stop.q.allSatisfy(\.isNaN) && stop.targetSystem == 0)
        #expect(first.allSatisfy { $0.systemID == 1 && $0.componentID == 191 })
        #expect(d.receive(gimbalHeartbeat(), at: 0.1).isEmpty)
        let r = d.receive(try fixture("gimbal_device_information"), at: 0.2)
        guard case .ready(let id, let caps) = r.first else { Issue.record("expected ready, got \(r)"); return }
        #expect(id.model == "PeerGimbal" && id.firmware == "1.2.3" && id.serial == "mavlink-1122334455667788")
        // FRD yaw −2.5…2.0 (right positive) is stand yaw −2.0…2.5 (left positive).
        #expect(caps.axis(.yaw)?.min == -2.0 && caps.axis(.yaw)?.max == 2.5)
        #expect(caps.axis(.pitch)?.min == -1.5 && caps.axis(.pitch)?.max == 0.5)
        #expect(caps.imuHz == 0 && caps.batteries.isEmpty && caps.feedbackHz == 50)
    }

    @Test func attitudeStatusBecomesFeedbackInStandAxes() throws {
        var d = MAVLinkGimbalDriver()
        _ = d.start(at: 0)
        _ = d.receive(try fixture("gimbal_device_information"), at: 0.1)
        let r = d.receive(try fixture("gimbal_device_attitude_status"), at: 0.2)
        guard case .feedback(let f) = r.first else { Issue.record("expected feedback, got \(r)"); return }
        // Camera 30° to the right and 10° up: stand yaw −30°, pitch +10°; z rate −0.2 = 0.2 rad/s to the left.
        #expect(abs(Double(f.axis(.yaw)!.position) + 30 * .pi / 180) < 1e-5)
        #expect(abs(Double(f.axis(.pitch)!.position) - 10 * .pi / 180) < 1e-5)
        #expect(abs(f.axis(.yaw)!.velocity - 0.2) < 1e-6 && abs(f.axis(.pitch)!.velocity - 0.1) < 1e-6)
        #expect(f.axis(.pitch)!.status == .atMax)  // AT_PITCH_LIMIT, nearer the upper limit
    }

    @Test func velocityBecomesSetAttitudeRatesInFRD() throws {
        var d = MAVLinkGimbalDriver()
        _ = d.start(at: 0)
        _ = d.receive(gimbalHeartbeat() + (try fixture("gimbal_device_information")), at: 0.1)
        var decoder = MAVLinkDecoder()
        let bytes = d.send(.velocity([AxisValue(.yaw, 0.3), AxisValue(.pitch, 0.2)]), at: 0.2)
        let f = try #require(try decoder.feed(bytes).first?.get())
        #expect(f.messageID == 284)
        let m = MAVGimbalDeviceSetAttitude(payload: f.payload)
        #expect(m.q.allSatisfy { $0.isNaN })
        #expect(m.angularVelocity.z == -0.3 && m.angularVelocity.y == 0.2 && m.angularVelocity.x == 0)
        #expect(m.flags == [.rollLock, .pitchLock, .yawInVehicleFrame] && m.targetSystem == 1 && m.targetComponent == 154)
        // A position is an attitude quaternion with the rates ignored.
        let p = try #require(try decoder.feed(d.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.5)]), at: 0.3)).first?.get())
        let q = MAVGimbalDeviceSetAttitude(payload: p.payload)
        let (yaw, pitch) = MAVLinkGimbalDriver.yawPitch(q.q)
        #expect(abs(yaw + 0.5) < 1e-6 && abs(pitch) < 1e-6 && q.angularVelocity.x.isNaN)
    }

    @Test func gimbalWithoutInformationIsUsedWithDefaultsAfterAWait() {
        var d = MAVLinkGimbalDriver()
        _ = d.start(at: 0)
        _ = d.receive(gimbalHeartbeat(), at: 0.1)
        #expect(!d.tick(at: 0.2).bytes.isEmpty)  // the request again, now to the gimbal's system
        _ = d.receive(gimbalHeartbeat(seq: 1), at: 1.1)  // later heartbeats do not restart the wait
        _ = d.receive(gimbalHeartbeat(seq: 2), at: 2.1)
        #expect(d.tick(at: 2).reports.isEmpty)
        guard case .ready(_, let caps) = d.tick(at: 3.2).reports.first else { Issue.record("expected ready"); return }
        #expect(caps.axes.count == 2)
    }

    @Test func noGimbalIsFatal() {
        var d = MAVLinkGimbalDriver()
        _ = d.start(at: 0)
        guard case .fatal = d.tick(at: 10.5).reports.first else { Issue.record("expected fatal"); return }
    }

    @Test func yawIsUnwrappedAcrossHalfATurn() {
        var d = MAVLinkGimbalDriver()
        _ = d.start(at: 0)
        _ = d.receive(gimbalHeartbeat(), at: 0.1)
        _ = d.tick(at: 3.5)
        var yaws: [Float] = []
        for (i, deg) in [170.0, 179.0, -179.0, -170.0].enumerated() {
            var s = [UInt8](repeating: 0, count: 4)
            let q = MAVLinkGimbalDriver.quaternion(yaw: deg * .pi / 180, pitch: 0)
            for v in q { s += withUnsafeBytes(of: v.bitPattern.littleEndian, Array.init) }
            s += [UInt8](repeating: 0, count: 12 + 4 + 4)
            let bytes = MAVLink.encode(.gimbalDeviceAttitudeStatus, payload: s, sequence: UInt8(i), systemID: 1, componentID: 154)
            if case .feedback(let f) = d.receive(bytes, at: 4 + Double(i) * 0.02).first { yaws.append(f.axis(.yaw)!.position) }
        }
        // FRD 170° right … −170° (i.e. 190° right): stand yaw −170° … −190°, no jump.
        #expect(yaws.count == 4)
        #expect(abs(Double(yaws[3]) + 190 * .pi / 180) < 1e-4)
    }

    // MARK: Safety: stops, reconnects, refusals, silence

    /// GIMBAL_DEVICE_ATTITUDE_STATUS at FRD `yaw`/`pitch` with angular velocity `rates` (y, z; NaN = not reported).
    func status(yaw: Double = 0, pitch: Double = 0, rates: (y: Float, z: Float) = (0, 0), seq: UInt8 = 0) -> [UInt8] {
        var p: [UInt8] = []
        func f32(_ v: Float) { p += withUnsafeBytes(of: v.bitPattern.littleEndian, Array.init) }
        p += [0, 0, 0, 0]
        for v in MAVLinkGimbalDriver.quaternion(yaw: yaw, pitch: pitch) { f32(v) }
        f32(0); f32(rates.y); f32(rates.z)
        p += [0, 0, 0, 0, 0, 0, 1, 191]
        return MAVLink.encode(.gimbalDeviceAttitudeStatus, payload: p, sequence: seq, systemID: 1, componentID: 154)
    }

    func readyDriver() throws -> MAVLinkGimbalDriver {
        var d = MAVLinkGimbalDriver()
        _ = d.start(at: 0)
        let r = d.receive(gimbalHeartbeat() + (try fixture("gimbal_device_information")), at: 0.1)
        #expect(r.contains { if case .ready = $0 { true } else { false } })
        _ = d.tick(at: 0.6)  // the connect stop's copies are done
        return d
    }

    func setAttitudes(_ bytes: [UInt8]) -> [MAVGimbalDeviceSetAttitude] {
        var decoder = MAVLinkDecoder()
        return decoder.feed(bytes).compactMap { try? $0.get() }.filter { $0.messageID == 284 }.map { MAVGimbalDeviceSetAttitude(payload: $0.payload) }
    }

    @Test func theConnectStopGoesAgainToTheGimbalsOwnSystemOnceKnown() throws {
        var d = MAVLinkGimbalDriver()
        #expect(setAttitudes(d.start(at: 0)).map(\.targetSystem) == [0])
        _ = d.receive(gimbalHeartbeat(), at: 0.01)
        let copies = (1...20).flatMap { setAttitudes(d.tick(at: Double($0) * 0.02).bytes) }
        #expect(copies.contains { $0.targetSystem == 1 && $0.angularVelocity.z == 0 && $0.angularVelocity.y == 0 })
        #expect(copies.count <= 9, "at most 10 copies in all")
    }

    @Test func aStopIsRepeatedAndConfirmedByAStatusAtRest() throws {
        var d = try readyDriver()
        _ = d.send(.velocity([AxisValue(.yaw, 0.5)]), at: 1)
        #expect(!d.stopConfirmed)
        var sent = setAttitudes(d.send(.stop, at: 1.1))
        #expect(sent.count == 1 && sent[0].angularVelocity.z == 0 && !d.stopConfirmed)
        // Still turning in the next status: not confirmed; at rest: confirmed.
        _ = d.receive(status(rates: (0, -0.3)), at: 1.11)
        #expect(!d.stopConfirmed)
        for t in stride(from: 1.12, through: 1.3, by: 0.01) { sent += setAttitudes(d.tick(at: t).bytes) }
        #expect(sent.count >= 4, "repeated every 50 ms while unconfirmed: \(sent.count)")
        _ = d.receive(status(rates: (0, 0.001), seq: 1), at: 1.31)
        #expect(d.stopConfirmed)
        var after: [MAVGimbalDeviceSetAttitude] = []
        for t in stride(from: 1.32, through: 2, by: 0.01) { after += setAttitudes(d.tick(at: t).bytes) }
        #expect(after.isEmpty, "3 copies at least, none more once confirmed: \(after.count)")
        // Motion asked for again: no longer confirmed.
        _ = d.send(.velocity([AxisValue(.pitch, 0.1)]), at: 2)
        #expect(!d.stopConfirmed)
        // Zero rates are a stop too.
        #expect(setAttitudes(d.send(.velocity([AxisValue(.yaw, 0), AxisValue(.pitch, 0)]), at: 2.1)).count == 1)
        #expect(d.send(.velocity([AxisValue(.yaw, 0)]), at: 2.11).isEmpty, "asked already")
    }

    @Test func aSilentGimbalConfirmsNothingAndGetsTenCopies() throws {
        var d = try readyDriver()
        var sent = setAttitudes(d.send(.stop, at: 1))
        for t in stride(from: 1.01, through: 3, by: 0.01) { sent += setAttitudes(d.tick(at: t).bytes) }
        #expect(sent.count == 10 && !d.stopConfirmed)
    }

    @Test func aGimbalReportingNoRatesIsConfirmedByAnAttitudeThatStays() throws {
        var d = try readyDriver()
        _ = d.send(.stop, at: 1)
        _ = d.receive(status(yaw: 0.2, rates: (.nan, .nan)), at: 1.02)
        #expect(!d.stopConfirmed)
        _ = d.receive(status(yaw: 0.25, rates: (.nan, .nan), seq: 1), at: 1.04)
        #expect(!d.stopConfirmed, "still moving")
        _ = d.receive(status(yaw: 0.25, rates: (.nan, .nan), seq: 2), at: 1.06)
        #expect(d.stopConfirmed)
    }

    @Test func aReconnectForgetsTheGimbalAndReportsReadyAgain() throws {
        var d = try readyDriver()
        _ = d.send(.velocity([AxisValue(.yaw, 0.5)]), at: 1)
        // The link drops and comes back (the gimbal may have restarted): a new handshake.
        #expect(setAttitudes(d.start(at: 2)).first?.angularVelocity.z == 0, "zero rates first")
        #expect(d.send(.velocity([AxisValue(.yaw, 0.5)]), at: 2.01).isEmpty, "nothing before it is ready again")
        let r = d.receive(gimbalHeartbeat(seq: 5) + (try fixture("gimbal_device_information")), at: 2.1)
        #expect(r.contains { if case .ready = $0 { true } else { false } }, "\(r)")
    }

    @Test func aRefusedCommandIsReportedWithItsResultAndTheDefaultsAreUsedAtOnce() {
        var d = MAVLinkGimbalDriver()
        _ = d.start(at: 0)
        _ = d.receive(gimbalHeartbeat(), at: 0.1)
        let ack = MAVLink.encode(.commandAck, payload: [0x00, 0x02, 3], sequence: 1, systemID: 1, componentID: 154)  // 512, unsupported
        let r = d.receive(ack, at: 0.15)
        #expect(r == [.refused(command: MessageType.request.rawValue,
                               reason: "the gimbal refused MAV_CMD_REQUEST_MESSAGE(GIMBAL_DEVICE_INFORMATION): unsupported")])
        #expect(d.receive(ack, at: 0.16).isEmpty, "said once")
        guard case .ready? = d.tick(at: 0.2).reports.first else { Issue.record("expected ready at once"); return }
        #expect(d.counters.refused == 1)
        // An accepted command is not news.
        #expect(d.receive(MAVLink.encode(.commandAck, payload: [0xFF, 0x01, 0], sequence: 2, systemID: 1, componentID: 154), at: 0.3).isEmpty)
    }
}
