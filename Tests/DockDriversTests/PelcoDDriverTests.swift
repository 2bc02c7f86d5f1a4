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

    @Test func aUnitThatStopsAnsweringIsAskedAgainOnAReconnect() {
        var driver = PelcoDDriver(settings: .init())
        _ = driver.start(at: 0)
        _ = driver.receive([0xFF, 0x01, 0x00, 0x59, 0x00, 0x00, 0x5A], at: 0.06)
        #expect(!driver.standIsMute, "it answered: its silence means something")
        var reports: [DriverReport] = []
        for step in 1...25 { reports += driver.tick(at: 0.06 + Double(step) * 0.1).reports }
        #expect(reports.contains { if case .reconnect = $0 { true } else { false } }, "2 s without an answer")
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
