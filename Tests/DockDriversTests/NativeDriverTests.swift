import DockDrivers
import DockProtocol
import DockSim
import Testing

/// The native driver against the pure simulated stand in virtual time: the driver's 20 ms duties
/// run as dockd runs them, and the stand's bytes come back as they would over the link.
private struct NativeLink {
    var driver: NativeDriver
    var stand = SimulatedStand()
    var micros: UInt64 = 0
    var reports: [DriverReport] = []
    /// When the stand received each run of bytes from the host, s.
    var hostWrites: [Double] = []
    var time: Double { Double(micros) / 1e6 }

    init(heartbeatTimeoutMs: UInt16 = 500) {
        driver = NativeDriver(heartbeatTimeoutMs: heartbeatTimeoutMs)
        let hello = driver.start(at: 0)
        hostWrites.append(0)
        deliver(stand.receive(hello, atMicros: 0))
    }

    mutating func deliver(_ bytes: [UInt8]) { reports += driver.receive(bytes, at: time) }

    /// Every frame the host wrote, decoded.
    var hostFrames: [Frame] = []

    /// One driver tick now; its bytes reach the stand at once.
    mutating func tick() {
        let duty = driver.tick(at: time)
        reports += duty.reports
        if !duty.bytes.isEmpty { hostWrites.append(time) }
        carry(duty.bytes)
    }

    mutating func send(_ command: Message) {
        hostWrites.append(time)
        carry(driver.send(command, at: time))
    }

    /// The host's bytes: decoded into `hostFrames`, then to the stand at once.
    private mutating func carry(_ bytes: [UInt8]) {
        var decoder = FrameDecoder()
        hostFrames += decoder.feed(bytes).compactMap { try? $0.get() }
        deliver(stand.receive(bytes, atMicros: micros))
    }

    mutating func apply(_ action: SimAction) { deliver(stand.apply(action, atMicros: micros)) }

    mutating func run(_ seconds: Double) {
        let end = micros + UInt64(seconds * 1e6)
        while micros < end {
            micros += 1000
            deliver(stand.advance(toMicros: micros))
            if micros % 20_000 == 0 { tick() }
        }
    }

    var refusals: [String] { reports.compactMap { if case .refused(_, let reason) = $0 { reason } else { nil } } }

    private var velocitySteps = 0

    /// A moving stand for `seconds`: a new VELOCITY every 10 ms (a FEEDBACK's control step), each
    /// differing from the last. Returns when each one that asked for an ACK was sent.
    @discardableResult
    mutating func move(for seconds: Double) -> [Double] {
        var probes: [Double] = []
        for _ in 0..<Int((seconds * 100).rounded()) {
            let before = hostFrames.count
            send(.velocity([AxisValue(.yaw, 0.1 + Float(velocitySteps % 2) * 0.01)]))
            if hostFrames.dropFirst(before).contains(where: \.ackRequested) { probes.append(time) }
            velocitySteps += 1
            run(0.01)
        }
        return probes
    }
}

@Suite("Native driver: link timing")
struct NativeDriverTests {
    @Test func aHealthyLinkMeasuresAShortRoundTripWithoutDisturbingTheStand() throws {
        var link = NativeLink()
        link.run(2)
        let roundTrip = try #require(link.driver.counters.roundTrip.smoothed)
        #expect(roundTrip < 0.005)
        #expect(link.stand.hostCounters.totalErrors == 0)
        #expect(link.refusals.isEmpty)
        #expect(link.driver.counters.retries == 0)
    }

    /// Idle, only HEARTBEATs carry the probes: two a second while the round trip holds, every one
    /// (10 a second) once it moves. In motion the VELOCITYs do: twice a second, every 50 ms once it moves.
    @Test("a slow stand's round trip is measured within seconds", arguments: [(0.15, false), (0.4, false), (0.15, true), (0.4, true)])
    func measuresASlowStand(delay: Double, moving: Bool) throws {
        var link = NativeLink()
        link.run(0.5)
        link.apply(.slow(delayMs: delay * 1000, seconds: 60))
        if moving {
            link.move(for: 2)
        } else {
            link.run(4)
        }
        let roundTrip = try #require(link.driver.counters.roundTrip.smoothed)
        #expect(abs(roundTrip - delay) < 0.1 * delay, "smoothed round trip \(roundTrip) s for a \(delay) s delay")
        #expect(link.driver.counters.roundTrip.largest < delay + 0.03)
    }

    /// A stand at rest hears only HEARTBEATs, ten a second; each asking for an ACK woke dockd for
    /// its read. Two a second ask, and between them the driver awaits no answer (the host then
    /// leaves the link to its batch reads).
    @Test func anIdleStandsHeartbeatsAskForAnAckTwiceASecond() throws {
        var link = NativeLink()
        link.run(1)
        link.hostFrames = []
        link.run(5)
        let heartbeats = link.hostFrames.filter { if case .heartbeat = $0.message { true } else { false } }
        let asking = heartbeats.filter(\.ackRequested).count
        #expect(heartbeats.count >= 45, "\(heartbeats.count) heartbeats in 5 s")
        #expect((9...11).contains(asking), "\(asking) of \(heartbeats.count) heartbeats asked for an ACK in 5 s")
        #expect(!link.driver.awaitsAnswer)
        #expect(link.driver.counters.roundTrip.smoothed != nil)
    }

    /// A stand tracking a subject hears a new VELOCITY at every FEEDBACK (100 a second here); each
    /// asking for an ACK wakes dockd once more for its read. While the round trip holds, two a second ask.
    @Test func aMovingStandsVelocitiesAskForAnAckTwiceASecondOnASteadyLink() throws {
        var link = NativeLink()
        link.run(1)
        link.hostFrames = []
        link.move(for: 5)
        let velocities = link.hostFrames.filter { if case .velocity = $0.message { true } else { false } }
        let asking = velocities.filter(\.ackRequested).count
        #expect(velocities.count == 500)
        #expect((9...11).contains(asking), "\(asking) of \(velocities.count) VELOCITYs asked for an ACK in 5 s")
        #expect(link.driver.counters.roundTrip.smoothed != nil)
    }

    /// A link that slows while the stand moves: the first probe since is answered a round trip
    /// later, and the probes after it go every 50 ms from the moment it is overdue, not half a
    /// second later, so the new round trip is measured about as fast as when every VELOCITY probed.
    @Test func aProbeOverdueOnASlowedLinkBringsBackProbingEvery50ms() throws {
        var link = NativeLink()
        link.run(1)
        link.move(for: 1)
        link.apply(.slow(delayMs: 200, seconds: 60))
        let slowed = link.time
        let probes = link.move(for: 1.5)
        let first = try #require(probes.first)
        #expect(first - slowed <= 0.5 + 0.01, "the first probe since the slowing at \(first - slowed) s")
        // While its answer is 200 ms away: a probe every 50 ms once it is overdue (before, none
        // until the next steady probe, 0.5 s after it).
        let meanwhile = probes.filter { $0 > first && $0 < first + 0.2 }
        #expect(meanwhile.count >= 3, "\(meanwhile.count) probes in the 0.2 s after the first since the slowing")
        let roundTrip = try #require(link.driver.counters.roundTrip.smoothed)
        #expect(roundTrip > 0.1, "smoothed round trip \(roundTrip) s, 1.5 s after the link slowed to 0.2 s")
    }

    /// A link that slowed at rest, measured from the heartbeats to 85 % of its new round trip when a
    /// move begins: the move's probes go on until the estimate is within a twentieth of it (the
    /// controller predicts the move across it; short, it overshoots).
    @Test func aMoveBegunWhileTheRoundTripIsStillCatchingUpMeasuresItWithinATwentieth() throws {
        var link = NativeLink()
        link.run(1)
        link.apply(.slow(delayMs: 200, seconds: 60))
        for _ in 0..<100 where (link.driver.counters.roundTrip.smoothed ?? 0) <= 0.17 { link.run(0.05) }
        try #require((link.driver.counters.roundTrip.smoothed ?? 0) > 0.17)
        link.move(for: 1)
        let roundTrip = try #require(link.driver.counters.roundTrip.smoothed)
        #expect(roundTrip >= 0.19, "smoothed round trip \(roundTrip) s after a 1 s move on a link slowed to 0.2 s")
    }

    /// What the host reads a link in batches by (`awaitsAnswer`): true from a probe or a command
    /// until its ACK comes (20 ms later on this link), false between.
    @Test func theDriverAwaitsAnAnswerFromAProbeOrACommandUntilItsAck() {
        var link = NativeLink()
        link.run(1)
        link.apply(.slow(delayMs: 20, seconds: 60))
        link.run(3)  // the round trip measured: heartbeats probe twice a second again
        var probesSeen = 0, idleChecked = 0
        var lastProbe = -Double.infinity
        for _ in 0..<2000 {
            let sent = link.hostFrames.count
            link.run(0.001)
            if link.hostFrames[sent...].contains(where: \.ackRequested) {
                probesSeen += 1
                lastProbe = link.time
                #expect(link.driver.awaitsAnswer, "a probe just sent at \(link.time)")
            } else if link.time - lastProbe > 0.05 && link.time - lastProbe < 0.1 {
                idleChecked += 1
                #expect(!link.driver.awaitsAnswer, "\(link.time - lastProbe) s after the last probe")
            }
        }
        #expect((3...6).contains(probesSeen), "\(probesSeen) probes in 2 s at rest")
        #expect(idleChecked > 100)
        link.send(.led(LedCommand(mode: .on)))
        #expect(link.driver.awaitsAnswer)
        link.run(0.05)
        #expect(!link.driver.awaitsAnswer || link.time - lastProbe < 0.05)
    }

    @Test func aLateAcknowledgementStillAnswersItsCommand() {
        // 250 ms late before any slow round trip was measured: the STOP is resent after 100 ms,
        // and the first copy's late ACK settles it; nothing is reported failed.
        var link = NativeLink()
        link.run(0.5)
        link.apply(.slow(delayMs: 250, seconds: 60))
        link.send(.stop)
        link.run(1.0)
        #expect(link.driver.counters.retries >= 1)
        #expect(link.driver.counters.commandsFailed == 0)
        #expect(link.refusals.isEmpty)
    }

    @Test func onAMeasuredSlowLinkCommandsAreNotResentNeedlessly() {
        var link = NativeLink()
        link.run(0.5)
        link.apply(.slow(delayMs: 250, seconds: 60))
        link.run(2)  // the round trip is measured by now
        let before = link.driver.counters.retries
        for _ in 0..<5 {
            link.send(.stop)
            link.run(0.5)
        }
        #expect(link.driver.counters.retries == before)
        #expect(link.driver.counters.commandsFailed == 0)
    }

    @Test func aStandThatNeverAnswersStillFailsTheCommandAfterThreeResends() {
        var link = NativeLink()
        link.run(0.5)
        link.apply(.silent(seconds: 5))
        link.send(.stop)
        link.run(1.0)
        #expect(link.driver.counters.retries == 3)
        #expect(link.driver.counters.commandsFailed == 1)
        #expect(link.refusals == ["no acknowledgement after 4 tries"])
    }
}
