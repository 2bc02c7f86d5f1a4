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
        #expect(identity.model == "OBSBOT Tiny 2" && identity.serial == "v4l2-OBSBOTTiny2" && identity.hardware == "pose read back; pan by absolute, tilt by absolute")
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
        // Pan and tilt in one set: halves of one UVC control.
        #expect(text(driver.tick(at: 0.04).bytes) == "S 0.1 \(Self.pan)=36000 \(Self.tilt)=-7200\n")
        _ = driver.receive(line(.values([(Self.pan, Int32(36000)), (Self.tilt, Int32(-7200))])), at: 0.05)
        #expect(driver.stopConfirmed)
        // An orientation: yaw 0.2 rad (11.46° left) → pan −41253″, to the 3600″ step: −39600″.
        #expect(text(driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.2)]), at: 0.08)).isEmpty,
                "the pan was set 0.04 s ago: the next waits for the command interval")
        #expect(text(driver.tick(at: 0.15).bytes) == "S 0.1 \(Self.pan)=-39600 \(Self.tilt)=-7200\n", "the tilt goes with it, where it was told")
    }

    /// A rate asked before a STOP went (the stop waited out the command interval) takes the stop's
    /// place: the stop never reaches the camera, so it is not confirmed — not when the rate goes,
    /// not when the camera accepts it — until a later STOP is accepted.
    @Test func aStopOvertakenByARateBeforeItWentIsNotConfirmed() {
        var (driver, _) = connected()
        _ = driver.tick(at: 0.04); _ = driver.receive(line(.values([(Self.pan, Int32(36000)), (Self.tilt, Int32(-7200))])), at: 0.05)
        #expect(driver.stopConfirmed, "the connect's hold")
        #expect(text(driver.send(.stop, at: 0.08)).isEmpty, "the hold went 0.04 s ago: the stop waits for the command interval")
        #expect(!driver.stopConfirmed)
        _ = driver.send(.velocity([AxisValue(.yaw, 0.2)]), at: 0.1)
        #expect(!driver.stopConfirmed, "the stop was never sent")
        let set = text(driver.tick(at: 0.15).bytes)
        #expect(set.hasPrefix("S 0.1 \(Self.pan)="), "\(set)")
        _ = driver.receive(line(.values([(Self.pan, Int32(32400)), (Self.tilt, Int32(-7200))])), at: 0.16)
        #expect(!driver.stopConfirmed, "the rate's set was accepted, not a stop")
        _ = driver.send(.stop, at: 0.3)
        _ = driver.tick(at: 0.3)
        _ = driver.receive(line(.values([(Self.pan, Int32(32400)), (Self.tilt, Int32(-7200))])), at: 0.31)
        #expect(driver.stopConfirmed)
    }

    /// A STOP asked again with nothing asked since the last (dockd's shutdown, then the client whose
    /// move it interrupted going away): the camera holds the first's target already, so nothing is
    /// sent — before, a second hold went an interval later, and was what the camera got last after
    /// SIGTERM (0.3-0.5 s after the first in the VM) — whether the first was accepted or is in flight.
    @Test func aStopRepeatedWithNothingAskedSinceSendsNothing() {
        var (driver, _) = connected()
        _ = driver.tick(at: 0.04); _ = driver.receive(line(.values([(Self.pan, Int32(36000)), (Self.tilt, Int32(-7200))])), at: 0.05)
        _ = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.2)]), at: 0.2)
        _ = driver.receive(line(.values([(Self.pan, Int32(-39600)), (Self.tilt, Int32(-7200))])), at: 0.21)
        let stop = text(driver.send(.stop, at: 0.4))
        #expect(stop.hasPrefix("S 0.1 \(Self.pan)="), "\(stop)")
        #expect(driver.send(.stop, at: 0.42).isEmpty, "the first stop is in flight")
        _ = driver.receive(line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(-7200))])), at: 0.45)
        #expect(driver.stopConfirmed)
        var sets: [String] = []
        for step in 0..<10 {  // 0.5 to 0.95 s: a STOP at 0.8, the reads answered, what the camera is sent
            let time = 0.5 + Double(step) * 0.05
            var request = text(step == 6 ? driver.send(.stop, at: time) : driver.tick(at: time).bytes)
            if request.hasPrefix("G ") {
                _ = driver.receive(line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(-7200))])), at: time + 0.01)
                request = text(driver.tick(at: time + 0.02).bytes)
            }
            if request.hasPrefix("S ") { sets.append(request); _ = driver.receive(line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(-7200))])), at: time + 0.03) }
        }
        #expect(sets.isEmpty, "no second hold")
        #expect(driver.stopConfirmed, "the camera holds the stop it accepted")
        // A move since: the next STOP goes.
        _ = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.1)]), at: 1.0)
        _ = driver.receive(line(.values([(Self.pan, Int32(-18000)), (Self.tilt, Int32(-7200))])), at: 1.01)
        #expect(text(driver.send(.stop, at: 1.2)).hasPrefix("S 0.1 \(Self.pan)="))
    }

    /// How far the pan moved (arc-seconds, to the left) under a yaw `rate` (rad/s) renewed every
    /// 0.1 s as the engine does, for `seconds`, on a camera far faster than the rate (vptz turns
    /// at 60°/s): each target is reached before the next read.
    func panMoved(rate: Double, seconds: Double) -> Double {
        var (driver, _) = connected()
        var camera = ScriptedCamera()
        camera.values = [Self.pan: 36000, Self.tilt: -7200]
        let steps = Int((seconds * 100).rounded())
        var t = 0.04, sent = driver.tick(at: t).bytes
        for step in 1...steps {
            let answer = camera.answer(sent)
            if !answer.isEmpty { _ = driver.receive(answer, at: t + 0.005) }
            t = 0.04 + Double(step) * 0.01
            sent = driver.tick(at: t).bytes
            if step % 10 == 0 && step < steps { sent += driver.send(.velocity([AxisValue(.yaw, Float(rate))]), at: t) }
        }
        return Double(36000 - (camera.values[Self.pan] ?? 0))
    }

    @Test func aRateKeepsItsSpeedOnACameraThatReachesEachTargetAtOnce() {
        // 0.4 rad (82506″) to the left at 0.2 rad/s for 2 s, give or take the target's lead and a
        // step; targets set ahead of the camera itself went 3× as far.
        let moved = panMoved(rate: 0.2, seconds: 2) / (180 * 3600 / Double.pi)
        #expect(abs(moved - 0.4) < 0.08, "the pan moved \(moved) rad in 2 s at 0.2 rad/s")
    }

    /// A rate slower than half a step per command interval (here 2°/s: 0.2° an interval, the step
    /// 1°): each target, an interval of the rate ahead, rounded back to where the camera was, and
    /// it never moved (the review's dead band below 5°/s). It now steps along at the rate.
    @Test func aRateSlowerThanHalfAStepAnIntervalStillMovesTheCameraAtTheRate() {
        // 8° in 4 s (28800″), give or take a step.
        let moved = panMoved(rate: 2 * Double.pi / 180, seconds: 4) / 3600
        #expect(abs(moved - 8) <= 1.5, "the pan moved \(moved)° in 4 s at 2°/s")
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

    @Test func twoReadsMomentsApartAreNotTakenForALeap() {
        var (driver, _) = connected()
        _ = driver.tick(at: 0.04); _ = driver.receive(line(.values([(Self.pan, Int32(36000)), (Self.tilt, Int32(-7200))])), at: 0.05)
        // A read answered late, the next at once: the pan moved one 3600″ step in 7 ms.
        #expect(text(driver.tick(at: 0.13).bytes) == "G \(Self.pan) \(Self.tilt)\n")
        _ = driver.receive(line(.values([(Self.pan, Int32(36000)), (Self.tilt, Int32(-7200))])), at: 0.229)
        #expect(text(driver.tick(at: 0.23).bytes) == "G \(Self.pan) \(Self.tilt)\n")
        let reports = driver.receive(line(.values([(Self.pan, Int32(39600)), (Self.tilt, Int32(-7200))])), at: 0.236)
        guard case .feedback(let f)? = reports.last else { Issue.record("no feedback: \(reports)"); return }
        #expect(abs(f.axis(.yaw)!.velocity) < 0.5, "yaw at \(f.axis(.yaw)!.velocity) rad/s")
        // Read 39600″: somewhere in its step; the estimate (held at 36000″) puts it at the step's near edge.
        #expect(abs(Double(f.axis(.yaw)!.position) + 10.5 * .pi / 180) < 1e-5)
    }

    @Test func aCameraThatOnlyEchoesItsTargetIsEstimatedAtItsSpeed() {
        var (driver, reports) = connected(flags: 0)
        guard case .ready(let identity, _)? = reports.first else { Issue.record("not ready"); return }
        #expect(identity.hardware.hasPrefix("pose estimated"))
        _ = driver.tick(at: 0.04); _ = driver.receive(line(.values([(Self.pan, Int32(36000)), (Self.tilt, Int32(-7200))])), at: 0.05)
        _ = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0)]), at: 0.2)
        _ = driver.receive(line(.values([(Self.pan, Int32(0))])), at: 0.21)
        // 0.1 s later at 1 rad/s the camera has come 5.7° of the 10°: not the echoed 0.
        _ = driver.tick(at: 0.31)
        reports = driver.receive(line(.values([(Self.pan, Int32(0)), (Self.tilt, Int32(-7200))])), at: 0.31)
        guard case .feedback(let f)? = reports.last else { Issue.record("no feedback"); return }
        let yawDegrees = Double(f.axis(.yaw)!.position) * 180 / .pi
        #expect(yawDegrees < -3 && yawDegrees > -5, "yaw \(yawDegrees)°")
    }

    static let panSpeed = V4L2Wire.Control.panSpeed.rawValue, tiltSpeed = V4L2Wire.Control.tiltSpeed.rawValue
    static let panRelative = V4L2Wire.Control.panRelative.rawValue, tiltRelative = V4L2Wire.Control.tiltRelative.rawValue
    static let writeOnly: UInt32 = 0x0040

    /// A camera with no absolute pan/tilt (as uvcvideo lists one whose only pan/tilt is
    /// CT_PANTILT_RELATIVE): speeds of ±`speedLevels`, and relative steps of 1°.
    func connectedWithoutAbsolute(speedLevels: Int64, reverseLevels: Int64? = nil, steering: V4L2Steering? = nil) -> (V4L2CameraDriver, [DriverReport]) {
        var settings = V4L2CameraDriver.Settings()
        settings.steering = steering
        var driver = V4L2CameraDriver(settings: settings)
        _ = driver.start(at: 0)
        let reverse = -(reverseLevels ?? speedLevels)
        let reports = driver.receive(line(.control(.init(id: Self.panSpeed, minimum: reverse, maximum: speedLevels, step: 1, defaultValue: 20, flags: 0)))
                                     + line(.control(.init(id: Self.tiltSpeed, minimum: reverse, maximum: speedLevels, step: 1, defaultValue: 20, flags: 0)))
                                     + line(.control(.init(id: Self.panRelative, minimum: -468_000, maximum: 468_000, step: 3600, defaultValue: 0, flags: Self.writeOnly)))
                                     + line(.control(.init(id: Self.tiltRelative, minimum: -324_000, maximum: 324_000, step: 3600, defaultValue: 0, flags: Self.writeOnly)))
                                     + line(.card("PTZ Pro 2")), at: 0.01)
        return (driver, reports)
    }

    @Test func aRateStartsNoFurtherAheadThanOneIntervalOfIt() {
        var (driver, _) = connected()
        var camera = ScriptedCamera()
        camera.values = [Self.pan: 36000, Self.tilt: -7200]
        _ = driver.receive(camera.answer(driver.tick(at: 0.04).bytes), at: 0.045)
        // 0.3 rad/s to the right (yaw −0.3) from a camera at rest: 0.03 rad (6188″) in an interval.
        let sent = text(driver.send(.velocity([AxisValue(.yaw, -0.3)]), at: 0.2))
        #expect(sent == "S 0.1 \(Self.pan)=43200 \(Self.tilt)=-7200\n", "a leap of 0.09 rad was 18000″: \(sent)")
    }

    @Test func aReadGoesBetweenSetsWhenTheRoundTripReachesTheCommandInterval() {
        var (driver, _) = connected()
        var camera = ScriptedCamera()
        camera.values = [Self.pan: 36000, Self.tilt: -7200]
        // Every request answered 0.15 s after it went (an ioctl thread starved on a loaded
        // machine); the engine renews a rate every 20 ms, as it does on each feedback and frame.
        var t = 0.04, sent = driver.tick(at: t).bytes, answerAt = t + 0.15, feedback = 0
        while t < 3 {
            t += 0.01
            if !sent.isEmpty && t >= answerAt {
                for report in driver.receive(camera.answer(sent), at: t) { if case .feedback = report { feedback += 1 } }
                sent = []
            }
            let due = Int((t * 100).rounded()) % 2 == 0 ? driver.send(.velocity([AxisValue(.yaw, 0.1)]), at: t) : []
            let out = driver.tick(at: t)
            feedback += out.reports.filter { if case .feedback = $0 { true } else { false } }.count
            if sent.isEmpty, !(due + out.bytes).isEmpty { sent = due + out.bytes; answerAt = t + 0.15 }
        }
        // ≈ 18 requests in 3 s: sets and reads take turns (before, every one was a set).
        #expect(camera.reads >= 6 && feedback >= 6, "\(camera.reads) reads, \(camera.sets.count) sets")
        #expect(camera.sets.count >= 6)
    }

    /// The camera's side, as VideoDeviceLink answers: each set stored and echoed, each read
    /// answered from what was set (0 for what never was).
    struct ScriptedCamera {
        var values: [UInt32: Int32] = [:]
        var sets: [String] = []
        var reads = 0
        /// What an extension-unit control reads (GET_CUR).
        var extensionUnitState: [UInt8] = []

        mutating func answer(_ bytes: [UInt8]) -> [UInt8] {
            guard !bytes.isEmpty, let request = V4L2Wire.request(Substring(String(decoding: bytes.dropLast(), as: UTF8.self))) else { return [] }
            switch request {
            case .set(let set, let spacing):
                for (id, value) in set { values[id] = value }
                sets.append("S \(spacing) " + set.map { "\($0.0)=\($0.1)" }.joined(separator: " "))
                return V4L2Wire.encode(.values(set))
            case .get(let ids):
                reads += 1
                return V4L2Wire.encode(.values(ids.map { ($0, values[$0] ?? 0) }))
            case .extensionUnit(_, let unit, let selector, let data, let restore):
                sets.append("X \(unit) \(selector) \(data.count)" + (restore.map { " restore " + $0.prefix(4).map { String($0, radix: 16) }.joined(separator: " ") } ?? ""))
                return V4L2Wire.encode(.unit(unit))
            case .extensionUnitRead(_, let unit, let selector):
                sets.append("R \(unit) \(selector)")
                return V4L2Wire.encode(.unitRead(unit, extensionUnitState))
            case .query:
                return []
            }
        }
    }

    /// Ticks every 10 ms from `time` to `end`, each request answered 5 ms after it went (and
    /// `first`, bytes already sent at `time`): the feedback the driver reported.
    func run(_ driver: inout V4L2CameraDriver, _ camera: inout ScriptedCamera, from time: Double, to end: Double,
             first: [UInt8] = []) -> [Feedback] {
        var feedback: [Feedback] = [], t = time, sent = first
        while t < end {
            let answer = camera.answer(sent)
            if !answer.isEmpty {
                for report in driver.receive(answer, at: t + 0.005) { if case .feedback(let f) = report { feedback.append(f) } }
            }
            t += 0.01
            let out = driver.tick(at: t)
            for report in out.reports { if case .feedback(let f) = report { feedback.append(f) } }
            sent = out.bytes
        }
        return feedback
    }

    @Test func aCameraWithFineSpeedsIsSteeredByRatesAndItsPoseIntegrated() {
        var (driver, reports) = connectedWithoutAbsolute(speedLevels: 160)
        guard case .ready(let identity, let caps)? = reports.first else { Issue.record("not ready: \(reports)"); return }
        #expect(identity.hardware == "pose estimated; pan by speed, tilt by speed")
        #expect(!driver.closesPositionLoop, "dockd's controller closes the loop of a camera steered by speed")
        #expect(caps.axes.count == 2)
        // No absolute pose to read: the speeds are read at the poll rate (the link's liveness) and
        // the pose estimated; the connect holds both axes at speed 0.
        var camera = ScriptedCamera()
        #expect(text(driver.tick(at: 0.02).bytes) == "G \(Self.panSpeed) \(Self.tiltSpeed)\n")
        _ = run(&driver, &camera, from: 0.02, to: 0.5, first: V4L2Wire.encode(.get([Self.panSpeed, Self.tiltSpeed])))
        #expect(camera.sets == ["S 0.1 \(Self.panSpeed)=0 \(Self.tiltSpeed)=0"])
        #expect(driver.stopConfirmed && camera.reads >= 4)
        // Yaw 0.5 rad/s to the left at a 1 rad/s top speed: pan speed −80 of ±160; the same rate
        // again sends nothing (a camera sent the same set over and over can wedge).
        camera.sets = []
        let go = driver.send(.velocity([AxisValue(.yaw, 0.5)]), at: 0.5)
        _ = run(&driver, &camera, from: 0.5, to: 0.8, first: go)
        #expect(driver.send(.velocity([AxisValue(.yaw, 0.5)]), at: 0.8).isEmpty)
        // A second at that speed: the estimate has the camera 0.5 rad to the left.
        let feedback = run(&driver, &camera, from: 0.8, to: 1.51)
        #expect(camera.sets == ["S 0.1 \(Self.panSpeed)=-80 \(Self.tiltSpeed)=0"], "with the tilt's speed, as it was")
        let yaw = feedback.last.map { Double($0.axis(.yaw)!.position) } ?? .nan
        #expect(abs(yaw - 0.5) < 0.03, "yaw \(yaw)")
        // STOP: speed 0 on both axes, confirmed once both are set.
        camera.sets = []
        let stop = driver.send(.stop, at: 1.51)
        #expect(!driver.stopConfirmed)
        _ = run(&driver, &camera, from: 1.51, to: 1.9, first: stop)
        #expect(camera.sets == ["S 0.1 \(Self.panSpeed)=0 \(Self.tiltSpeed)=0"])
        #expect(driver.stopConfirmed)
    }

    /// A STOP asked while a rate's set is in flight, then that set refused: the engine hears a
    /// refused rate, not a refused STOP, and the stop's hold still goes — even at the speeds the
    /// camera was last told, which a set that changes nothing would otherwise skip.
    @Test func aRefusedRateSetInFlightIsNotARefusedStopAndTheStopsHoldStillGoes() {
        var (driver, _) = connectedWithoutAbsolute(speedLevels: 160)
        var camera = ScriptedCamera()
        _ = run(&driver, &camera, from: 0.01, to: 0.5)
        #expect(driver.stopConfirmed, "the connect's hold")
        #expect(text(driver.send(.velocity([AxisValue(.yaw, 0.5)]), at: 0.5)) == "S 0.1 \(Self.panSpeed)=-80 \(Self.tiltSpeed)=0\n")
        #expect(driver.send(.stop, at: 0.51).isEmpty, "the stop waits for the set in flight")
        let refused = driver.receive(line(.failure(errno: 16, text: "Device or resource busy")), at: 0.52)
        #expect(refused == [.refused(command: MessageType.velocity.rawValue, reason: "EBUSY: Device or resource busy")])
        #expect(!driver.stopConfirmed)
        #expect(text(driver.tick(at: 0.6).bytes) == "S 0.1 \(Self.panSpeed)=0 \(Self.tiltSpeed)=0\n", "the stop's hold")
        _ = driver.receive(line(.values([(Self.panSpeed, Int32(0)), (Self.tiltSpeed, Int32(0))])), at: 0.61)
        #expect(driver.stopConfirmed)
    }

    @Test func aCameraWhoseSpeedIsOnlyADirectionIsSteeredByRelativeSteps() {
        var (driver, reports) = connectedWithoutAbsolute(speedLevels: 1)
        guard case .ready(let identity, _)? = reports.first else { Issue.record("not ready: \(reports)"); return }
        #expect(identity.hardware == "pose estimated; pan by relative, tilt by relative")
        #expect(driver.closesPositionLoop)
        var camera = ScriptedCamera()
        _ = run(&driver, &camera, from: 0.01, to: 0.5)
        #expect(camera.sets == ["S 0.1 \(Self.panRelative)=0 \(Self.tiltRelative)=0"], "a zero step ends any step in progress")
        // Yaw 0.2 rad to the left = pan −41253″: a step of −39600″ (the 3600″ step) from where it is.
        camera.sets = []
        let go = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.2)]), at: 0.5)
        _ = run(&driver, &camera, from: 0.5, to: 1.5, first: go)
        // The same target again, once it is there: no step.
        let again = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.2)]), at: 1.5)
        let feedback = run(&driver, &camera, from: 1.5, to: 1.8, first: again)
        #expect(camera.sets == ["S 0.1 \(Self.panRelative)=-39600"])
        // The estimate: there after 0.19 rad at 1 rad/s.
        let yaw = feedback.last.map { Double($0.axis(.yaw)!.position) } ?? .nan
        #expect(abs(yaw - 39600 / (180 * 3600 / Double.pi)) < 1e-4, "yaw \(yaw)")
    }

    @Test func aSpeedThatReversesOnlyAtTheSlowestIsNotPickedOverSteps() {
        // uvcvideo before 2026: pan_speed min=-1 max=160 (OBSBOT Tiny 2's printout).
        let (_, reports) = connectedWithoutAbsolute(speedLevels: 160, reverseLevels: 1)
        guard case .ready(let identity, _)? = reports.first else { Issue.record("not ready: \(reports)"); return }
        #expect(identity.hardware == "pose estimated; pan by relative, tilt by relative")
    }

    @Test func whileARequestIsInFlightOnlyItsAnswersTimeoutIsDue() {
        var (driver, _) = connectedWithoutAbsolute(speedLevels: 160)
        #expect(!driver.tick(at: 0.02).bytes.isEmpty, "the connect's request")
        #expect(abs((driver.nextDeadline ?? 0) - 3.02) < 1e-3, "no tick before the answer or its timeout (was every 20 ms)")
    }

    @Test func aSteeringTheCameraLacksIsSaidByName() {
        let (_, reports) = connectedWithoutAbsolute(speedLevels: 160, steering: .absolute)
        guard case .fatal(let why)? = reports.first else { Issue.record("not refused: \(reports)"); return }
        #expect(why == "PTZ Pro 2 has no PAN/TILT_ABSOLUTE control (steering = absolute)")
    }

    /// An OBSBOT Tiny 2 profile as profiles/v4l2 has it (figures from the file are not the point here).
    static let tiny2 = V4L2Profile(
        name: "obsbot-tiny-2", vendor: "OBSBOT", model: "Tiny 2", cards: ["OBSBOT Tiny 2"], usb: ["3564:fef8"],
        maxSpeedDegrees: 90, commandInterval: 0.2, panSign: 1,
        aiTrackingOff: .init(guid: "9a1e7291-6843-4683-6d92-39bc7906ee49", unit: 2, selector: 6, size: 60, off: "16020000"),
        source: "test", provenance: Dictionary(uniqueKeysWithValues: V4L2Profile.figures.map { ($0, "estimate: test") }))

    @Test func aProfileMatchedByCardPacesTheCameraAndSwitchesItsOwnTrackingOffOnceItHolds() throws {
        var settings = V4L2CameraDriver.Settings()
        settings.profiles = [Self.tiny2]
        var driver = V4L2CameraDriver(settings: settings)
        _ = driver.start(at: 0)
        let reports = driver.receive(line(.control(.init(id: Self.pan, minimum: -468_000, maximum: 468_000, step: 3600, defaultValue: 0, flags: 0)))
                                     + line(.control(.init(id: Self.tilt, minimum: -324_000, maximum: 324_000, step: 3600, defaultValue: 0, flags: 0)))
                                     + line(.card("OBSBOT Tiny 2: OBSBOT Tiny 2 St")), at: 0.01)
        guard case .ready(let identity, let caps)? = reports.first else { Issue.record("not ready: \(reports)"); return }
        #expect(identity.hardware == "pose estimated; pan by absolute, tilt by absolute; profile obsbot-tiny-2")
        #expect(abs(Double(try #require(caps.axis(.yaw)).maxSpeed) - 90 * .pi / 180) < 1e-5, "the profile's top speed")
        var camera = ScriptedCamera()
        _ = run(&driver, &camera, from: 0.01, to: 0.6, first: driver.tick(at: 0.01).bytes)
        // The hold first, then the camera's own tracking off (unit 2, selector 6, 60 bytes), once.
        #expect(camera.sets == ["S 0.2 \(Self.pan)=0 \(Self.tilt)=0", "X 2 6 60"])
        // The profile's command interval: two targets 0.2 s apart at the earliest.
        camera.sets = []
        let go = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.1)]), at: 0.6)
        _ = run(&driver, &camera, from: 0.6, to: 0.7, first: go)
        _ = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.2)]), at: 0.7)
        _ = run(&driver, &camera, from: 0.7, to: 0.79)
        #expect(camera.sets.count == 1, "\(camera.sets)")
        _ = run(&driver, &camera, from: 0.79, to: 0.85)
        #expect(camera.sets.count == 2, "\(camera.sets)")
    }

    @Test func aCameraThatRefusesItsTrackingSwitchSaysSoOnce() {
        var settings = V4L2CameraDriver.Settings()
        settings.profile = Self.tiny2
        var driver = V4L2CameraDriver(settings: settings)
        _ = driver.start(at: 0)
        _ = driver.receive(line(.control(.init(id: Self.pan, minimum: -468_000, maximum: 468_000, step: 3600, defaultValue: 0, flags: 0)))
                           + line(.card("Another camera")), at: 0.01)
        _ = driver.tick(at: 0.02)
        _ = driver.receive(line(.values([(Self.pan, Int32(0))])), at: 0.03)
        #expect(text(driver.tick(at: 0.04).bytes) == "S 0.2 \(Self.pan)=0\n")
        _ = driver.receive(line(.values([(Self.pan, Int32(0))])), at: 0.05)
        let request = text(driver.tick(at: 0.06).bytes)
        #expect(request == "X 91721e9a43688346" + "6d9239bc7906ee49 2 6 16020000" + String(repeating: "00", count: 56) + "\n",
                "a named profile applies whatever the card; the GUID as the USB descriptor holds it")
        let refused = driver.receive(line(.failure(errno: 5, text: "Input/output error")), at: 0.07)
        #expect(refused == [.rejected("the camera's own tracking was not switched off (EIO: Input/output error): it may steer against dockd")])
        #expect(text(driver.tick(at: 0.2).bytes).hasPrefix("G "), "no second try: polls go on")
    }

    @Test func theCameraTrackingIsReadFirstAndPutBackAsItWasWhereTheProfileSaysHow() {
        var profile = Self.tiny2
        // The Tiny 2 reads its mode at byte 0x18 and its sub-mode at 0x1c of a status block,
        // and is set by the tag 16 02 <mode> <sub-mode>.
        profile.aiTrackingOff?.restore = "1602{24}{28}"
        var settings = V4L2CameraDriver.Settings()
        settings.profiles = [profile]
        var driver = V4L2CameraDriver(settings: settings)
        _ = driver.start(at: 0)
        _ = driver.receive(line(.control(.init(id: Self.pan, minimum: -468_000, maximum: 468_000, step: 3600, defaultValue: 0, flags: 0)))
                           + line(.card("OBSBOT Tiny 2")), at: 0.01)
        var camera = ScriptedCamera()
        camera.extensionUnitState = [UInt8](repeating: 0, count: 60)
        camera.extensionUnitState[0x18] = 2
        camera.extensionUnitState[0x1c] = 1
        _ = run(&driver, &camera, from: 0.01, to: 0.6, first: driver.tick(at: 0.01).bytes)
        #expect(camera.sets == ["S 0.2 \(Self.pan)=0", "R 2 6", "X 2 6 60 restore 16 2 2 1"])
    }

    @Test func restoreTemplatesFillTheirBytesFromTheReadAndRefuseWhatTheyCannot() throws {
        let xu = V4L2Profile.ExtensionControl(guid: "faf1672d-b71b-4793-8c91-7b1c9b7f95f8", unit: 9, selector: 2, size: 4, off: "00", restore: "{0}{1}")
        #expect(xu.restoreBytes(read: [1, 5, 9, 9]) == [1, 5, 0, 0])
        #expect(xu.restoreBytes(read: [1]) == nil, "a byte the read lacks")
        for bad in ["{x}", "1", "{0", "zz", "0102030405"] {
            var broken = xu
            broken.restore = bad
            #expect(broken.restoreBytes(read: [1, 2, 3, 4]) == nil, "\(bad)")
        }
        var profile = Self.tiny2
        profile.aiTrackingOff?.restore = "16{99}"
        #expect(throws: V4L2ProfileError.self) { try profile.validate() }
    }

    @Test func theShippedProfilesLoadAndEveryFigureSaysWhereItComesFrom() throws {
        let profiles = try V4L2Profile.all(searchPaths: [Fixtures.root.path + "/profiles/v4l2"])
        #expect(profiles.count >= 3)
        for profile in profiles { try profile.validate() }
        #expect(V4L2Profile.matching("OBSBOT Tiny 2: OBSBOT Tiny 2 St", in: profiles)?.name == "obsbot-tiny-2")
        #expect(V4L2Profile.matching("Insta360 Link: Insta360 Link", in: profiles)?.name == "insta360-link")
        #expect(V4L2Profile.matching("HD Pro Webcam C920", in: profiles) == nil)
    }

    @Test func theWireReadsBackWhatItWrites() {
        for request in [V4L2Wire.Request.query, .get([Self.pan, Self.tilt]), .set([(Self.pan, Int32(-3600)), (Self.tilt, Int32(7200))], spacing: 0.1),
                        .extensionUnit(guid: Array(0..<16), unit: 9, selector: 2, data: [0, 0xff], restore: nil),
                        .extensionUnit(guid: Array(0..<16), unit: 9, selector: 2, data: [0, 0xff], restore: [1, 0]),
                        .extensionUnitRead(guid: Array(0..<16), unit: 2, selector: 6)] {
            let bytes = V4L2Wire.encode(request)
            #expect(V4L2Wire.request(Substring(text(bytes.dropLast()))) == request)
        }
        #expect(V4L2Wire.reply(Substring(text(V4L2Wire.encode(.unitRead(2, [0x16, 2, 0])).dropLast()))) == .unitRead(2, [0x16, 2, 0]))
        #expect(V4L2Wire.request("S 1=x") == nil && V4L2Wire.reply("V 1") == nil)
        // A spacing no driver asks (the link's thread would sleep on it, or trap making a timespec of it).
        for spacing in ["inf", "nan", "1e300", "-1", "10.5"] { #expect(V4L2Wire.request(Substring("S \(spacing) 1=2")) == nil, "\(spacing)") }
        #expect(V4L2Wire.request("S 2 1=2") != nil)
        // A restore of another length than the set would be cut or refused by the camera.
        #expect(V4L2Wire.request("X 000102030405060708090a0b0c0d0e0f 9 2 00ff 01") == nil)
    }
}
