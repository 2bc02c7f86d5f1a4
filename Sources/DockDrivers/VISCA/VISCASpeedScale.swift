/// What the camera's feedback says of its profile's speed table, learned while dockd runs: per
/// axis, the speed the camera really turns at over the table's speed for the byte it was sent (the
/// median of recent samples). Cameras differ from their table by model and firmware; the driver
/// picks speed bytes through this scale, so a camera whose tilt turns at a third of its table is
/// still driven at the speed asked. `dock-driver-probe --calibrate` measures every byte instead.
///
/// Samples come only from steady motion: a drive or AbsolutePosition in force for `settle` seconds
/// (the camera's ramp is over), an AbsolutePosition still well short of its target (not braking).
/// Each sample is the distance covered over `span` seconds of polls (a fixed time, so the camera's
/// units do not bias it), kept if it is at least `minimumUnits` (not a tiny move); a ratio outside
/// 0.05…5 (an axis held at its end stop, a stray poll) is dropped.
struct VISCASpeedScale: Sendable {
    /// What the camera was last sent, per axis (pan, tilt): the table's speed (deg/s, 0 = still),
    /// when, and for an AbsolutePosition its target (profile degrees).
    struct Command: Sendable, Equatable {
        var speed: [Double]
        var since: Double
        var target: [Double]?
    }

    static let settle = 0.3
    static let span = 0.5
    static let minimumUnits = 6.0
    static let window = 15
    static let minimumSamples = 5

    private(set) var command: Command?
    /// Where the current span started (profile degrees per axis, host seconds).
    private var anchor: (position: [Double], time: Double)?
    private var samples: [[Double]] = [[], []]
    /// Per axis (pan, tilt): the learned scale, 1 until enough samples.
    private(set) var scale: [Double] = [1, 1]
    private(set) var learned: [Bool] = [false, false]

    mutating func commanded(_ command: Command?) {
        self.command = command
        anchor = nil
    }

    /// A poll: where the camera is (profile degrees per axis) at host time `time`.
    mutating func observe(_ position: [Double], at time: Double, unitsPerDegree: [Double]) {
        guard let command, time - command.since >= Self.settle else { return }
        guard let start = anchor else { anchor = (position, time); return }
        let dt = time - start.time
        guard dt >= Self.span else { return }
        anchor = (position, time)
        for i in 0..<2 where command.speed[i] > 0 {
            let covered = abs(position[i] - start.position[i])
            guard covered * unitsPerDegree[i] >= Self.minimumUnits else { continue }
            if let target = command.target?[i], abs(target - position[i]) < command.speed[i] * scale[i] * Self.settle { continue }
            let ratio = covered / dt / command.speed[i]
            guard ratio > 0.05 && ratio < 5 else { continue }
            samples[i].append(ratio)
            if samples[i].count > Self.window { samples[i].removeFirst() }
            if samples[i].count >= Self.minimumSamples {
                let sorted = samples[i].sorted()
                scale[i] = sorted[sorted.count / 2]
                learned[i] = true
            }
        }
    }

    /// A new link: what was sent on the old one no longer moves the camera (what was learned stays).
    mutating func reset() { commanded(nil) }
}
