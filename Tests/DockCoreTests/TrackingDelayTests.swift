import DockCore
import Testing

@Suite("Tracking across a slow link")
struct TrackingDelayTests {
    /// Plain proportional control, so the gain shows in the command.
    private func command(loopDelay: Double) -> Double {
        var configuration = TrackingControlConfiguration.tuned
        configuration.deadBand = 0
        configuration.commandSmoothing = 0
        var controller = TrackingController(configuration: configuration)
        controller.loopDelay = loopDelay
        let target = TrackingTarget(yaw: 0.1, pitch: 0, time: 1)
        return controller.command(target: target, positions: [.yaw: 0, .pitch: 0], at: 1)[.yaw] ?? .nan
    }

    @Test("a stand on time keeps the tuned gain")
    func onTime() {
        #expect(abs(command(loopDelay: 0.01) - 6 * 0.1) < 1e-9)
    }

    @Test("a loop 200 ms late bounds the gain to delayMargin / its delay")
    func late() {
        #expect(abs(command(loopDelay: 0.2) - 0.5 / 0.2 * 0.1) < 1e-9)
    }
}
