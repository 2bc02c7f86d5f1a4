@testable import dock_driver_probe
import Testing

/// --calibrate's measurement (pure) against a head simulated here in virtual time.
@Suite struct CalibrationTests {
    /// One axis between end stops at 0 and 2000 units, 200° apart (10 units per degree), turning at
    /// 20 units/s per speed byte (2°/s per byte) — except `slowRuns` of its runs at `slowByte`, at half
    /// that (what a busy host's late answers measured).
    struct Head {
        var units = 1000.0
        var velocity = 0.0
        var slowByte: Int
        var slowRuns: Int

        mutating func obey(_ command: Calibration.Command?) {
            switch command {
            case .drive(_, let positive, let byte)?:
                var speed = 20.0 * Double(byte)
                if byte == slowByte && slowRuns > 0 { speed /= 2; slowRuns -= 1 }
                velocity = positive ? speed : -speed
            case .stop?: velocity = 0
            case nil: break
            }
        }

        mutating func advance(_ seconds: Double) {
            units = min(2000, max(0, units + velocity * seconds))
        }
    }

    func calibrate(_ head: inout Head) -> Calibration {
        var calibration = Calibration(axes: [.init(name: "pan", bytes: 6, spanDegrees: 200)], maxWindow: 0.6, startAt: 0)
        var t = 0.0
        while !calibration.finished && t < 600 {
            head.obey(calibration.step(units: [head.units], at: t))
            head.advance(0.05)
            t += 0.05
        }
        return calibration
    }

    @Test func aByteMeasuredSlowerThanTheOneBelowIsMeasuredAgainNotRaised() throws {
        var head = Head(slowByte: 3, slowRuns: 1)
        let calibration = calibrate(&head)
        try #require(calibration.finished && calibration.failure == nil)
        let speeds = calibration.results[0].speeds
        #expect(speeds.count == 6)
        for (i, speed) in speeds.enumerated() {
            let truth = 2.0 * Double(i + 1)
            #expect(abs(speed - truth) <= 0.05 * truth, "byte \(i + 1): \(speed) deg/s, truly \(truth); \(speeds)")
        }
    }

    @Test func aByteSlowEveryTimeIsRaisedAfterItsRetries() throws {
        var head = Head(slowByte: 3, slowRuns: .max)
        let calibration = calibrate(&head)
        try #require(calibration.finished && calibration.failure == nil)
        let result = calibration.results[0]
        #expect(result.measured[2] == 1 + SpeedOrder.retriesPerByte && result.measured[1] == 1 + SpeedOrder.retriesPerByte,
                "byte 3, then byte 2 below it, each measured again as often as they may: \(result.measured)")
        #expect(result.adjusted == [3])
        #expect(zip(result.speeds, result.speeds.dropFirst()).allSatisfy { $0 < $1 }, "\(result.speeds)")
    }
}
