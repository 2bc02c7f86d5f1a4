import DockProtocol

/// A constant-rate panorama in yaw between two angles: back and forth until stopped (`repeats`),
/// or once from `from` to `to`. The stand first goes to `from`.
public struct Sweep: Sendable, Equatable {
    public var from: Double
    public var to: Double
    /// rad/s, > 0.
    public var rate: Double
    public var repeats: Bool

    public init(from: Double, to: Double, rate: Double, repeats: Bool) {
        self.from = from; self.to = to; self.rate = rate; self.repeats = repeats
    }
}

/// Presets visited in turn, each held for its dwell time; round again until stopped (`repeats`).
public struct Tour: Sendable, Equatable {
    public struct Stop: Sendable, Equatable {
        public var pose: NamedPose
        /// s at the pose before the next.
        public var dwell: Double
        public init(pose: NamedPose, dwell: Double) { self.pose = pose; self.dwell = dwell }
    }
    public var stops: [Stop]
    public var repeats: Bool

    public init(stops: [Stop], repeats: Bool) { self.stops = stops; self.repeats = repeats }
}

/// The sweep the stand's custom button `button` starts and stops (dockd.conf `[sweep]`).
public struct ButtonSweep: Sendable, Equatable {
    public var button: Int
    public var sweep: Sweep
    public init(button: Int, sweep: Sweep) { self.button = button; self.sweep = sweep }
}

/// A sweep or a tour a client (or the stand's custom button) started.
public enum Pan: Sendable, Equatable {
    case sweep(Sweep)
    case tour(Tour)

    var phase: TrackingPhase {
        switch self {
        case .sweep: .sweeping
        case .tour: .touring
        }
    }

    /// Every angle it goes to, by axis: each must lie within the limits, or the stand would never get there.
    var targets: [(axis: Axis, angle: Double)] {
        switch self {
        case .sweep(let s): [(.yaw, s.from), (.yaw, s.to)]
        case .tour(let t): t.stops.flatMap { stop in [(Axis.yaw, stop.pose.yaw), (.pitch, stop.pose.pitch)].compactMap { a in a.1.map { (a.0, $0) } } }
        }
    }
}

/// Where a sweep or a tour is, in the engine's time, and the rates that carry it on: nil once it
/// has ended (a sweep once reached `to`, a tour without `repeats` dwelt at its last stop).
struct PanPlanner: Sendable {
    let pan: Pan
    private var step = Step.approaching(0)

    private enum Step: Sendable, Equatable {
        /// Going to the sweep's start or the tour stop of this index.
        case approaching(Int)
        /// Sweeping toward `to` (+1: the way from `from` to `to`) or back.
        case sweeping(direction: Double)
        /// At the tour stop of this index since this time.
        case dwelling(Int, since: Double)
    }

    init(_ pan: Pan) { self.pan = pan }

    /// The tour's stop being approached or dwelt at (nil for a sweep).
    var stopIndex: Int? {
        switch step {
        case .approaching(let i), .dwelling(let i, _): if case .tour = pan { i } else { nil }
        case .sweeping: nil
        }
    }

    mutating func rates(positions: [Axis: Double], continuousAxes: Set<Axis>, at now: Double) -> [Axis: Double]? {
        switch pan {
        case .sweep(let sweep): sweepRates(sweep, positions: positions)
        case .tour(let tour): tourRates(tour, positions: positions, continuousAxes: continuousAxes, at: now)
        }
    }

    private mutating func sweepRates(_ sweep: Sweep, positions: [Axis: Double]) -> [Axis: Double]? {
        guard let yaw = positions[.yaw] else { return nil }
        var rates = positions.mapValues { _ in 0.0 }
        let forward = sweep.to >= sweep.from ? 1.0 : -1.0
        switch step {
        case .approaching:
            // Absolute angles: a sweep names the turns it means, so no shortest way round here.
            let approach = PoseApproach.rates(toward: NamedPose(name: "from", yaw: sweep.from, pitch: nil), positions: positions, continuousAxes: [])
            guard approach.arrived else { return approach.rates }
            step = .sweeping(direction: forward)
        case .sweeping, .dwelling:
            break
        }
        guard case .sweeping(var direction) = step else { return nil }
        let end = direction == forward ? sweep.to : sweep.from
        if (yaw - end) * direction >= 0 {
            guard sweep.repeats else { return nil }
            direction = -direction
            step = .sweeping(direction: direction)
        }
        rates[.yaw] = direction * sweep.rate
        return rates
    }

    private mutating func tourRates(_ tour: Tour, positions: [Axis: Double], continuousAxes: Set<Axis>, at now: Double) -> [Axis: Double]? {
        switch step {
        case .approaching(let index):
            let approach = PoseApproach.rates(toward: tour.stops[index].pose, positions: positions, continuousAxes: continuousAxes)
            if approach.arrived { step = .dwelling(index, since: now) }
            return approach.rates
        case .dwelling(let index, let since):
            if now - since >= tour.stops[index].dwell {
                let next = index + 1
                guard next < tour.stops.count || tour.repeats else { return nil }
                step = .approaching(next % tour.stops.count)
                return rates(positions: positions, continuousAxes: continuousAxes, at: now)
            }
            // Holds the pose through the dwell (a stand drifts, a hand may push it).
            return PoseApproach.rates(toward: tour.stops[index].pose, positions: positions, continuousAxes: continuousAxes).rates
        case .sweeping:
            return nil
        }
    }
}
