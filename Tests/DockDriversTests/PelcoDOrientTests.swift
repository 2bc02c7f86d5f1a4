import DockCore
import DockDrivers
import DockProtocol
import StandEngine
import Testing
import VirtualTime

/// A Pelco-D unit oriented by dockd's own controller, which closes the loop with rates on the
/// driver's pose: read back where the unit answers the position queries, estimated from the speeds
/// sent where it does not. Under the virtual host, as dockd runs it, against `PelcoDUnitPeer`.
@Suite struct PelcoDOrientTests {
    static func host(answersQueries: Bool) throws -> VirtualHost<PelcoDUnitPeer> {
        let driver = try DriverTable.definition("pelco-d").make([:], heartbeatTimeoutMs: ProtocolTiming.defaultHeartbeatTimeoutMs)
        var host = VirtualHost(driver: driver, peer: PelcoDUnitPeer(answersQueries: answersQueries), name: "virtual:pelco-d")
        let connected = host.connect(timeout: 5)
        #expect(connected)
        return host
    }

    @Test(arguments: [true, false])
    func theOrientationCompletesAndTheHeadRestsAtTheTarget(_ answersQueries: Bool) throws {
        var host = try Self.host(answersQueries: answersQueries)
        host.run(for: 0.5)
        guard case .motion(let id)? = try host.send(.orient([.yaw: 0.5, .pitch: -0.2], relative: false, duration: 1.5)) else {
            Issue.record("the orientation was not taken")
            return
        }
        let ended = host.run(until: host.now + 20) { host in
            host.notifications.contains { if case .motionProgress(let p) = $0.notification, p.id == id, p.state.isFinal { true } else { false } }
        }
        #expect(ended, "\(host.logs.suffix(4))")
        var state: MotionProgress.State?
        for case .motionProgress(let p) in host.notifications.map(\.notification) where p.id == id && p.state.isFinal { state = p.state }
        #expect(state == .completed, "queries answered: \(answersQueries)")
        let rested = host.run(until: host.now + 5) { $0.peer.still }
        #expect(rested, "the head was stopped")
        // The unit's pan grows to the right and its tilt downwards, in degrees.
        let yaw = -host.peer.pan * Double.pi / 180, pitch = -host.peer.tilt * Double.pi / 180
        let tolerance = MotionConfiguration().positionTolerance
        #expect(abs(yaw - 0.5) < tolerance && abs(pitch + 0.2) < tolerance, "queries answered: \(answersQueries): at (\(yaw), \(pitch))")
    }

    @Test func shutdownStopsAMovingHead() throws {
        var host = try Self.host(answersQueries: false)
        _ = host.command(.velocity([.yaw: 0.3, .pitch: 0.1]))
        host.run(for: 0.5)
        #expect(!host.peer.still)
        host.shutdown()
        host.run(for: 0.1)
        #expect(host.peer.still, "the motors stop when dockd does")
        #expect(host.peer.received.last == [0xFF, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01])
    }

    @Test func garbageOnTheLineNeitherCrashesNorDropsTheLink() throws {
        var host = try Self.host(answersQueries: true)
        host.inject([0x13, 0x37, 0xFF, 0xFF, 0x01, 0x00, 0x59, 0x00, 0x00, 0x00, 0xFF, 0x01, 0x00, 0x77, 0x00, 0x00, 0x78])
        _ = host.command(.velocity([.yaw: -0.2]))
        host.run(for: 1)
        #expect(host.engine.linkState == .connected)
        #expect(host.peer.pan > 0, "still steered (to the right)")
        #expect(host.engine.driverCounters.decoder.totalErrors > 0, "the garbage was counted")
    }
}
