import DockDrivers

/// Measures a VISCA head for a profile: for pan, then tilt, which way its position units grow,
/// where its end stops are (the units per degree follow from the span the spec sheet gives), and the
/// speed of every speed byte. Pure: fed the polled position in camera units and the time, it says
/// how to drive. The probe runs it through a VISCADriver whose profile is the identity (one unit per
/// "degree", byte k = k "deg/s": see `identityProfile`), so commands carry raw bytes and feedback
/// raw units.
///
/// Per axis: drive toward positive (pan left, tilt up) at a middle byte until the units move 30 →
/// the sign; drive to the positive end stop at the top byte (no change for `restTime`), then to the
/// other; then each byte from the slowest, from the end it stands at: `settleTime` (the ramp) after
/// the camera acknowledged the drive,
/// the slope of the position (Theil–Sen) over a window long enough for 60 units (0.5 s at
/// least, `maxWindow` at most), turning round when the next byte would run out of room; then, while
/// the table is out of order, the byte `SpeedOrder` picks again (a bounded number of times).
struct Calibration {
    struct AxisSetup {
        var name: String
        /// Speed bytes the camera takes (01…bytes).
        var bytes: Int
        /// The mechanical span in degrees, from the spec sheet.
        var spanDegrees: Double
        /// The base profile's speeds (deg/s per byte): the table's shape, for a slowest byte that
        /// showed no motion (empty: none to go by).
        var baseSpeeds: [Double] = []
    }

    struct AxisResult {
        var sign = 1
        /// Units at the positive (left / up) and negative (right / down) end stops.
        var positiveEnd = 0.0, negativeEnd = 0.0
        var unitsPerDegree = 1.0
        /// deg/s per byte, as measured (the last time), then made strictly increasing.
        var speeds: [Double] = []
        /// How many times each byte was measured.
        var measured: [Int] = []
        /// Bytes measured no faster than the one below even so (raised to keep the table increasing).
        var adjusted: [Int] = []
        /// The slowest byte read still in every window: how its speed was set from the first byte
        /// that moved.
        var slowestEstimated: SlowestEstimate?
    }

    enum SlowestEstimate: Equatable {
        /// In the base profile's ratio of the two bytes.
        case baseTable
        /// Scaled by the byte (the base profile's table gives no ratio: too short, or not rising there).
        case byte
    }

    enum Command: Equatable {
        /// Drive one axis: `positive` = pan left / tilt up.
        case drive(axis: Int, positive: Bool, byte: Int)
        case stop
    }

    /// What the calibration learned as it goes (printed by the probe).
    enum Event {
        case sign(axis: Int, sign: Int)
        case end(axis: Int, positive: Bool, units: Double)
        case speed(axis: Int, byte: Int, degreesPerSecond: Double, seconds: Double)
    }

    private enum Phase {
        case settle(until: Double)
        case direction(positive: Bool, start: Double, since: Double)
        case end(positive: Bool, lastMove: (units: Double, time: Double))
        case speed(byte: Int, positive: Bool, since: Double, samples: [(time: Double, units: Double)])
        case done
    }

    let axes: [AxisSetup]
    let settleTime = 0.25, restTime = 0.5, minWindow = 0.5
    /// How long a drive's acknowledgement is waited for before its ramp is counted from the asking.
    let acknowledgementWait = 1.0
    let maxWindow: Double
    private(set) var results: [AxisResult]
    private(set) var failure: String?
    private(set) var events: [Event] = []
    private var axis = 0
    private var phase: Phase

    init(axes: [AxisSetup], maxWindow: Double, startAt time: Double) {
        self.axes = axes
        self.maxWindow = max(minWindow, maxWindow)
        results = axes.map { _ in AxisResult() }
        phase = .settle(until: time + 0.5)
    }

    var finished: Bool { if case .done = phase { true } else { false } }

    /// The next command after a position sample (`units[axis]`: camera units of each axis).
    /// `driveTakenAt`: when the camera acknowledged the last drive commanded, nil until it has; a
    /// speed's ramp is counted from then.
    mutating func step(units: [Double], at time: Double, driveTakenAt: Double?) -> Command? {
        guard !finished else { return nil }
        let u = units[axis]
        let setup = axes[axis]
        switch phase {
        case .settle(let until):
            guard time >= until else { return nil }
            phase = .direction(positive: true, start: u, since: time)
            return .drive(axis: axis, positive: true, byte: max(1, setup.bytes / 3))
        case .direction(let positive, let start, let since):
            if abs(u - start) >= 30 {
                // Pan: left made the units smaller → they grow to the right (+1). Tilt: up made them larger → +1.
                let grew = (u > start) == positive
                results[axis].sign = axis == 0 ? (grew ? -1 : 1) : (grew ? 1 : -1)
                events.append(.sign(axis: axis, sign: results[axis].sign))
                phase = .end(positive: true, lastMove: (u, time))
                return .drive(axis: axis, positive: true, byte: setup.bytes)
            }
            guard time - since > 1.5 else { return nil }
            if positive {
                // Perhaps at the positive end already: the other way.
                phase = .direction(positive: false, start: u, since: time)
                return .drive(axis: axis, positive: false, byte: max(1, setup.bytes / 3))
            }
            return fail("\(setup.name) did not move when driven either way")
        case .end(let positive, let lastMove):
            if abs(u - lastMove.units) >= 2 {
                phase = .end(positive: positive, lastMove: (u, time))
                return nil
            }
            guard time - lastMove.time >= restTime else { return nil }
            events.append(.end(axis: axis, positive: positive, units: u))
            if positive {
                results[axis].positiveEnd = u
                phase = .end(positive: false, lastMove: (u, time))
                return .drive(axis: axis, positive: false, byte: setup.bytes)
            }
            results[axis].negativeEnd = u
            let span = abs(results[axis].positiveEnd - u)
            guard span >= 10 else { return fail("\(setup.name)'s end stops are \(span) units apart") }
            results[axis].unitsPerDegree = span / setup.spanDegrees
            phase = .speed(byte: 1, positive: true, since: time, samples: [])
            return .drive(axis: axis, positive: true, byte: 1)
        case .speed(let byte, let positive, let since, var samples):
            let span = abs(results[axis].positiveEnd - results[axis].negativeEnd)
            let end = positive ? results[axis].positiveEnd : results[axis].negativeEnd
            let room = abs(end - u)
            // Near the end stop the head may already stand still between two polls: not a sample.
            let cornered = room < 0.03 * span
            // The ramp from when the camera took the drive (a busy host or a command still in the
            // lane can hold it back past the ramp, and the window would time the byte before); from
            // the asking when the drive asked was the one in force already (not sent again).
            // A drive never acknowledged (refused, or its answers lost) is timed from the asking
            // after `acknowledgementWait`, as before there was an acknowledgement to go by: it then
            // reads slow or still and is measured again, rather than waited for until the deadline.
            let rampFrom = driveTakenAt.map { max($0, since) } ?? (time - since >= acknowledgementWait ? since : nil)
            if let rampFrom, time - rampFrom >= settleTime && !cornered { samples.append((time, u)) }
            let measured = samples.count >= 2 ? samples.last!.time - samples.first!.time : 0
            let moved = samples.count >= 2 ? abs(samples.last!.units - samples.first!.units) : 0
            let enough = measured >= maxWindow || (measured >= minWindow && moved >= 60)
            guard enough || cornered else {
                phase = .speed(byte: byte, positive: positive, since: since, samples: samples)
                return nil
            }
            guard measured >= 0.1 else {
                // Ran out of room before measuring: this byte again, the other way.
                phase = .speed(byte: byte, positive: !positive, since: time, samples: [])
                return .drive(axis: axis, positive: !positive, byte: byte)
            }
            let speed = abs(Self.slope(samples)) / results[axis].unitsPerDegree
            events.append(.speed(axis: axis, byte: byte, degreesPerSecond: speed, seconds: measured))
            let again = byte <= results[axis].speeds.count
            if again {
                results[axis].speeds[byte - 1] = speed
                results[axis].measured[byte - 1] += 1
            } else {
                results[axis].speeds.append(speed)
                results[axis].measured.append(1)
            }
            guard byte < setup.bytes && !again else { return measureAgainOrFinishAxis(at: time, positive: positive, room: room) }
            // The next byte's run: its ramp and window at up to twice this speed.
            return drive(byte: byte + 1, planned: 2 * speed, positive: positive, room: room, at: time)
        case .done:
            return nil
        }
    }

    /// Drives toward `positive` at `byte`, or the other way when a run at `planned` deg/s would run
    /// out of room (`room` units left that way) and there is more behind.
    private mutating func drive(byte: Int, planned: Double, positive: Bool, room: Double, at time: Double) -> Command {
        let span = abs(results[axis].positiveEnd - results[axis].negativeEnd)
        let units = planned * results[axis].unitsPerDegree
        let window = min(maxWindow, max(minWindow, 60 / max(units, 1e-6)))
        let travel = units * (settleTime + window + 0.1) + 0.05 * span
        let turn = room < travel && span - room > room
        phase = .speed(byte: byte, positive: turn ? !positive : positive, since: time, samples: [])
        return .drive(axis: axis, positive: turn ? !positive : positive, byte: byte)
    }

    /// Every byte measured: the one `SpeedOrder` picks measured again (planned at twice the fastest
    /// of it and its neighbours), or the axis done.
    private mutating func measureAgainOrFinishAxis(at time: Double, positive: Bool, room: Double) -> Command {
        let r = results[axis]
        guard let again = SpeedOrder.byteToMeasureAgain(speeds: r.speeds, measured: r.measured) else { return finishAxis(at: time) }
        let planned = 2 * r.speeds[max(0, again - 1)...min(r.speeds.count - 1, again + 1)].max()!
        return drive(byte: again + 1, planned: planned, positive: positive, room: room, at: time)
    }

    private mutating func finishAxis(at time: Double) -> Command {
        var speeds = results[axis].speeds
        // The slowest byte read still in every window (a busy host saw none of its motion): nothing
        // is below it to raise it over, and a profile's speeds must be positive in the three decimals
        // it is written with. The first byte that moved, scaled down in the base profile's ratio of
        // the two (a camera's table keeps its maker's shape; a generic table's slow end is not linear:
        // PTZOptics' 1 and 1.5 °/s), else by the byte; and said so.
        if let first = speeds.first, !(first >= 0.0005), let moved = speeds.firstIndex(where: { $0 >= 0.0005 }) {
            let shape = axes[axis].baseSpeeds
            if shape.indices.contains(moved), shape[0] > 0, shape[moved] > shape[0] {
                speeds[0] = speeds[moved] * shape[0] / shape[moved]
                results[axis].slowestEstimated = .baseTable
            } else {
                speeds[0] = speeds[moved] / Double(moved + 1)
                results[axis].slowestEstimated = .byte
            }
        }
        for i in speeds.indices.dropFirst() where speeds[i] <= speeds[i - 1] {
            speeds[i] = speeds[i - 1] * 1.001 + 0.001
            results[axis].adjusted.append(i + 1)
        }
        results[axis].speeds = speeds
        axis += 1
        phase = axis < axes.count ? .settle(until: time + 0.3) : .done
        return .stop
    }

    private mutating func fail(_ why: String) -> Command {
        failure = why
        phase = .done
        return .stop
    }

    /// The slope of units over time: the median of the slopes between samples at least 40 % of the
    /// window apart (Theil–Sen), so a few answers that came late (a busy host, a slow link) do not
    /// pull it the way they pull a least-squares fit.
    static func slope(_ samples: [(time: Double, units: Double)]) -> Double {
        guard let first = samples.first, let last = samples.last, last.time > first.time else { return 0 }
        let apart = 0.4 * (last.time - first.time)
        var slopes: [Double] = []
        for i in samples.indices {
            for j in samples.indices where j > i && samples[j].time - samples[i].time >= apart {
                slopes.append((samples[j].units - samples[i].units) / (samples[j].time - samples[i].time))
            }
        }
        slopes.sort()
        return slopes.isEmpty ? 0 : slopes.count % 2 == 1 ? slopes[slopes.count / 2] : (slopes[slopes.count / 2 - 1] + slopes[slopes.count / 2]) / 2
    }

    /// A profile through which velocity commands carry raw speed bytes and feedback raw units: one
    /// unit per "degree", byte k = k "deg/s", the whole range the nibbles can hold, units growing
    /// right and up. `limitSet` as the camera's (so its limits are cleared for the sweep).
    static func identityProfile(like base: VISCAProfile, panBytes: Int, tiltBytes: Int) -> VISCAProfile {
        func axis(_ a: VISCAProfile.AxisProfile, bytes: Int) -> VISCAProfile.AxisProfile {
            let limit = Double((1 << (a.nibbles * 4 - 1)) - 2)
            return VISCAProfile.AxisProfile(nibbles: a.nibbles, unitsPerDegree: 1, minDegrees: -limit, maxDegrees: limit,
                                            speeds: (1...bytes).map(Double.init), maxAccelDegrees: 1e6, sign: 1)
        }
        return VISCAProfile(name: base.name + "-identity", vendor: base.vendor, model: base.model,
                            pan: axis(base.pan, bytes: panBytes), tilt: axis(base.tilt, bytes: tiltBytes),
                            replyTimeout: base.replyTimeout, absoluteSpeed: base.absoluteSpeed, limitSet: base.limitSet)
    }

    /// The profile measured, on top of `base` (what was not measured keeps its value and provenance).
    func profile(base: VISCAProfile, name: String, how: String) -> VISCAProfile {
        var out = base
        out.name = name
        var provenance = base.provenance ?? [:]
        for (i, key) in ["pan", "tilt"].enumerated() where i < results.count {
            let r = results[i]
            var a = i == 0 ? base.pan : base.tilt
            a.sign = r.sign
            a.unitsPerDegree = (r.unitsPerDegree * 1000).rounded() / 1000
            // Degrees of the ends: pan's positive end is the left (the smaller degrees), tilt's the top.
            let p = Double(r.sign) * r.positiveEnd / r.unitsPerDegree, n = Double(r.sign) * r.negativeEnd / r.unitsPerDegree
            a.minDegrees = (min(p, n) * 10).rounded(.up) / 10
            a.maxDegrees = (max(p, n) * 10).rounded(.down) / 10
            a.speeds = r.speeds.map { ($0 * 1000).rounded() / 1000 }
            if i == 0 { out.pan = a } else { out.tilt = a }
            let ends = "\(Int(r.positiveEnd.rounded())) and \(Int(r.negativeEnd.rounded())) units"
            provenance["\(key).nibbles"] = "measured: Pan-tiltPosInq answers hold pan \(base.pan.nibbles) + tilt \(base.tilt.nibbles) nibbles"
            provenance["\(key).unitsPerDegree"] = "measured: \(ends) between the end stops over \(axes[i].spanDegrees)° (the span given)"
            provenance["\(key).range"] = "measured: the end stops at \(ends)"
            provenance["\(key).sign"] = "measured: driving \(i == 0 ? "left" : "up") moved the units \(i == 0 ? (r.sign == 1 ? "down" : "up") : (r.sign == 1 ? "up" : "down"))"
            let again = r.measured.indices.filter { r.measured[$0] > 1 }.map { String($0 + 1) }
            provenance["\(key).speeds"] = "measured: \(how)"
                + (again.isEmpty ? "" : "; bytes \(again.joined(separator: ", ")) measured again (the table was out of order)")
                + (r.slowestEstimated.map { "; byte 1 showed no motion in any of its windows and was set from the first byte that moved, "
                    + ($0 == .baseTable ? "in the base profile's ratio of the two" : "scaled by the byte") } ?? "")
                + (r.adjusted.isEmpty ? "" : "; bytes \(r.adjusted.map(String.init).joined(separator: ", ")) were no faster than the byte below and were raised to keep the table increasing")
        }
        out.provenance = provenance
        return out
    }
}
