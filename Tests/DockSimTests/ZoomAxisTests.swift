import DockProtocol
@testable import DockSim
import Testing

/// dock-sim's optical zoom (protocol 1.1, axis 3): a limited axis in magnifications.
@Suite("Zoom axis")
struct ZoomAxisTests {
    static func zoom(_ configuration: inout StandConfiguration) {
        configuration.axes.append(AxisModel(axis: .zoom, continuous: false, min: 1, max: 10, maxSpeed: 2, maxAccel: 8))
    }

    @Test func itStartsWideMovesToAMagnificationAndIsReported() throws {
        var host = TestHost(configure: Self.zoom)
        host.send(.hello(Hello(heartbeatTimeoutMs: 0, host: "tests")), ack: true)
        host.run(0.05)
        let capabilities = host.messages.compactMap { if case .capabilities(let c) = $0 { c } else { nil } }.first
        #expect(capabilities?.axis(.zoom)?.min == 1)
        #expect(abs(Double(try #require(host.last(.zoom)).position) - 1) < 0.01, "wide at power-up")
        host.send(.position(duration: 0, targets: [PositionTarget(axis: .zoom, position: 4, velocity: 0)]), ack: true)
        host.run(3)
        #expect(abs(Double(try #require(host.last(.zoom)).position) - 4) < 0.01)
    }

    @Test func aHostOfProtocol1_0IsNotShownTheZoom() {
        var host = TestHost(configure: Self.zoom)
        host.send(.hello(Hello(minor: 0, heartbeatTimeoutMs: 0, host: "1.0 host")), ack: true)
        host.run(0.05)
        let capabilities = host.messages.compactMap { if case .capabilities(let c) = $0 { c } else { nil } }.first
        #expect(capabilities != nil && capabilities?.axis(.zoom) == nil)
        #expect(!host.feedback.isEmpty && host.feedback.allSatisfy { $0.axis(.zoom) == nil })
    }
}
