import DockDrivers
import DockProtocol
import Testing

/// The VISCA driver's zoom (a profile with `zoom`): CAM_Zoom Tele/Wide, Direct, Stop and
/// CAM_ZoomPosInq, byte for byte, in virtual time.
@Suite struct VISCAZoomTests {
    let profile: VISCAProfile

    init() throws {
        profile = try VISCAProfile.load("generic-ptzoptics", searchPaths: [Fixtures.profiles])
    }

    static let ack: [UInt8] = [0x90, 0x41, 0xFF]
    static let completion: [UInt8] = [0x90, 0x51, 0xFF]
    static let panTiltAnswer: [UInt8] = [0x90, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF]
    static let zoomInquiry = "81 09 04 47 ff"

    /// A driver through connect, answered message by message, up to its first zoom answer
    /// (`zoom`: the position the camera gives), with nothing in flight after.
    func running(zoom: [UInt8] = [0, 0, 0, 0]) -> (VISCADriver, [DriverReport], Double) {
        var d = VISCADriver(profile: profile, address: 1, transport: .serial, pollHz: 20)
        var reports: [DriverReport] = []
        var pending = d.start(at: 0), t = 0.0
        var zoomAnswered = false
        func ready() -> Bool { reports.contains { if case .ready = $0 { true } else { false } } }
        while t < 1 && !(zoomAnswered && ready()) {
            t += 0.01
            for m in pending.split(separator: 0xFF).map({ Array($0) + [0xFF] }) {
                let answer: [UInt8] = m == VISCA.addressSet() ? [0x88, 0x30, 0x02, 0xFF]
                    : m == VISCA.ifClear(address: 1) ? [0x90, 0x50, 0xFF]
                    : m == VISCA.positionInquiry(address: 1) ? Self.panTiltAnswer
                    : m == VISCA.zoomInquiry(address: 1) ? [0x90, 0x50] + zoom + [0xFF]
                    : Self.ack + Self.completion
                zoomAnswered = zoomAnswered || m == VISCA.zoomInquiry(address: 1)
                reports += d.receive(answer, at: t)
            }
            pending = d.tick(at: t).bytes
        }
        #expect(zoomAnswered && ready())
        // Whatever the last tick sent (the limits, a poll): answered.
        while !pending.isEmpty {
            t += 0.01
            for m in pending.split(separator: 0xFF).map({ Array($0) + [0xFF] }) {
                reports += d.receive(m == VISCA.positionInquiry(address: 1) ? Self.panTiltAnswer
                                     : m == VISCA.zoomInquiry(address: 1) ? [0x90, 0x50] + zoom + [0xFF] : Self.ack + Self.completion, at: t)
            }
            pending = d.tick(at: t).bytes
        }
        return (d, reports, t)
    }

    @Test func aProfileWithAZoomDeclaresTheZoomAxisInMagnification() throws {
        let (_, reports, _) = running()
        guard case .ready(_, let caps)? = reports.first(where: { if case .ready = $0 { true } else { false } }) else {
            Issue.record("no ready: \(reports)"); return
        }
        let zoom = try #require(caps.axis(.zoom))
        #expect(zoom.min == 1 && zoom.max == 20 && !zoom.continuous)
        // The fastest variable speed where the table is steepest.
        #expect(abs(Double(zoom.maxSpeed) - profile.zoom!.maxRate) < 1e-3 && zoom.maxSpeed > 0)
        var plain = profile
        plain.zoom = nil
        #expect(VISCADriver(profile: plain).capabilities.axis(.zoom) == nil, "no zoom in the profile, no zoom axis")
    }

    @Test func readyWaitsForTheZoomsFirstAnswerAndACameraThatRefusesItIsAClearError() {
        var d = VISCADriver(profile: profile, address: 1, transport: .serial, pollHz: 20)
        var pending = d.start(at: 0), t = 0.0, reports: [DriverReport] = []
        while t < 1 && !reports.contains(where: { if case .fatal = $0 { true } else { false } }) {
            t += 0.01
            for m in pending.split(separator: 0xFF).map({ Array($0) + [0xFF] }) {
                let answer: [UInt8] = m == VISCA.addressSet() ? [0x88, 0x30, 0x02, 0xFF]
                    : m == VISCA.ifClear(address: 1) ? [0x90, 0x50, 0xFF]
                    : m == VISCA.positionInquiry(address: 1) ? Self.panTiltAnswer
                    : m == VISCA.zoomInquiry(address: 1) ? [0x90, 0x60, 0x02, 0xFF]  // syntax error: no zoom here
                    : Self.ack + Self.completion
                reports += d.receive(answer, at: t)
            }
            pending = d.tick(at: t).bytes
        }
        #expect(!reports.contains { if case .ready = $0 { true } else { false } }, "not ready with the zoom unknown")
        guard case .fatal(let why)? = reports.last else { Issue.record("\(reports)"); return }
        #expect(why.contains("CAM_ZoomPosInq") && why.contains("generic-ptzoptics"), "\(why)")
    }

    @Test func eachPanTiltPollIsFollowedByCAMZoomPosInqAndFeedbackCarriesTheMagnification() throws {
        var (d, _, t) = running(zoom: [0x04, 0x00, 0x00, 0x00])  // 0x4000, the optical tele end
        t += 1  // a still zoom is read once a second
        #expect(d.tick(at: t).bytes.hexText == VISCADriverTests.poll, "the pan/tilt first")
        let reports = d.receive(Self.panTiltAnswer, at: t + 0.005)
        guard case .feedback(let f)? = reports.first else { Issue.record("\(reports)"); return }
        let zoom = try #require(f.axis(.zoom))
        #expect(zoom.position == 20 && zoom.status.contains(.atMax))
        #expect(d.tick(at: t + 0.01).bytes.hexText == Self.zoomInquiry, "then the zoom, once the inquiry lane is free")
        _ = d.receive([0x90, 0x50, 0x01, 0x07, 0x08, 0x01, 0xFF], at: t + 0.015)  // 0x1781: 2× on the x25 table's position
        _ = d.tick(at: t + 0.06)
        let next = d.receive(Self.panTiltAnswer, at: t + 0.065)
        guard case .feedback(let g)? = next.first else { Issue.record("\(next)"); return }
        #expect(abs(Double(g.axis(.zoom)!.position) - 1.91) < 1e-4)
        #expect(g.axis(.zoom)!.velocity < 0, "zooming out since the last answer")
    }

    /// On a link slower than the driver's resends a Pan-tiltPosInq is given up, the zoom is asked
    /// next, and the pan/tilt's answer comes then: serial VISCA names no inquiry in a reply, so it
    /// was taken for the zoom's ("holds 8 nibbles, not 4") and the zoom's own answer was lost.
    @Test func aLateAnswerToAnInquiryGivenUpOnIsNotTakenForTheNextOne() throws {
        var (d, _, t) = running()
        t += 1  // the still zoom's once-a-second read is due behind the pan/tilt poll
        var zoomAsked = false
        while t < 30 && !zoomAsked {  // nothing answers until the driver has moved on to the zoom
            t += 0.01
            zoomAsked = d.tick(at: t).bytes.split(separator: 0xFF).contains { Array($0) + [0xFF] == VISCA.zoomInquiry(address: 1) }
        }
        try #require(zoomAsked)
        var reports = d.receive(Self.panTiltAnswer, at: t + 0.001)  // the late Pan-tiltPosInq answer
        reports += d.receive([0x90, 0x50, 0x04, 0x00, 0x00, 0x00, 0xFF], at: t + 0.002)  // the zoom's own: the tele end
        #expect(!reports.contains { if case .fault = $0 { true } else { false } }, "\(reports)")
        var feedback: Feedback?
        while t < 32 && feedback == nil {
            t += 0.01
            if d.tick(at: t).bytes.hexText == VISCADriverTests.poll {
                for report in d.receive(Self.panTiltAnswer, at: t + 0.005) { if case .feedback(let f) = report { feedback = f } }
            }
        }
        let zoom = try #require(feedback?.axis(.zoom))
        #expect(zoom.position == 20, "the zoom's own answer taken")
    }

    @Test func aStillZoomIsReadOnceASecondSoThePanTiltPollsKeepTheirRate() {
        var (d, _, t) = running()
        var zoomPolls: [Double] = [], panTiltPolls = 0
        let start = t
        while t < start + 3 {
            t += 0.01
            for m in d.tick(at: t).bytes.split(separator: 0xFF).map({ Array($0) + [0xFF] }) {
                if m == VISCA.zoomInquiry(address: 1) { zoomPolls.append(t); _ = d.receive([0x90, 0x50, 0, 0, 0, 0, 0xFF], at: t + 0.005) }
                if m == VISCA.positionInquiry(address: 1) { panTiltPolls += 1; _ = d.receive(Self.panTiltAnswer, at: t + 0.005) }
            }
        }
        #expect(zoomPolls.count >= 2 && zoomPolls.count <= 4, "\(zoomPolls)")
        #expect(panTiltPolls >= 55, "20 Hz for 3 s: \(panTiltPolls)")
        // A zoom command: read after every pan/tilt poll while it runs.
        _ = d.send(.velocity([AxisValue(.zoom, 1)]), at: t)
        _ = d.receive(Self.ack + Self.completion, at: t + 0.005)
        var polled = 0
        for step in 1...20 {
            let now = t + Double(step) * 0.01
            for m in d.tick(at: now).bytes.split(separator: 0xFF).map({ Array($0) + [0xFF] }) {
                if m == VISCA.zoomInquiry(address: 1) { polled += 1; _ = d.receive([0x90, 0x50, 0, 1, 0, Int(step) > 9 ? 9 : UInt8(step)].map { UInt8($0) } + [0xFF], at: now + 0.005) }
                if m == VISCA.positionInquiry(address: 1) { _ = d.receive(Self.panTiltAnswer, at: now + 0.005) }
            }
        }
        #expect(polled >= 3, "\(polled) zoom polls in 0.2 s while zooming")
    }

    /// The engine's every pan/tilt VELOCITY also names the zoom, at 0 while no shot zooms: on a
    /// still lens that is nothing to send, and the zoom is still read once a second, not after
    /// every pan/tilt poll (a Stop queued behind the drives kept the zoom "moving": each poll then
    /// waited a zoom read's round trip, and tracking at 200 ms replies lost its subject).
    @Test func aZeroZoomRateOnAStillLensSendsNothingAndKeepsTheOnceASecondRead() {
        var (d, _, t) = running()
        var zoomPolls = 0, zoomCommands = 0
        let start = t
        while t < start + 3 {
            t += 0.01
            var out = d.tick(at: t).bytes
            if Int((t - start) * 100) % 5 == 0 { out += d.send(.velocity([AxisValue(.yaw, 0.3), AxisValue(.pitch, 0), AxisValue(.zoom, 0)]), at: t) }
            for m in out.split(separator: 0xFF).map({ Array($0) + [0xFF] }) {
                if m == VISCA.zoomInquiry(address: 1) { zoomPolls += 1; _ = d.receive([0x90, 0x50, 0, 0, 0, 0, 0xFF], at: t + 0.005) }
                else if m == VISCA.positionInquiry(address: 1) { _ = d.receive(Self.panTiltAnswer, at: t + 0.005) }
                else {
                    if m.count > 3 && m[1...3] == [0x01, 0x04, 0x07] { zoomCommands += 1 }
                    _ = d.receive(Self.ack + Self.completion, at: t + 0.005)
                }
            }
        }
        #expect(zoomCommands == 0)
        #expect(zoomPolls >= 2 && zoomPolls <= 4, "\(zoomPolls) zoom reads in 3 s")
    }

    @Test func aZoomRateIsTeleOrWideAtTheNearestVariableSpeedWhereTheLensIs() {
        var (d, _, t) = running()
        // At the wide end 1×/s is 6612 units/s: speed 7 (6500).
        #expect(d.send(.velocity([AxisValue(.zoom, 1)]), at: t).hexText == "81 01 04 07 27 ff")
        _ = d.receive(Self.ack + Self.completion, at: t + 0.005)
        #expect(d.send(.velocity([AxisValue(.zoom, 1)]), at: t + 0.01).isEmpty, "in force: not resent")
        // 0.05×/s is 331 units/s: wide at speed 0 (330).
        #expect(d.send(.velocity([AxisValue(.zoom, -0.05)]), at: t + 0.02).hexText == "81 01 04 07 30 ff")
        _ = d.receive(Self.ack + Self.completion, at: t + 0.025)
        #expect(d.send(.velocity([AxisValue(.zoom, 0)]), at: t + 0.03).hexText.hasPrefix("81 01 04 07 00 ff"), "(a poll due goes with it)")
    }

    @Test func aVelocityNamingOnlyTheZoomLeavesPanAndTiltAsTheyAre() {
        var (d, _, t) = running()
        #expect(d.send(.velocity([AxisValue(.yaw, 0.3)]), at: t).hexText == "81 01 06 01 0f 01 01 03 ff")
        _ = d.receive(Self.ack + Self.completion, at: t + 0.005)
        // No Pan-tiltDrive Stop: only the zoom.
        #expect(d.send(.velocity([AxisValue(.zoom, 1)]), at: t + 0.01).hexText == "81 01 04 07 27 ff")
        _ = d.receive(Self.ack + Self.completion, at: t + 0.015)
        // And a pan/tilt velocity leaves the zoom alone.
        #expect(d.send(.velocity([AxisValue(.yaw, 0)]), at: t + 0.02).hexText == VISCADriverTests.stop)
    }

    @Test func aZoomTargetIsCAMZoomDirectWhichRunsInItsSocketLikeAnAbsoluteMove() {
        var (d, _, t) = running()
        // 2× lies between the table's 1.91× (0x1781) and 2.78× (0x213B): 0x1883.
        #expect(d.send(.position(duration: 1, targets: [PositionTarget(axis: .zoom, position: 2)]), at: t).hexText == "81 01 04 47 01 08 08 03 ff")
        _ = d.receive(Self.ack, at: t + 0.005)
        // Its ACK frees the command lane: a pan/tilt drive goes while the zoom moves.
        #expect(d.send(.velocity([AxisValue(.yaw, 0.3)]), at: t + 0.01).hexText == "81 01 06 01 0f 01 01 03 ff")
        _ = d.receive([0x90, 0x42, 0xFF, 0x90, 0x52, 0xFF], at: t + 0.015)
        // The zoom's completion, in its socket, ends it.
        #expect(d.receive(Self.completion, at: t + 0.5).isEmpty)
        // A target beyond the lens is its tele end.
        #expect(d.send(.position(duration: 1, targets: [PositionTarget(axis: .zoom, position: 50)]), at: t + 0.51).hexText.hasPrefix("81 01 04 47 04 00 00 00 ff"))
    }

    @Test func stopStopsTheZoomBesideThePanAndTilt() {
        var (d, _, t) = running()
        _ = d.send(.velocity([AxisValue(.zoom, 1)]), at: t)
        _ = d.receive(Self.ack + Self.completion, at: t + 0.005)
        #expect(d.send(.stop, at: t + 0.01).hexText == VISCADriverTests.stop)
        // The zoom's Stop after the Pan-tiltDrive's is in flight: both are urgent, one at a time.
        _ = d.receive(Self.ack + Self.completion, at: t + 0.015)
        #expect(d.tick(at: t + 0.02).bytes.hexText.hasPrefix("81 01 04 07 00 ff"))
    }
}
