import DockCore
import Testing

@Suite("Tracking's dead band")
struct TrackingDeadBandTests {
    /// A still subject seen by a jittery detector: its position is steady (6 mrad off the camera,
    /// inside the dead band), but the rate the tracker estimates from the jitter wanders ±0.05 rad/s
    /// (under the dead band's rate), and the target is 0.2 s old when it is used: predicted across
    /// that, the error leaves the dead band.
    @Test("a still subject whose estimated rate is noise does not restart the camera")
    func noisyRateAtRest() {
        var controller = TrackingController(configuration: .tuned)
        var moved = 0
        for frame in 0..<90 {  // 3 s at 30 fps, a control step per frame
            let time = 1 + Double(frame) / 30
            let rate = (frame / 10) % 2 == 0 ? 0.05 : -0.05
            let target = TrackingTarget(yaw: 0.006, pitch: 0, yawRate: rate, pitchRate: 0, time: time - 0.2)
            let rates = controller.command(target: target, positions: [.yaw: 0, .pitch: 0], at: time)
            if rates.values.contains(where: { $0 != 0 }) { moved += 1 }
        }
        #expect(moved == 0, "the camera moved in \(moved) of 90 steps")
    }

    @Test("a subject that really moves off still restarts it")
    func realMove() {
        var controller = TrackingController(configuration: .tuned)
        _ = controller.command(target: TrackingTarget(yaw: 0.006, pitch: 0, time: 1), positions: [.yaw: 0, .pitch: 0], at: 1)
        let rates = controller.command(target: TrackingTarget(yaw: 0.08, pitch: 0, yawRate: 0.3, pitchRate: 0, time: 1.03),
                                       positions: [.yaw: 0, .pitch: 0], at: 1.05)
        #expect((rates[.yaw] ?? 0) > 0.3)
    }
}
