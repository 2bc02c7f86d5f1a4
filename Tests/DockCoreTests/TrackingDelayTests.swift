import DockCore
import Testing

@Suite("Tracking across a slow link")
struct TrackingDelayTests {
    /// Plain proportional control, so the gain shows in the command.
    private func command(roundTrip: Double) -> Double {
        var configuration = TrackingControlConfiguration.tuned
        configuration.deadBand = 0
        configuration.commandSmoothing = 0
        var controller = TrackingController(configuration: configuration)
        controller.roundTrip = roundTrip
        let target = TrackingTarget(yaw: 0.1, pitch: 0, time: 1)
        return controller.command(target: target, positions: [.yaw: 0, .pitch: 0], at: 1)[.yaw] ?? .nan
    }

    @Test("a stand on time keeps the tuned gain")
    func onTime() {
        #expect(abs(command(roundTrip: 0.01) - 6 * 0.1) < 1e-9)
    }

    @Test("a 200 ms round trip bounds the gain to delayMargin / round trip")
    func late() {
        #expect(abs(command(roundTrip: 0.2) - 0.5 / 0.2 * 0.1) < 1e-9)
    }
}
