import DockDrivers
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
        /// Seconds from a command to the head taking it (a busy host, a command lane still busy).
        var lag = 0.0
        /// The command on its way, and when the head takes it.
        var pending: (command: Calibration.Command, at: Double)?
        /// When the head took the last drive (its ACK), nil until it has.
        var driveTakenAt: Double?
        /// It turns as told but its acknowledgements never arrive (lost on the link).
        var unacknowledged = false
        /// A byte whose runs the host sees no motion in (answers too late to time any, a busy host).
        var stillByte = 0
        /// Units per second of each byte, from byte 1 (empty: 20 per byte).
        var table: [Double] = []

        mutating func order(_ command: Calibration.Command?, at time: Double) {
            guard let command else { return }
            pending = (command, time + lag)
            driveTakenAt = nil
        }

        /// Takes the command on its way once it is due, then turns for `seconds`.
        mutating func advance(from time: Double, _ seconds: Double) {
            if let p = pending, p.at <= time + seconds {
                advance(max(0, p.at - time))
                obey(p.command)
                if case .drive = p.command, !unacknowledged { driveTakenAt = p.at }
                pending = nil
                advance(time + seconds - max(time, p.at))
            } else {
                advance(seconds)
            }
        }

        mutating func obey(_ command: Calibration.Command?) {
            switch command {
            case .drive(_, let positive, let byte)?:
                var speed = table.isEmpty ? 20.0 * Double(byte) : table[byte - 1]
                if byte == slowByte && slowRuns > 0 { speed /= 2; slowRuns -= 1 }
                if byte == stillByte { speed = 0 }
                velocity = positive ? speed : -speed
            case .stop?: velocity = 0
            case nil: break
            }
        }

        mutating func advance(_ seconds: Double) {
            units = min(2000, max(0, units + velocity * seconds))
        }
    }

    func calibrate(_ head: inout Head, baseSpeeds: [Double] = []) -> Calibration {
        var calibration = Calibration(axes: [.init(name: "pan", bytes: 6, spanDegrees: 200, baseSpeeds: baseSpeeds)], maxWindow: 0.6, startAt: 0)
        var t = 0.0
        while !calibration.finished && t < 600 {
            head.order(calibration.step(units: [head.units], at: t, driveTakenAt: head.driveTakenAt), at: t)
            head.advance(from: t, 0.05)
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

    /// Each drive taken 0.4 s after it was sent, longer than the ramp allowed for (0.25 s): timed from
    /// the sending, the window held the byte before's speed (the CI run beside a CPU hog measured pan
    /// byte 18 at 16.9 deg/s, truly 19.8, byte 17's 16.6: still in order, so not measured again).
    @Test func aDriveTakenLateIsTimedFromWhenTheHeadTookIt() throws {
        var head = Head(slowByte: 0, slowRuns: 0, lag: 0.4)
        let calibration = calibrate(&head)
        try #require(calibration.finished && calibration.failure == nil)
        let speeds = calibration.results[0].speeds
        for (i, speed) in speeds.enumerated() {
            let truth = 2.0 * Double(i + 1)
            #expect(abs(speed - truth) <= 0.05 * truth, "byte \(i + 1): \(speed) deg/s, truly \(truth); \(speeds)")
        }
        #expect(calibration.results[0].measured.allSatisfy { $0 == 1 }, "none measured again: \(calibration.results[0].measured)")
    }

    /// A head whose acknowledgements are lost (or that refuses the drive) gives no time a drive was
    /// taken: its bytes are timed from the asking, as before there was one, rather than never.
    @Test func drivesNeverAcknowledgedAreTimedFromTheAsking() throws {
        var head = Head(slowByte: 0, slowRuns: 0, unacknowledged: true)
        let calibration = calibrate(&head)
        try #require(calibration.finished && calibration.failure == nil, "still measuring after 600 s of virtual time")
        for (i, speed) in calibration.results[0].speeds.enumerated() {
            let truth = 2.0 * Double(i + 1)
            #expect(abs(speed - truth) <= 0.05 * truth, "byte \(i + 1): \(speed) deg/s, truly \(truth)")
        }
    }

    /// The CI run of 2026-11-28 01:17: "invalid VISCA profile: pan.speeds must be positive and
    /// increasing" — byte 1 read still in its windows; every other byte is raised over the one below,
    /// but nothing is below byte 1.
    @Test func aSlowestByteSeenStillEveryTimeGetsASpeedFromTheBytesThatMoved() throws {
        var head = Head(slowByte: 0, slowRuns: 0, stillByte: 1)
        let calibration = calibrate(&head)
        try #require(calibration.finished && calibration.failure == nil)
        let result = calibration.results[0]
        #expect(result.measured[0] == 1 + SpeedOrder.retriesPerByte, "byte 1 measured again as often as it may: \(result.measured)")
        #expect(result.slowestEstimated == .byte)
        #expect(result.speeds[0] > 0 && zip(result.speeds, result.speeds.dropFirst()).allSatisfy { $0 < $1 }, "\(result.speeds)")
        #expect(abs(result.speeds[0] - 2) < 0.2, "byte 1 from byte 2's 4 deg/s: \(result.speeds[0])")
    }

    /// A head whose slow end is not linear (PTZOptics' generic table: 1, 1.5, 2.2 °/s …), at twice the
    /// base profile's speeds: byte 1, read still, keeps the base table's ratio to byte 2, where the
    /// byte's would make it 3 °/s.
    @Test func aSlowestByteSeenStillTakesTheBaseProfilesRatioToTheByteThatMoved() throws {
        let base = [1.0, 3, 4, 6, 8, 10]
        var head = Head(slowByte: 0, slowRuns: 0, stillByte: 1, table: base.map { $0 * 2 * 10 })
        let calibration = calibrate(&head, baseSpeeds: base)
        try #require(calibration.finished && calibration.failure == nil, "\(calibration.failure ?? "unfinished")")
        let result = calibration.results[0]
        #expect(result.slowestEstimated == .baseTable)
        #expect(abs(result.speeds[1] - 6) < 0.3, "byte 2 measured: \(result.speeds)")
        #expect(abs(result.speeds[0] - 2) < 0.1, "byte 1 a third of byte 2's, as in the base table: \(result.speeds[0])")
        let axis = VISCAProfile.AxisProfile(nibbles: 4, unitsPerDegree: 10, minDegrees: -100, maxDegrees: 100, speeds: base, maxAccelDegrees: 100)
        let profile = calibration.profile(base: VISCAProfile(name: "base", vendor: "test", model: "head", pan: axis, tilt: axis),
                                          name: "measured", how: "test")
        #expect(profile.provenance?["pan.speeds"]?.contains("in the base profile's ratio of the two") == true, "\(profile.provenance ?? [:])")
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
