import DockDrivers
import DockProtocol
import StandEngine
import Testing

/// The skeleton is a working driver: made from its definition, run by the engine that runs every
/// driver, connected, steered, refused and stopped. A copy starts from something that works.
@Suite struct SkeletonDriverTests {
    func text(_ out: EngineOutput) -> String { String(decoding: out.bytes, as: UTF8.self) }
    func bytes(_ line: String) -> [UInt8] { Array((line + "\n").utf8) }

    @Test func itIsMadeFromItsDeclaredOptions() throws {
        #expect(throws: DriverFailure.self) { try SkeletonDriver.definition.make(texts: ["poll_hz": "0"], heartbeatTimeoutMs: 500) }
        #expect(throws: DriverFailure.self) { try SkeletonDriver.definition.make(texts: ["address": "1"], heartbeatTimeoutMs: 500) }
        #expect(try SkeletonDriver.definition.make(texts: ["poll_hz": "10"], heartbeatTimeoutMs: 500).name == "skeleton")
    }

    @Test func theEngineConnectsSteersHearsARefusalAndStopsIt() throws {
        let driver = try SkeletonDriver.definition.make([:], heartbeatTimeoutMs: 500)
        var engine = StandEngine(driver: driver, settings: EngineSettings(), fallbackName: "tcp:skeleton")
        #expect(text(engine.handle(.linkOpened, at: 0)) == "STOP\nHELLO\n", "stopped on every connect, then asked who it is")
        _ = engine.handle(.received(bytes("ID SK-1")), at: 0.01)
        _ = engine.handle(.received(bytes("POS 0 0 0 0")), at: 0.02)
        #expect(engine.linkState == .connected && engine.standID == "SK-1")
        #expect(text(engine.handle(.tick, at: 0.1)).contains("POS?"), "polled at its rate")

        let drive = engine.handle(.command(.velocity([.yaw: 0.5]), from: ClientRef(id: 1), force: false, token: 1), at: 0.11)
        #expect(drive.replies.first?.result == .success(.ok))
        #expect(text(drive).hasPrefix("RATE "))

        let refused = engine.handle(.received(bytes("ERR motor too hot")), at: 0.12)
        #expect(refused.notifications.contains { if case .fault(let f) = $0 { f.text.contains("motor too hot") } else { false } })

        #expect(text(engine.handle(.shutdown, at: 0.2)).contains("STOP\n"), "the motors stop when dockd does")
    }
}
