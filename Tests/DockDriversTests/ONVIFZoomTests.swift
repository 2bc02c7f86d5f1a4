import DockDrivers
import DockProtocol
import Testing

/// The ONVIF driver's zoom, with `maxZoom` set: the zoom position space's 0…1 as 1…10×, the
/// zoom in AbsoluteMove / ContinuousMove beside the pan/tilt, and read back from GetStatus.
@Suite struct ONVIFZoomTests {
    let rig = ONVIFCameraDriverTests()

    var settings: ONVIFCameraDriver.Settings {
        var s = ONVIFCameraDriver.Settings()
        s.maxZoom = 10
        s.zoomSeconds = 3
        return s
    }

    func status(zoom: String) -> [UInt8] {
        rig.reply(ONVIFEmulatorReplies.status.replacingOccurrences(of: #"<tt:Zoom x="0.000000""#, with: #"<tt:Zoom x="\#(zoom)""#))
    }

    @Test func withAMaxZoomTheZoomIsAnAxisInMagnification() throws {
        let (_, reports) = rig.ready(settings: settings)
        guard case .ready(let identity, let caps)? = reports.first else { Issue.record("\(reports)"); return }
        let zoom = try #require(caps.axis(.zoom))
        // 1…10× over 3 s at a velocity of 1: 3×/s.
        #expect(zoom.min == 1 && zoom.max == 10 && zoom.maxSpeed == 3)
        #expect(identity.hardware.hasSuffix("zoom to 10x"))
        let (_, plain) = rig.ready()
        guard case .ready(_, let without)? = plain.first else { Issue.record("\(plain)"); return }
        #expect(without.axis(.zoom) == nil, "ONVIF gives no magnification: no max_zoom, no zoom axis")
    }

    @Test func getStatusZoomIsReadAsMagnification() throws {
        var (driver, _) = rig.ready(settings: settings)
        let reports = driver.receive(status(zoom: "0.500000"), at: 1)
        guard case .feedback(let f)? = reports.first else { Issue.record("\(reports)"); return }
        #expect(try #require(f.axis(.zoom)).position == 5.5)
    }

    @Test func aGetStatusWithoutZoomStillGivesEveryFeedbackAZoom() throws {
        var (driver, _) = rig.ready(settings: settings)
        let noZoom = ONVIFEmulatorReplies.status.replacingOccurrences(
            of: #"<tt:Zoom x="0.000000" space="http://www.onvif.org/ver10/tptz/ZoomSpaces/PositionGenericSpace"/>"#, with: "")
        #expect(!noZoom.contains("tt:Zoom x="))
        let reports = driver.receive(rig.reply(noZoom), at: 1)
        guard case .feedback(let f)? = reports.first else { Issue.record("\(reports)"); return }
        // The controller moves no axis of a stand while one is unknown: the zoom is the estimate, from the wide end.
        #expect(try #require(f.axis(.zoom)).position == 1)
    }

    @Test func aZoomTargetGoesInTheAbsoluteMoveWithThePanTilt() {
        var (driver, _) = rig.ready(settings: settings)
        _ = driver.receive(status(zoom: "0.000000"), at: 1)
        let move = rig.body(driver.send(.position(duration: 1, targets: [PositionTarget(axis: .zoom, position: 4)]), at: 1.01))
        // 4× of 1…10× is a third of the zoom space; the pan/tilt stay where they are.
        #expect(move.contains(#"<tt:PanTilt x="0.250000" y="-0.500000"/><tt:Zoom x="0.333333"/>"#), "\(move)")
    }

    @Test func aZoomRateGoesInTheContinuousMoveAndStaysWhileOnlyThePanTiltChange() {
        var (driver, _) = rig.ready(settings: settings)
        _ = driver.receive(status(zoom: "0.000000"), at: 1)
        let zoomIn = rig.body(driver.send(.velocity([AxisValue(.zoom, 1.5)]), at: 1.01))
        // 1.5×/s of 3×/s at a velocity of 1.
        #expect(zoomIn.contains(#"<tt:PanTilt x="0.000000" y="0.000000"/><tt:Zoom x="0.500000"/>"#), "\(zoomIn)")
        _ = driver.receive(rig.reply(ONVIFEmulatorReplies.stop), at: 1.02)
        // A pan rate: the camera's next move replaces the whole motion, so it carries the zoom's too.
        let both = rig.body(driver.send(.velocity([AxisValue(.yaw, -0.5)]), at: 1.2))
        #expect(both.contains(#"<tt:PanTilt x="0.286479" y="0.000000"/><tt:Zoom x="0.500000"/>"#), "\(both)")
        _ = driver.receive(rig.reply(ONVIFEmulatorReplies.stop), at: 1.21)
        let panStopped = rig.body(driver.send(.velocity([AxisValue(.yaw, 0)]), at: 1.4))
        #expect(panStopped.contains(#"<tt:PanTilt x="0.000000" y="0.000000"/><tt:Zoom x="0.500000"/>"#), "the zoom still moves: \(panStopped)")
        _ = driver.receive(rig.reply(ONVIFEmulatorReplies.stop), at: 1.41)
        // Both rates zero: a Stop, at once.
        #expect(rig.action(driver.send(.velocity([AxisValue(.zoom, 0)]), at: 1.42)) == "/onvif/ptz_service tptz:Stop")
    }

    @Test func aZoomThatStandsStillInGetStatusWhileZoomingIsEstimated() throws {
        var (driver, _) = rig.ready(settings: settings)
        _ = driver.receive(status(zoom: "0.000000"), at: 1)
        _ = driver.send(.velocity([AxisValue(.zoom, 3)]), at: 1.01)  // full speed: the whole space in 3 s
        _ = driver.receive(rig.reply(ONVIFEmulatorReplies.stop), at: 1.02)
        _ = driver.tick(at: 1.1)
        _ = driver.receive(status(zoom: "0.000000"), at: 1.11)
        #expect(rig.action(driver.tick(at: 1.45).bytes) == "/onvif/ptz_service tptz:GetStatus")
        let reports = driver.receive(status(zoom: "0.000000"), at: 1.46)
        guard case .feedback(let f)? = reports.first else { Issue.record("\(reports)"); return }
        // From the ContinuousMove's reply at 1.02 (the repeated reads are no news, the first one
        // too), 0.44 s at a third of the space a second: 2.32×, not the 1× the camera repeats.
        #expect(abs(Double(try #require(f.axis(.zoom)).position) - (1 + 9 * 0.44 / 3)) < 0.01)
    }

    /// The emulator's options with only its relative spaces (and speeds): a relative-only camera.
    static let relativeOnlyOptions = ["AbsolutePanTiltPositionSpace", "AbsoluteZoomPositionSpace", "ContinuousPanTiltVelocitySpace",
                                      "ContinuousZoomVelocitySpace"].reduce(ONVIFEmulatorReplies.configurationOptions) { options, space in
        guard let start = options.firstRange(of: "<tt:\(space)>"), let end = options.firstRange(of: "</tt:\(space)>") else { return options }
        var cut = options
        cut.removeSubrange(start.lowerBound..<end.upperBound)
        return cut
    }

    @Test func onARelativeOnlyCameraAZoomTargetIsATranslationFromTheZoomItHas() throws {
        #expect(!Self.relativeOnlyOptions.contains("Absolute") && !Self.relativeOnlyOptions.contains("Continuous")
                && Self.relativeOnlyOptions.contains("RelativeZoomTranslationSpace"))
        var (driver, reports) = rig.ready(options: Self.relativeOnlyOptions, settings: settings)
        guard case .ready(_, let caps)? = reports.first else { Issue.record("\(reports)"); return }
        #expect(try #require(caps.axis(.zoom)).max == 10)
        _ = driver.receive(status(zoom: "0.200000"), at: 1)
        let move = rig.body(driver.send(.position(duration: 1, targets: [PositionTarget(axis: .zoom, position: 4)]), at: 1.01))
        // 4× is a third of the space; the zoom is at 0.2 of it: 0.133333 more, the pan/tilt where they are.
        #expect(move.contains(#"<tptz:Translation><tt:PanTilt x="0.000000" y="0.000000"/><tt:Zoom x="0.133333"/></tptz:Translation>"#), "\(move)")
    }

    @Test func onARelativeOnlyCameraAZoomRateIsATranslationAheadOfIt() {
        var (driver, _) = rig.ready(options: Self.relativeOnlyOptions, settings: settings)
        _ = driver.receive(status(zoom: "0.200000"), at: 1)
        let move = rig.body(driver.send(.velocity([AxisValue(.zoom, 1.5)]), at: 1.01))
        // 1.5×/s is half the top speed, a third of the space a second, 0.3 s ahead (two command
        // intervals and a poll, as for the pan/tilt's rates).
        #expect(move.contains("RelativeMove") && move.contains(#"<tt:Zoom x="0.050000"/>"#), "\(move)")
    }
}
