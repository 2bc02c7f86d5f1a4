import DockDrivers
import DockProtocol
import Testing

/// The V4L2 driver against a scripted camera (what VideoDeviceLink would answer): the controls an
/// OBSBOT Tiny 2-like camera lists, its pose read back, targets, refusals and an unplug.
@Suite struct V4L2CameraDriverTests {
    static let pan = V4L2Wire.Control.panAbsolute.rawValue, tilt = V4L2Wire.Control.tiltAbsolute.rawValue
    static let volatile: UInt32 = 0x0080

    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
    func line(_ reply: V4L2Wire.Reply) -> [UInt8] { V4L2Wire.encode(reply) }

    /// A driver past its query and first read: the camera at pan 36000″ (10° right), tilt −7200″.
    func connected(flags: UInt32 = volatile) -> (V4L2CameraDriver, [DriverReport]) {
        var driver = V4L2CameraDriver(settings: .init())
        #expect(text(driver.start(at: 0)) == "Q\n")
        var reports = driver.receive(line(.control(.init(id: Self.pan, minimum: -468_000, maximum: 468_000, step: 3600, defaultValue: 0, flags: flags)))
                                     + line(.control(.init(id: Self.tilt, minimum: -324_000, maximum: 324_000, step: 3600, defaultValue: 0, flags: flags)))
                                     + line(.card("OBSBOT Tiny 2")), at: 0.01)
        #expect(text(driver.tick(at: 0.02).bytes) == "G \(Self.pan) \(Self.tilt)\n")
        reports += driver.receive(line(.values([(Self.pan, Int32(36000)), (Self.tilt, Int32(-7200))])), at: 0.03)
        return (driver, reports)
    }

    @Test func itListsTheCamerasAxesAndReadsWhereItPoints() throws {
        let (_, reports) = connected()
        guard case .ready(let identity, let caps)? = reports.first else { Issue.record("not ready: \(reports)"); return }
        #expect(identity.model == "OBSBOT Tiny 2" && identity.serial == "v4l2-OBSBOTTiny2" && identity.hardware == "pose read back")
        let yaw = try #require(caps.axis(.yaw)), pitch = try #require(caps.axis(.pitch))
        #expect(abs(Double(yaw.max) - 130 * .pi / 180) < 1e-4 && abs(Double(pitch.min) + 90 * .pi / 180) < 1e-4)
        guard case .feedback(let f)? = reports.last else { Issue.record("no feedback: \(reports)"); return }
        // Pan grows to the right, yaw to the left.
        #expect(abs(Double(f.axis(.yaw)!.position) + 10 * .pi / 180) < 1e-5)
        #expect(abs(Double(f.axis(.pitch)!.position) + 2 * .pi / 180) < 1e-5)
    }

    @Test func aConnectHoldsTheCameraWhereItIsThenATargetIsSetOncePerInterval() {
        var (driver, _) = connected()
        #expect(!driver.stopConfirmed, "the hold on connect is still to be sent")
        #expect(text(driver.tick(at: 0.04).bytes) == "S \(Self.pan)=36000\n")
        _ = driver.receive(line(.values([(Self.pan, Int32(36000))])), at: 0.05)
        #expect(text(driver.tick(at: 0.06).bytes) == "S \(Self.tilt)=-7200\n")
        _ = driver.receive(line(.values([(Self.tilt, Int32(-7200))])), at: 0.07)
        #expect(driver.stopConfirmed)
        // An orientation: yaw 0.2 rad (11.46° left) → pan −41253″, to the 3600″ step: −39600″.
        #expect(text(driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.2)]), at: 0.08)).isEmpty,
                "the pan was set 0.04 s ago: the next waits for the command interval")
        #expect(text(driver.tick(at: 0.15).bytes) == "S \(Self.pan)=-39600\n")
    }

    @Test func aRefusalReachesTheEngineAndAnUnplugClosesTheLink() {
        var (driver, _) = connected()
        _ = driver.tick(at: 0.04)
        let refused = driver.receive(line(.failure(errno: 16, text: "Device or resource busy")), at: 0.05)
        #expect(refused == [.refused(command: MessageType.stop.rawValue, reason: "EBUSY: Device or resource busy")])
        _ = driver.tick(at: 0.2)
        let gone = driver.receive(line(.failure(errno: 19, text: "No such device")), at: 0.21)
        guard case .fatal(let why)? = gone.first else { Issue.record("an unplug did not close the link: \(gone)"); return }
        #expect(why.contains("gone"))
    }

    @Test func aCameraThatOnlyEchoesItsTargetIsEstimatedAtItsSpeed() {
        var (driver, reports) = connected(flags: 0)
        guard case .ready(let identity, _)? = reports.first else { Issue.record("not ready"); return }
        #expect(identity.hardware == "pose estimated")
        _ = driver.tick(at: 0.04); _ = driver.receive(line(.values([(Self.pan, Int32(36000))])), at: 0.05)
        _ = driver.tick(at: 0.06); _ = driver.receive(line(.values([(Self.tilt, Int32(-7200))])), at: 0.07)
        _ = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0)]), at: 0.2)
        _ = driver.receive(line(.values([(Self.pan, Int32(0))])), at: 0.21)
        // 0.1 s later at 1 rad/s the camera has come 5.7° of the 10°: not the echoed 0.
        _ = driver.tick(at: 0.31)
        reports = driver.receive(line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(-7200))])), at: 0.31)
        guard case .feedback(let f)? = reports.last else { Issue.record("no feedback"); return }
        let yawDegrees = Double(f.axis(.yaw)!.position) * 180 / .pi
        #expect(yawDegrees < -3 && yawDegrees > -5, "yaw \(yawDegrees)°")
    }

    @Test func theWireReadsBackWhatItWrites() {
        for request in [V4L2Wire.Request.query, .get([Self.pan, Self.tilt]), .set(Self.pan, Int32(-3600))] {
            let bytes = V4L2Wire.encode(request)
            #expect(V4L2Wire.request(Substring(text(bytes.dropLast()))) == request)
        }
        #expect(V4L2Wire.request("S 1=x") == nil && V4L2Wire.reply("V 1") == nil)
    }
}
