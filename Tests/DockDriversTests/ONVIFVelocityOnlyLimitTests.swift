import DockCore
import DockDrivers
import DockProtocol
import StandEngine
import Testing
import VirtualTime

/// A client's position limit holds on a camera that takes only ContinuousMove and Stop and is read
/// by polling GetStatus 0.1–0.3 s apart (issue 24): the controller brakes for the limit on the
/// last read carried to the tick, so the head stops at the limit however late the camera answers.
@Suite struct ONVIFVelocityOnlyLimitTests {
    /// The farthest yaw the head reached while a client drove it at `speed` rad/s toward a client
    /// limit at `limit` rad for 3 s.
    static func farthestYaw(toward limit: Double, speed: Double, latencies: [UInt64]) throws -> Double {
        let driver = try DriverTable.definition("onvif").make([:], heartbeatTimeoutMs: ProtocolTiming.defaultHeartbeatTimeoutMs)
        var host = VirtualHost(driver: driver, peer: EmulatedONVIFCamera(motion: [.continuous], latencies: latencies), name: "virtual:onvif")
        let connected = host.connect(timeout: 10)
        #expect(connected)
        host.run(for: 0.5)
        _ = try host.send(.limits([.yaw: LimitRequest(min: -limit, max: limit)]))
        var farthest = host.peer.yaw
        for _ in 0..<300 {
            if Int((host.now * 100).rounded()) % 10 == 0 { _ = try host.send(.velocity([.yaw: speed])) }
            host.run(for: 0.01)
            farthest = max(farthest, host.peer.yaw)
        }
        return farthest
    }

    @Test(arguments: 0..<ONVIFVelocityOnlyOrientTests.cameras.count)
    func theHeadStopsAtAClientsLimit(_ camera: Int) throws {
        let (name, latencies) = ONVIFVelocityOnlyOrientTests.cameras[camera]
        let farthest = try Self.farthestYaw(toward: 0.08, speed: 1.7, latencies: latencies)
        // 2 mrad: the head rests 0.1 mrad or less past it; braking on the bare reads went up to 2.9 mrad past.
        #expect(farthest <= 0.08 + 0.002, "\(name): the head reached yaw \(farthest) rad, past the limit at 0.08")
        #expect(farthest >= 0.075, "\(name): the head stopped at yaw \(farthest) rad, well short of the limit at 0.08")
    }
}
