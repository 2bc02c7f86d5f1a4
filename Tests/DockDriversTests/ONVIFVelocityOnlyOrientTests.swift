import DockCore
import DockDrivers
import DockProtocol
import StandEngine
import Testing
import VirtualTime

/// A camera that takes only ContinuousMove and Stop is oriented by dockd's own controller, which
/// closes the loop on GetStatus with rates (issue 24). Under the virtual host, as dockd runs it,
/// against a camera that turns (`EmulatedONVIFCamera`, continuous moves only) and acts on each
/// request some time after it came: the orientation must complete, and the head come to rest
/// within the tolerance, however late the camera acts on what it is told.
@Suite struct ONVIFVelocityOnlyOrientTests {
    struct Landing: Sendable, CustomStringConvertible {
        var state: MotionProgress.State?
        var yawError: Double, pitchError: Double
        var description: String { "\(state.map { "\($0)" } ?? "not ended"), off by (\(yawError), \(pitchError)) rad" }
    }

    /// Orients to (−0.4, 0.3) rad over 1.5 s from (0, 0), as test_onvif_driver.py does, and waits for the head to rest.
    static func orient(latencies: [UInt64]) throws -> Landing {
        let driver = try DriverTable.definition("onvif").make([:], heartbeatTimeoutMs: ProtocolTiming.defaultHeartbeatTimeoutMs)
        var host = VirtualHost(driver: driver, peer: EmulatedONVIFCamera(motion: [.continuous], latencies: latencies), name: "virtual:onvif")
        let connected = host.connect(timeout: 10)
        #expect(connected)
        host.run(for: 0.5)
        guard case .motion(let id)? = try host.send(.orient([.yaw: -0.4, .pitch: 0.3], relative: false, duration: 1.5)) else {
            Issue.record("the orientation was not taken")
            return Landing(state: nil, yawError: .infinity, pitchError: .infinity)
        }
        var state: MotionProgress.State?
        host.run(until: host.now + 20) { host in
            host.notifications.contains { if case .motionProgress(let p) = $0.notification, p.id == id, p.state.isFinal { true } else { false } }
        }
        for case .motionProgress(let p) in host.notifications.map(\.notification) where p.id == id && p.state.isFinal { state = p.state }
        host.run(until: host.now + 5) { $0.peer.still }
        return Landing(state: state, yawError: host.peer.yaw + 0.4, pitchError: host.peer.pitch - 0.3)
    }

    /// µs from a request to when the camera acts on it and answers: an idle loopback camera; one a
    /// steady 80 ms late; and one as a starved emulator answers (beside CPU hogs, 20–160 ms, unevenly).
    static let cameras: [(String, [UInt64])] = [
        ("idle", [3000]),
        ("steadily late", [80_000]),
        ("unevenly late", [20_000, 140_000, 50_000, 110_000, 30_000, 160_000, 70_000]),
        ("later still, unevenly", [40_000, 250_000, 90_000, 200_000, 30_000, 220_000]),
    ]

    @Test(arguments: 0..<cameras.count)
    func theOrientationCompletesAndTheHeadRestsWithinTheTolerance(_ camera: Int) throws {
        let (name, latencies) = Self.cameras[camera]
        let landing = try Self.orient(latencies: latencies)
        let tolerance = MotionConfiguration().positionTolerance
        #expect(landing.state == .completed, "\(name): \(landing)")
        #expect(abs(landing.yawError) < tolerance && abs(landing.pitchError) < tolerance, "\(name): \(landing)")
    }

    /// Issue 24: the orientation ends with the fine approach, the head at rest within its band
    /// (3e-4 rad), not anywhere within the tolerance (without it these cameras landed 7.8e-4–2.5e-3
    /// rad off).
    @Test(arguments: 0..<cameras.count)
    func theHeadRestsWithinTheFineBand(_ camera: Int) throws {
        let (name, latencies) = Self.cameras[camera]
        let landing = try Self.orient(latencies: latencies)
        let band = MotionConfiguration().fineBand
        #expect(landing.state == .completed, "\(name): \(landing)")
        #expect(abs(landing.yawError) < band && abs(landing.pitchError) < band, "\(name): \(landing)")
    }
}
