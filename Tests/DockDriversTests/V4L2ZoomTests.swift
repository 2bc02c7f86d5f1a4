import DockDrivers
import DockProtocol
import Testing

/// The V4L2 driver's zoom: ZOOM_ABSOLUTE's units as magnification, set in the same request and
/// command interval as the pan/tilt, read back with them; ZOOM_CONTINUOUS where there is no absolute.
@Suite struct V4L2ZoomTests {
    static let pan = V4L2Wire.Control.panAbsolute.rawValue, tilt = V4L2Wire.Control.tiltAbsolute.rawValue
    static let zoom = V4L2Wire.Control.zoomAbsolute.rawValue, zoomContinuous = V4L2Wire.Control.zoomContinuous.rawValue
    let rig = V4L2CameraDriverTests()

    /// A Tiny 2-like camera (volatile pan/tilt, ZOOM_ABSOLUTE 100…400 that echoes what was set),
    /// 4× at its top, past its query and first read (zoom at 200: 2×) and the connect's hold.
    func connected(maxZoom: Double? = 4) -> (V4L2CameraDriver, [DriverReport]) {
        var settings = V4L2CameraDriver.Settings()
        settings.maxZoom = maxZoom
        var driver = V4L2CameraDriver(settings: settings)
        _ = driver.start(at: 0)
        var reports = driver.receive(rig.line(.control(.init(id: Self.pan, minimum: -468_000, maximum: 468_000, step: 3600, defaultValue: 0, flags: 0x80)))
                                     + rig.line(.control(.init(id: Self.tilt, minimum: -324_000, maximum: 324_000, step: 3600, defaultValue: 0, flags: 0x80)))
                                     + rig.line(.control(.init(id: Self.zoom, minimum: 100, maximum: 400, step: 1, defaultValue: 100, flags: 0)))
                                     + rig.line(.card("OBSBOT Tiny 2")), at: 0.01)
        let read = rig.text(driver.tick(at: 0.02).bytes)
        #expect(read == (maxZoom == nil ? "G \(Self.pan) \(Self.tilt)\n" : "G \(Self.pan) \(Self.tilt) \(Self.zoom)\n"))
        reports += driver.receive(rig.line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(0)), (Self.zoom, Int32(200))])), at: 0.03)
        #expect(rig.text(driver.tick(at: 0.04).bytes) == "S 0.1 \(Self.pan)=0 \(Self.tilt)=0\n", "the hold leaves the zoom as it is")
        _ = driver.receive(rig.line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(0))])), at: 0.05)
        return (driver, reports)
    }

    @Test func aProfileMagnificationMakesZoomAbsoluteTheZoomAxisReadWithThePose() throws {
        let (_, reports) = connected()
        guard case .ready(let identity, let caps)? = reports.first, case .feedback(let f)? = reports.last else {
            Issue.record("\(reports)"); return
        }
        let zoom = try #require(caps.axis(.zoom))
        #expect(zoom.min == 1 && zoom.max == 4 && zoom.countsPerRev == 300)
        #expect(identity.hardware.contains("zoom by absolute"))
        #expect(try #require(f.axis(.zoom)).position == 2, "200 of 100…400 is 2×")
        let (_, plain) = connected(maxZoom: nil)
        guard case .ready(_, let without)? = plain.first else { Issue.record("\(plain)"); return }
        #expect(without.axis(.zoom) == nil, "no magnification known, no zoom axis")
    }

    @Test func aZoomTargetIsSetAloneOrWithThePanTiltWithinTheCommandInterval() {
        var (driver, _) = connected()
        #expect(rig.text(driver.send(.position(duration: 1, targets: [PositionTarget(axis: .zoom, position: 2.5)]), at: 0.08)).isEmpty,
                "the hold was set 0.04 s ago: the zoom shares the pan/tilt's command interval")
        #expect(rig.text(driver.tick(at: 0.15).bytes) == "S 0.1 \(Self.zoom)=250\n")
        _ = driver.receive(rig.line(.values([(Self.zoom, Int32(250))])), at: 0.16)
        // That set went over a due read: the read goes before the next.
        #expect(rig.text(driver.tick(at: 0.25).bytes).hasPrefix("G "))
        _ = driver.receive(rig.line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(0)), (Self.zoom, Int32(250))])), at: 0.26)
        #expect(rig.text(driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.2), PositionTarget(axis: .zoom, position: 9)]), at: 0.27)) == "S 0.1 \(Self.pan)=-39600 \(Self.tilt)=0 \(Self.zoom)=400\n", "one request; beyond the lens is its top")
    }

    @Test func aZoomSetBySomeoneElseIsWhereItHeadsNotWhatDockdLastSet() throws {
        var (driver, _) = connected()
        _ = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .zoom, position: 2.5)]), at: 0.15)
        _ = driver.receive(rig.line(.values([(Self.zoom, Int32(250))])), at: 0.16)
        // v4l2-ctl sets 300: the control (not volatile) echoes that target, not dockd's 250.
        #expect(rig.text(driver.tick(at: 0.2).bytes) == "G \(Self.pan) \(Self.tilt) \(Self.zoom)\n")
        let reports = driver.receive(rig.line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(0)), (Self.zoom, Int32(300))])), at: 0.21)
        guard case .feedback(let f)? = reports.last else { Issue.record("\(reports)"); return }
        #expect(try #require(f.axis(.zoom)).position == 3, "a digital zoom is there at once")
    }

    @Test func aZoomRateIsATargetAheadOfWhereTheZoomIs() {
        var (driver, _) = connected()
        // A digital zoom (no zoomSeconds) is where it was set at once: 1×/s for one command
        // interval (0.1 s) of the 300 units over 3×: 10 units ahead.
        #expect(rig.text(driver.send(.velocity([AxisValue(.zoom, 1)]), at: 0.15)) == "S 0.1 \(Self.zoom)=210\n")
    }

    @Test func aCameraWithOnlyZoomContinuousIsSteeredBySpeed() throws {
        var settings = V4L2CameraDriver.Settings()
        settings.profile = V4L2Profile(name: "optical", vendor: "v", model: "m", cards: ["PTZ"], usb: [], maxSpeedDegrees: 60, commandInterval: 0.1,
                                       panSign: 1, aiTrackingOff: nil, maxZoom: 10, zoomSeconds: 4, source: "", provenance: [:])
        var driver = V4L2CameraDriver(settings: settings)
        _ = driver.start(at: 0)
        let reports = driver.receive(rig.line(.control(.init(id: Self.pan, minimum: -468_000, maximum: 468_000, step: 3600, defaultValue: 0, flags: 0)))
                                     + rig.line(.control(.init(id: Self.tilt, minimum: -324_000, maximum: 324_000, step: 3600, defaultValue: 0, flags: 0)))
                                     + rig.line(.control(.init(id: Self.zoomContinuous, minimum: -7, maximum: 7, step: 1, defaultValue: 0, flags: 0)))
                                     + rig.line(.card("PTZ")), at: 0.01)
        guard case .ready(let identity, let caps)? = reports.first else { Issue.record("\(reports)"); return }
        #expect(identity.hardware.contains("zoom by continuous"))
        // 9× over 4 s at full speed.
        #expect(try #require(caps.axis(.zoom)).maxSpeed == 2.25)
        _ = driver.tick(at: 0.02)
        _ = driver.receive(rig.line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(0))])), at: 0.03)
        #expect(rig.text(driver.tick(at: 0.04).bytes) == "S 0.1 \(Self.pan)=0 \(Self.tilt)=0 \(Self.zoomContinuous)=0\n", "the connect stops the zoom too")
        _ = driver.receive(rig.line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(0)), (Self.zoomContinuous, Int32(0))])), at: 0.05)
        // Half the top rate.
        #expect(rig.text(driver.send(.velocity([AxisValue(.zoom, 1.125)]), at: 0.2)) == "S 0.1 \(Self.zoomContinuous)=4\n")
        _ = driver.receive(rig.line(.values([(Self.zoomContinuous, Int32(4))])), at: 0.21)
        #expect(rig.text(driver.send(.stop, at: 0.4)).contains("\(Self.zoomContinuous)=0"))
    }
}
