@testable import DockDrivers
import DockProtocol
import StandEngine
import Testing

/// The Pelco-D driver under the engine, byte by byte: made from its options, connected with and
/// without position queries, steered, and stopped.
@Suite struct PelcoDDriverTests {
    static let stop: [UInt8] = [0xFF, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01]
    static let queryPan: [UInt8] = [0xFF, 0x01, 0x00, 0x51, 0x00, 0x00, 0x52]

    func engine(_ options: [String: String]) throws -> StandEngine {
        let driver = try PelcoDDriver.definition.make(texts: options, heartbeatTimeoutMs: 500)
        return StandEngine(driver: driver, settings: EngineSettings(), fallbackName: "tty:pelco")
    }

    @Test func itIsMadeFromItsDeclaredOptions() throws {
        #expect(throws: DriverFailure.self) { try PelcoDDriver.definition.make(texts: ["address": "0"], heartbeatTimeoutMs: 500) }
        #expect(throws: DriverFailure.self) { try PelcoDDriver.definition.make(texts: ["address": "256"], heartbeatTimeoutMs: 500) }
        #expect(throws: DriverFailure.self) { try PelcoDDriver.definition.make(texts: ["position_queries": "sometimes"], heartbeatTimeoutMs: 500) }
        let made = try #require(try PelcoDDriver.definition.make(texts: ["address": "7", "position_queries": "off"], heartbeatTimeoutMs: 500) as? PelcoDDriver)
        #expect(made.settings.address == 7 && made.settings.queries == .off && made.settings.maxSpeed == 0.6)
        #expect(PelcoDDriver.definition.defaultBaud == 2400 && PelcoDDriver.definition.hotplug == nil)
    }

    @Test func withoutQueriesItConnectsAtOnceSteersByRatesAndStopsOnShutdown() throws {
        var engine = try engine(["position_queries": "off"])
        #expect(engine.handle(.linkOpened, at: 0).bytes == Self.stop, "stopped on every connect, and nothing asked")
        _ = engine.handle(.tick, at: 0.02)
        #expect(engine.linkState == .connected && engine.standID == "pelco-d-1")
        // 0.3 rad/s to the left, reached at the axis's acceleration: of a top 0.6 rad/s, speed 31.5 → 0x20.
        let drive = engine.handle(.command(.velocity([.yaw: 0.3]), from: ClientRef(id: 1), force: false, token: 1), at: 0.05)
        #expect(drive.replies.first?.result == .success(.ok))
        var sent = drive.bytes
        for step in 1...6 { sent += engine.handle(.tick, at: 0.05 + Double(step) * 0.05).bytes }
        #expect(sent.count % 7 == 0 && sent.count > 0)
        let messages = stride(from: 0, to: sent.count, by: 7).map { Array(sent[$0..<$0 + 7]) }
        #expect(messages.allSatisfy { $0[3] == 0x04 }, "left, never a stop within the rate's deadman")
        #expect(messages.last == [0xFF, 0x01, 0x00, 0x04, 0x20, 0x00, 0x25])
        #expect(engine.linkState == .connected, "a unit that says nothing is not lost")
        let shutdown = engine.handle(.shutdown, at: 1.2)
        #expect(shutdown.bytes.suffix(7) == Self.stop[...], "the motors stop when dockd does")
    }

    @Test func itAsksWhereItPointsAndReadsTheAnswer() throws {
        var engine = try engine([:])
        #expect(engine.handle(.linkOpened, at: 0).bytes == Self.stop + Self.queryPan)
        // 90.00° to the right: dockd's yaw grows to the left.
        _ = engine.handle(.received([0xFF, 0x01, 0x00, 0x59, 0x23, 0x28, 0xA5]), at: 0.06)
        #expect(engine.linkState == .connected)
        let yaw = try #require(engine.lastFeedback?.feedback.axes.first { $0.axis == .yaw }?.position)
        #expect(abs(Double(yaw) + Double.pi / 2) < 1e-4)
        var polled: [UInt8] = []
        for step in 1...4 { polled += engine.handle(.tick, at: 0.06 + Double(step) * 0.11).bytes }
        #expect(polled.count == 28 && polled.filter { $0 == 0x51 }.count == 2 && polled.filter { $0 == 0x53 }.count == 2, "polled, pan and tilt in turn")
    }

    @Test func aUnitThatDoesNotAnswerIsEstimatedOrRefusedAsConfigured() throws {
        var auto = try engine([:])
        _ = auto.handle(.linkOpened, at: 0)
        _ = auto.handle(.tick, at: 0.3)
        #expect(auto.linkState != .connected, "the answer is waited for")
        _ = auto.handle(.tick, at: 0.55)
        #expect(auto.linkState == .connected)

        var required = try engine(["position_queries": "on"])
        _ = required.handle(.linkOpened, at: 0)
        _ = required.handle(.tick, at: 0.55)
        #expect(required.linkState != .connected)
        #expect(required.lastError?.contains("no answer to the pan position query") == true)
    }

    static func panAnswer(centidegrees: Int) -> [UInt8] {
        let body: [UInt8] = [0x01, 0x00, 0x59, UInt8(centidegrees >> 8), UInt8(centidegrees & 0xFF)]
        return [0xFF] + body + [body.reduce(0, &+)]
    }

    /// One answer lost to noise at connect does not make a unit that answers one driven on an
    /// estimate: the query goes again within the wait.
    @Test func theQueryIsAskedAgainWhileTheAnswerIsAwaited() throws {
        var engine = try engine([:])
        #expect(engine.handle(.linkOpened, at: 0).bytes == Self.stop + Self.queryPan)
        var asked: [UInt8] = []
        for step in 1...2 { asked += engine.handle(.tick, at: Double(step) * 0.17).bytes }
        #expect(asked == Self.queryPan + Self.queryPan, "twice more within the half second")
        _ = engine.handle(.received(Self.panAnswer(centidegrees: 1000)), at: 0.45)
        #expect(engine.linkState == .connected && engine.identity?.hardware == "pose read back (position queries)")
    }

    /// A unit that answered and falls silent (a cut pair, a busy unit) loses its link, and is not
    /// then taken for a unit without queries and driven on an estimate from (0, 0): each connect
    /// requires its answer until it comes.
    @Test func aUnitThatAnsweredIsNeverDrivenOnAnEstimateAfterward() throws {
        var engine = try engine([:])
        _ = engine.handle(.linkOpened, at: 0)
        _ = engine.handle(.received(Self.panAnswer(centidegrees: 1000)), at: 0.06)
        #expect(engine.linkState == .connected)
        var time = 0.06, closed: String?
        while closed == nil && time < 3 { time += 0.05; closed = engine.handle(.tick, at: time).closeLink }
        #expect(closed?.contains("link lost") == true && time < 1.2, "silent for the link's limit (1 s): lost")
        _ = engine.handle(.linkClosed(reason: "closed"), at: time)
        _ = engine.handle(.linkOpened, at: time + 1)
        for step in 1...12 { _ = engine.handle(.tick, at: time + 1 + Double(step) * 0.05) }
        #expect(engine.linkState != .connected, "no answer: not connected on an estimate")
        #expect(engine.lastError?.contains("answered its position queries before") == true, "\(engine.lastError ?? "")")
        _ = engine.handle(.linkClosed(reason: "closed"), at: time + 2)
        _ = engine.handle(.linkOpened, at: time + 3)
        _ = engine.handle(.received(Self.panAnswer(centidegrees: 1000)), at: time + 3.05)
        #expect(engine.linkState == .connected && engine.identity?.hardware == "pose read back (position queries)")
    }

    /// Drives at every control step would queue on a 2400-baud pair: one every `driveInterval` at
    /// most, the newest speeds; a stop at once; the speeds in force again every second.
    @Test func drivesArePacedStopsAreNotAndTheSpeedsAreSentAgain() throws {
        var driver = PelcoDDriver(settings: .init(address: 1, queries: .off))
        _ = driver.start(at: 0)
        _ = driver.tick(at: 0.01)
        var sent: [(Double, [UInt8])] = []
        var time = 0.2
        for step in 0..<20 {  // a new rate every 20 ms, for 0.4 s
            time = 0.2 + Double(step) * 0.02
            let bytes = driver.send(.velocity([AxisValue(.yaw, Float(0.05 + 0.02 * Double(step)))]), at: time) + driver.tick(at: time + 0.001).bytes
            if !bytes.isEmpty { sent.append((time, bytes)) }
        }
        #expect(sent.count >= 4 && sent.count <= 5, "\(sent.count) drives in 0.4 s")
        #expect(zip(sent, sent.dropFirst()).allSatisfy { $1.0 - $0.0 >= PelcoDDriver.driveInterval - 1e-9 })
        let stop = driver.send(.stop, at: time + 0.005)
        #expect(stop == Self.stop, "a stop goes at once")
        var again: [UInt8] = []
        var t = time + 0.005
        while t < time + 1.1 { t += 0.05; again += driver.tick(at: t).bytes }
        #expect(again == Self.stop, "the stop again a second later")
    }

    @Test func garbageAndOtherUnitsAreCountedNotFollowed() throws {
        var driver = PelcoDDriver(settings: .init())
        _ = driver.start(at: 0)
        let reports = driver.receive([0x00, 0x13, 0xFF, 0x01, 0x00, 0x59, 0x00, 0x00, 0x00]
                                     + [0xFF, 0x02, 0x00, 0x59, 0x00, 0x10, 0x6B]    // address 2's answer
                                     + [0xFF, 0x01, 0x00, 0x2A, 0x00, 0x00, 0x2B],   // no answer Pelco-D has
                                     at: 0.1)
        #expect(reports.contains(.garbage(.malformed)) && reports.contains(.garbage(.crc)) && reports.contains(.garbage(.unknownType)))
        #expect(!reports.contains { if case .ready = $0 { true } else { false } }, "another unit's answer is not ours")
        #expect(driver.counters.decoder.frames == 0)
    }
}
