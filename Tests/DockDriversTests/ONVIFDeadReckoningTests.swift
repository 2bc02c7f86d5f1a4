import DockDrivers
import DockProtocol
import Testing

/// A camera whose GetStatus gives no pan/tilt position (cheap continuous-only PTZ cameras): its
/// pose is dead-reckoned from the moves sent, from yaw 0, pitch 0 where it was at connect.
@Suite struct ONVIFDeadReckoningTests {
    let camera = ONVIFCameraDriverTests()
    static let positionless = Array(repeating: ONVIFEmulatorReplies.statusWithoutPosition, count: 3)
    static func degrees(_ d: Double) -> Float { Float(d * .pi / 180) }

    static let faults = Array(repeating: ONVIFEmulatorReplies.noStatusFault, count: 3)

    /// Ready after the connect's reads, none of which gave a position (`faults`: each a fault); its
    /// first poll in flight, sent before 0 s (the reads are half a second apart).
    func ready(options: String = ONVIFEmulatorReplies.continuousOnlyOptions, faults: Bool = false) -> (ONVIFCameraDriver, [DriverReport]) {
        camera.ready(options: options, connectStatuses: faults ? Self.faults : Self.positionless, connectCodes: faults ? [500, 500, 500] : [],
                     startingAt: -2)
    }

    /// The driver from `from` to `until` in 10 ms steps, a yaw rate (rad/s) asked every 0.1 s as
    /// the engine does (nil: none), each request answered 4 ms after it went; the last FEEDBACK
    /// (from a reply or a tick).
    func run(_ driver: inout ONVIFCameraDriver, yawRate: Float?, from: Double, until: Double) -> Feedback? {
        var last: Feedback?
        var step = 0
        var t = from
        while t < until {
            var bytes = [UInt8]()
            if let yawRate, step % 10 == 0 { bytes += driver.send(.velocity([AxisValue(.yaw, yawRate)]), at: t) }
            let output = driver.tick(at: t)
            for case .feedback(let f) in output.reports { last = f }
            bytes += output.bytes
            if !bytes.isEmpty {
                let polled = camera.action(bytes) == "/onvif/ptz_service tptz:GetStatus"
                let answer = polled ? ONVIFEmulatorReplies.statusWithoutPosition : ONVIFEmulatorReplies.stop
                for case .feedback(let f) in driver.receive(camera.reply(answer), at: t + 0.004) { last = f }
            }
            step += 1
            t = from + Double(step) * 0.01
        }
        return last
    }

    @Test func aCameraWhoseFirstReadsGiveNoPositionIsReadyWithItsPoseEstimatedAndItsRangeWideEitherWay() throws {
        let (driver, reports) = ready()
        guard case .ready(let identity, let caps)? = reports.first, reports.count == 1 else { Issue.record("\(reports)"); return }
        #expect(identity.hardware.contains("pose estimated from the moves (GetStatus gives no position)"), "\(identity.hardware)")
        // Where in its range the camera was at connect is unknown: it may turn the range's whole
        // width either way (340° of −170…170°, 120° of −30…90°).
        let yaw = try #require(caps.axis(.yaw)), pitch = try #require(caps.axis(.pitch))
        #expect(abs(Double(yaw.max) - 340 * .pi / 180) < 1e-5 && abs(Double(yaw.min) + 340 * .pi / 180) < 1e-5, "\(yaw)")
        #expect(abs(Double(pitch.max) - 120 * .pi / 180) < 1e-5 && abs(Double(pitch.min) + 120 * .pi / 180) < 1e-5, "\(pitch)")
        #expect(!driver.closesPositionLoop, "dockd closes the loop on the estimate with rates")
    }

    @Test func aPositionInOneOfTheConnectsFirstReadsIsThePoseRead() {
        let (_, reports) = camera.ready(connectStatuses: [ONVIFEmulatorReplies.statusWithoutPosition, ONVIFEmulatorReplies.status])
        guard case .ready(let identity, _)? = reports.first, reports.count == 1 else { Issue.record("\(reports)"); return }
        #expect(identity.hardware.contains("pose read back"), "\(identity.hardware)")
    }

    @Test func thePoseIsDeadReckonedFromTheRatesSentFromYawZeroAtConnectAndEndsWithTheStop() throws {
        var (driver, _) = ready()
        let first = driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 1)
        guard case .feedback(let still)? = first.first else { Issue.record("\(first)"); return }
        let atConnect = (try #require(still.axis(.yaw)).position, try #require(still.axis(.pitch)).position)
        #expect(abs(atConnect.0) < 1e-6 && abs(atConnect.1) < 1e-6, "\(still)")
        // 50°/s to the left and 20°/s up: velocities of 0.5 of pan_speed (100°/s) the way pan
        // falls, and a third of tilt_speed (60°/s).
        let sent = driver.send(.velocity([AxisValue(.yaw, Self.degrees(50)), AxisValue(.pitch, Self.degrees(20))]), at: 1.01)
        #expect(camera.body(sent).contains(#"x="-0.500000" y="0.333333""#), "\(camera.body(sent))")
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.stop), at: 1.02)  // counted from its reply
        #expect(camera.action(driver.tick(at: 1.1).bytes) == "/onvif/ptz_service tptz:GetStatus")
        let moving = driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 1.12)
        guard case .feedback(let f)? = moving.first else { Issue.record("\(moving)"); return }
        let yaw = try #require(f.axis(.yaw)), pitch = try #require(f.axis(.pitch))
        #expect(abs(Double(yaw.position) - 5 * .pi / 180) < 1e-5 && abs(Double(pitch.position) - 2 * .pi / 180) < 1e-5, "\(f)")
        #expect(abs(Double(yaw.velocity) - 50 * .pi / 180) < 1e-4 && abs(Double(pitch.velocity) - 20 * .pi / 180) < 1e-4, "\(f)")
        #expect(camera.action(driver.send(.stop, at: 1.2)) == "/onvif/ptz_service tptz:Stop")
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.stop), at: 1.22)
        // FEEDBACK from the estimate on a tick: GetStatus, which gives nothing it needs, goes once a second.
        let stopped = driver.tick(at: 1.3)
        #expect(stopped.bytes.isEmpty)
        guard case .feedback(let g)? = stopped.reports.first else { Issue.record("\(stopped.reports)"); return }
        #expect(abs(Double(try #require(g.axis(.yaw)).position) - 10 * .pi / 180) < 1e-5, "\(g)")
        #expect(g.axis(.yaw)?.velocity == 0 && g.axis(.pitch)?.velocity == 0)
    }

    @Test func thePoseTurnsNoFurtherThanTheRangeIsWideNorThenBackPastWhereItBegan() throws {
        var (driver, _) = ready()
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 1)
        // Right at the top speed (100°/s) for 5 s: 500° asked, but the camera turns 340° at most.
        let right = try #require(run(&driver, yawRate: Self.degrees(-100), from: 1.01, until: 6))
        #expect(abs(Double(try #require(right.axis(.yaw)).position) + 340 * .pi / 180) < 1e-4, "\(right)")
        #expect(right.axis(.yaw)?.velocity == 0, "at the end of its range the head stands")
        // Having turned 340° right, it began at its left end: back left, it stops where it began.
        let left = try #require(run(&driver, yawRate: Self.degrees(100), from: 6, until: 11))
        #expect(abs(Double(try #require(left.axis(.yaw)).position)) < 1e-4, "\(left)")
    }

    @Test func aRelativeOnlyCameraIsOrientedByTranslationsFromTheEstimate() {
        var (driver, _) = ready(options: ONVIFCameraDriverTests.options(without: ["Continuous", "Absolute"]))
        #expect(driver.closesPositionLoop)
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 1)
        // Yaw 0.5 rad from yaw 0: 28.648° left, pan −28.648°, −0.168517 of the generic space's 170° a unit.
        let there = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0.5)]), at: 1.01)
        #expect(camera.action(there) == "/onvif/ptz_service tptz:RelativeMove" && camera.body(there).contains(#"x="-0.168517" y="0.000000""#),
                "\(camera.body(there))")
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.stop), at: 1.02)
        // At its top speed (no Speed sent: 100°/s) it is there 0.29 s later; back is the opposite translation.
        _ = run(&driver, yawRate: nil, from: 1.03, until: 2)
        let back = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: 0)]), at: 2.01)
        #expect(camera.body(back).contains(#"x="0.168517" y="0.000000""#), "\(camera.body(back))")
    }

    /// GetStatus is still asked often enough that its answers keep the link alive: FEEDBACK made
    /// from the estimate is not heard from the camera, and the engine drops a link silent for
    /// `ProtocolTiming.linkTimeout` (1 s). Asked once a second, a camera at rest lost its link.
    @Test func withNoZoomToReadFeedbackComesFromTheEstimateAtPollHzAndGetStatusWithinHalfTheSilenceLimit() {
        var (driver, _) = ready()
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 1)
        var polls: [Double] = [], feedbacks = 0
        var t = 1.01
        while t < 3 {
            let output = driver.tick(at: t)
            feedbacks += output.reports.filter { if case .feedback = $0 { true } else { false } }.count
            if !output.bytes.isEmpty {
                polls.append(t)
                feedbacks += driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: t + 0.004).count
            }
            #expect((driver.nextDeadline ?? .infinity) <= t + 0.105, "FEEDBACK is due at 10 Hz (from a reply 4 ms after a tick)")
            t += 0.01
        }
        let gaps = zip(polls, polls.dropFirst()).map { $1 - $0 }
        #expect(polls.count >= 3 && (gaps.max() ?? .infinity) <= ProtocolTiming.linkTimeout / 2 + 0.011,
                "GetStatus at \(polls): the link's silence limit is \(ProtocolTiming.linkTimeout) s")
        #expect(polls.count <= 4 && feedbacks >= 19, "\(polls.count) GetStatus, \(feedbacks) FEEDBACK in 2 s")
    }

    @Test func aFaultToEachOfTheConnectsReadsIsAReplyWithoutAPositionAndARefusedPollStillGivesFeedback() throws {
        // onvif_simple_server answers GetStatus with ter:NoStatus where the camera has no position.
        var (driver, reports) = ready(faults: true)
        guard case .ready(let identity, _)? = reports.first, reports.count == 1 else { Issue.record("\(reports)"); return }
        #expect(identity.hardware.contains("pose estimated from the moves (GetStatus gives no position: it answered HTTP 500, ter:NoStatus: No PTZ status is available"),
                "\(identity.hardware)")
        // Every poll faults too: the pose goes on from the estimate, and the engine is fed.
        _ = driver.send(.velocity([AxisValue(.yaw, Self.degrees(50))]), at: 1)
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.noStatusFault, status: 500), at: 1.01)  // the poll in flight
        _ = driver.tick(at: 1.01)  // the ContinuousMove
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.stop), at: 1.02)
        #expect(camera.action(driver.tick(at: 1.1).bytes) == "/onvif/ptz_service tptz:GetStatus")
        let polled = driver.receive(camera.reply(ONVIFEmulatorReplies.noStatusFault, status: 500), at: 1.12)
        guard case .feedback(let f)? = polled.first, polled.count == 1 else { Issue.record("\(polled)"); return }
        #expect(abs(Double(try #require(f.axis(.yaw)).position) - 5 * .pi / 180) < 1e-5, "\(f)")
    }

    @Test func oneFaultAtConnectThenAPositionIsThePoseRead() {
        let (_, reports) = camera.ready(connectStatuses: [ONVIFEmulatorReplies.noStatusFault, ONVIFEmulatorReplies.status], connectCodes: [500])
        guard case .ready(let identity, _)? = reports.first, reports.count == 1 else { Issue.record("\(reports)"); return }
        #expect(identity.hardware.contains("pose read back"), "\(identity.hardware)")
    }

    @Test func theConnectsReadsAreHalfASecondApartSoThatATransientIsNotTakenForACameraGivingNoPosition() {
        var (driver, _) = camera.ready(connectStatuses: [])  // its first connect read in flight
        #expect(driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 10).isEmpty)
        #expect(driver.nextDeadline == 10.5)
        #expect(driver.tick(at: 10.1).bytes.isEmpty)
        #expect(camera.action(driver.tick(at: 10.5).bytes) == "/onvif/ptz_service tptz:GetStatus")
        // Polled at its slowest (poll_hz 2), still half a second: the link is lost after 1 s of silence.
        var settings = ONVIFCameraDriver.Settings()
        settings.pollHz = 2
        var (slow, _) = camera.ready(connectStatuses: [], settings: settings)
        _ = slow.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 10)
        #expect(slow.nextDeadline == 10.5)
    }

    @Test func aPositionReadWhileDeadReckonedClosesTheLinkForTheConnectToDecideAgain() {
        var (driver, _) = ready()
        let reports = driver.receive(camera.reply(ONVIFEmulatorReplies.status), at: 1)
        // Not a failure: a camera flapping between the two is reconnected with backoff all the same.
        guard case .reconnect(let why)? = reports.first, reports.count == 1 else { Issue.record("\(reports)"); return }
        #expect(why.hasPrefix("GetStatus gives a position now"), "\(why)")
    }

    /// The pan translations of the RelativeMoves a relative-only camera is sent from `from` to
    /// `until`, each answered 4 ms after it went (GetStatus without a position), a position asked
    /// of it at `from`.
    func translations(_ driver: inout ONVIFCameraDriver, yaw: Double, from: Double, until: Double) -> [String] {
        var sent: [String] = []
        var bytes = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: Float(yaw))]), at: from)
        var t = from
        while t < until {
            bytes += driver.tick(at: t).bytes
            if !bytes.isEmpty {
                let polled = camera.action(bytes) == "/onvif/ptz_service tptz:GetStatus"
                if !polled, let x = camera.body(bytes).firstRange(of: #"x=""#).map({ camera.body(bytes)[$0.upperBound...].prefix { $0 != "\"" } }) {
                    sent.append(String(x))
                }
                _ = driver.receive(camera.reply(polled ? ONVIFEmulatorReplies.statusWithoutPosition : ONVIFEmulatorReplies.stop), at: t + 0.004)
            }
            bytes = []
            t += 0.01
        }
        return sent
    }

    @Test func aRelativeOnlyCamerasTranslationStaysWithinItsSpaceAndTheRestGoesOnceTheCameraIsThere() {
        var (driver, _) = ready(options: ONVIFCameraDriverTests.options(without: ["Continuous", "Absolute"]))
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 1)
        // Yaw −300°: pan 300° from where it was at connect, 1.764706 of the generic space's 170° a
        // unit, within the ±2 units it may turn but beyond the translation space's −1…1: one unit,
        // then (1.7 s later at 100°/s) the rest.
        let sent = translations(&driver, yaw: -300 * .pi / 180, from: 1.01, until: 5)
        #expect(sent == ["1.000000", "0.764706"], "\(sent)")
        // The estimate followed what was sent: back to yaw 0 is the opposite, in two steps too.
        let back = translations(&driver, yaw: 0, from: 5.01, until: 9)
        #expect(back == ["-1.000000", "-0.764706"], "\(back)")
    }

    /// A goal past where the estimate lets the camera go (no further than the range's width from
    /// the lowest and highest pose reached) ends once a step no longer moves the pose: it was sent
    /// again every command interval for as long as nothing else was asked (review).
    @Test func aStepThatNoLongerMovesThePoseEndsTheTargetsRest() {
        var (driver, _) = ready(options: ONVIFCameraDriverTests.options(without: ["Continuous", "Absolute"]))
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 1)
        // Pan 255° right (1.5 units), then 340° left of the start (−2 units): from 1.5 the camera may
        // reach −0.5 at most (the range is 2 units wide), two whole steps away; a third goes nowhere.
        _ = translations(&driver, yaw: -255 * .pi / 180, from: 1.01, until: 5)
        let sent = translations(&driver, yaw: 340 * .pi / 180, from: 5.01, until: 15)
        #expect(sent.count <= 3, "\(sent.count) translations: \(sent.prefix(6))")
    }

    @Test func aRefusedStepEndsTheTargetsRestInsteadOfSendingItAgainAndAgain() {
        var (driver, _) = ready(options: ONVIFCameraDriverTests.options(without: ["Continuous", "Absolute"]))
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 1)
        let first = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: Float(-300 * Double.pi / 180))]), at: 1.01)
        #expect(camera.action(first) == "/onvif/ptz_service tptz:RelativeMove")
        let refused = driver.receive(camera.reply(ONVIFEmulatorReplies.notAuthorized, status: 400), at: 1.02)
        #expect(refused.count == 1, "\(refused)")
        var moves = 0
        var t = 1.03
        while t < 3 {
            let bytes = driver.tick(at: t).bytes
            if !bytes.isEmpty {
                let polled = camera.action(bytes) == "/onvif/ptz_service tptz:GetStatus"
                if !polled { moves += 1 }
                _ = driver.receive(camera.reply(polled ? ONVIFEmulatorReplies.statusWithoutPosition : ONVIFEmulatorReplies.stop), at: t + 0.004)
            }
            t += 0.01
        }
        #expect(moves == 0, "\(moves) moves sent after the refusal")
    }

    @Test func aTranslationStaysWithinTheRangeTheCameraListsForIt() {
        // A camera reading its position, its translation space −0.5…0.5 in pan: from pan 0.25 to
        // −0.75 (yaw 127.5°) is a translation of −1, sent as −0.5.
        let options = ONVIFCameraDriverTests.options(without: ["Continuous", "Absolute"]).replacing(
            "TranslationGenericSpace</tt:URI><tt:XRange><tt:Min>-1</tt:Min><tt:Max>1</tt:Max>",
            with: "TranslationGenericSpace</tt:URI><tt:XRange><tt:Min>-0.5</tt:Min><tt:Max>0.5</tt:Max>")
        var (driver, _) = camera.ready(options: options)
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.status), at: 1)
        let sent = driver.send(.position(duration: 1, targets: [PositionTarget(axis: .yaw, position: Self.degrees(127.5))]), at: 1.01)
        #expect(camera.body(sent).contains(#"x="-0.500000" y="0.000000""#), "\(camera.body(sent))")
    }

    @Test func anAbsoluteOnlyCameraGivingNoPositionIsNotSteered() {
        var (driver, _) = camera.ready(options: ONVIFCameraDriverTests.options(without: ["Continuous", "Relative"]),
                                       connectStatuses: Array(Self.positionless.dropLast()), startingAt: -2)
        let reports = driver.receive(camera.reply(ONVIFEmulatorReplies.statusWithoutPosition), at: 1)
        #expect(reports == [.fatal("profile Profile_1 offers only absolute moves and its GetStatus gives no position: where the camera points cannot be known")])
    }
}
