import DockProtocol

/// Seeded generator for tests (the test target does not depend on DockSim).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}

func randomMessage(_ r: inout SplitMix) -> Message {
    func f() -> Float { Float(Int.random(in: -4000...4000, using: &r)) / 256 }
    func axes() -> [Axis] { Axis.allCases.filter { _ in r.unit() < 0.6 } }
    func text(_ n: Int) -> String { String((0..<Int.random(in: 0...n, using: &r)).map { _ in "abcxyz-é✓ 0".randomElement(using: &r)! }) }
    switch Int.random(in: 0..<18, using: &r) {
    case 0: return .hello(Hello(heartbeatTimeoutMs: UInt16.random(in: 0...5000, using: &r), host: text(10)))
    case 1: return .helloReply(HelloReply(heartbeatTimeoutMs: 500, model: text(8), firmware: "1.2.3", hardware: text(4), serial: text(10)))
    case 2: return .capabilities(Capabilities(feedbackHz: 100, imuHz: 50, features: [.imu, .led], buttons: [.tracking], customButtons: 2,
                                              axes: axes().map { AxisCapability(axis: $0, continuous: r.unit() < 0.5, min: f(), max: f(), maxSpeed: f(), maxAccel: f(), countsPerRev: 4096) },
                                              batteries: (0..<Int.random(in: 0...3, using: &r)).map { _ in text(8) }))
    case 3: return .heartbeat(uptimeMs: UInt32.random(in: 0...UInt32.max, using: &r))
    case 4: return .ack(Ack(seq: UInt16.random(in: 0...UInt16.max, using: &r), type: 0x10))
    case 5: return .nack(Nack(seq: 3, type: 0x11, code: .outOfRange, detail: text(60)))
    case 6: return .request(.capabilities)
    case 7: return .velocity(axes().map { AxisValue($0, f()) })
    case 8: return .position(duration: f(), targets: axes().map { PositionTarget(axis: $0, position: f(), velocity: f()) })
    case 9: return .stop
    case 10: return .limits(axes().map { AxisLimits(axis: $0, min: f(), max: f(), maxSpeed: f(), maxAccel: f()) })
    case 11: return .led(LedCommand(mode: .blink, red: 1, green: 2, blue: 3, onMs: 100, offMs: 200))
    case 12: return .motors(enabled: AxisMask(axes()))
    case 13: return .feedback(Feedback(timeUs: UInt64.random(in: 0...1 << 50, using: &r),
                                        axes: axes().map { AxisFeedback(axis: $0, position: f(), velocity: f(), effort: f(), status: [.atMax]) }))
    case 14: return .imu(ImuSample(timeUs: 12, gyro: (f(), f(), f()), accel: (f(), f(), f())))
    case 15: return .event(StandEvent(timeUs: 99, kind: .zoom, factor: f()))
    case 16: return .battery(BatteryState(index: 1, level: 0.5, charge: .charging, low: r.unit() < 0.5))
    default: return .fault(Fault(timeUs: 1, severity: .error, code: .stall, axis: .pitch, text: text(100)))
    }
}
