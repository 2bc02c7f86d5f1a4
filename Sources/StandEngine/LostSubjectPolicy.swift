import DockCore
import DockProtocol

/// What a stand does once its subject is gone, as a client set it (`tracking.lost_policy`): hold
/// where it points; go to a preset `after` seconds; or search — a slow yaw sweep around where the
/// subject was last seen — from `after` for `searchSeconds`, then go to the preset. Seconds count
/// from the capture time of the last frame that saw the subject.
public struct LostSubjectPolicy: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable { case hold, preset, search }
    /// The subject counts as lost once unseen this long, s: a few missed frames are not a loss.
    public static let unseen = 0.5

    public var kind: Kind
    public var after: Double
    /// Where `preset` and `search` end (required for them).
    public var preset: NamedPose?
    public var searchSeconds: Double
    /// The search's half-width around the last-seen yaw, rad, and its speed, rad/s.
    public var searchAmplitude = 0.6
    public var searchRate = 0.3

    public init(kind: Kind, after: Double, preset: NamedPose?, searchSeconds: Double) {
        self.kind = kind; self.after = after; self.preset = preset; self.searchSeconds = searchSeconds
    }
}

/// What a stand is doing about its subject and its sweeps, as `tracking.state` shows it.
public enum TrackingPhase: String, Sendable, CaseIterable {
    /// Following its subject, or waiting for one (nothing lost yet).
    case tracking
    /// The subject is gone: holding still until the policy's `after` (for `hold`, for good).
    case lostHolding = "lost-holding"
    case lostSearching = "lost-searching"
    /// On its way to the policy's preset.
    case returning
    /// At the policy's preset, waiting for a subject.
    case atPreset = "at-preset"
    /// The policy's preset lies outside the limits in force (a client narrowed them): the stand
    /// holds where it is instead of pressing against the limit, until the limits let it go there.
    case blocked
    /// A stop holds, or the stand refuses drives: neither tracking nor a policy moves the stand,
    /// and the policy is not stepped (its own phase would be the one from before the stop).
    case stopped
    /// The subject is gone and no client set a policy: the configuration's `lost_behaviour` acts.
    case lostConfigured = "lost-configured"
    case sweeping
    case touring
}

/// The lost-subject policy as a state machine in the engine's time: given when the subject was
/// last seen (and where), it says what the motors do, or nil while tracking steers as usual. A
/// subject seen again ends whatever the policy was doing.
struct LostSubjectWatch: Sendable {
    let policy: LostSubjectPolicy
    private(set) var phase = TrackingPhase.tracking
    private var searchDirection = 1.0

    init(policy: LostSubjectPolicy) { self.policy = policy }

    /// The rates while the subject is lost (nil: tracking's own command). `lastSeen`: the target
    /// when the subject was last seen (nil: nothing was seen since tracking started afresh);
    /// `limits`: the limits in force (unbounded on a continuous axis no client narrowed).
    mutating func rates(lastSeen: TrackingTarget?, positions: [Axis: Double], limits: [Axis: ClosedRange<Double>],
                        continuousAxes: Set<Axis>, at now: Double) -> [Axis: Double]? {
        guard let lastSeen, now - lastSeen.time > LostSubjectPolicy.unseen else {
            phase = .tracking
            return nil
        }
        let still = positions.mapValues { _ in 0.0 }
        let lost = now - lastSeen.time
        switch policy.kind {
        case .hold:
            phase = .lostHolding
            return still
        case .preset where lost < policy.after, .search where lost < policy.after:
            phase = .lostHolding
            return still
        case .search where lost < policy.after + policy.searchSeconds:
            phase = .lostSearching
            return search(around: lastSeen.yaw, positions: positions)
        case .preset, .search:
            guard let pose = policy.preset else {
                phase = .lostHolding
                return still
            }
            guard !Self.pose(pose, liesOutside: limits) else {
                phase = .blocked
                return still
            }
            let approach = PoseApproach.rates(toward: pose, positions: positions, continuousAxes: continuousAxes)
            // Once there, it stays "at-preset" (and keeps holding the pose) until a subject comes.
            if approach.arrived || phase == .atPreset { phase = .atPreset } else { phase = .returning }
            return approach.rates
        }
    }

    /// Whether `pose` names an angle beyond the limits (the motion controller's tolerance allowed).
    private static func pose(_ pose: NamedPose, liesOutside limits: [Axis: ClosedRange<Double>]) -> Bool {
        [(Axis.yaw, pose.yaw), (.pitch, pose.pitch)].contains { axis, goal in
            guard let goal, let range = limits[axis] else { return false }
            return goal < range.lowerBound - 1e-6 || goal > range.upperBound + 1e-6
        }
    }

    /// Back and forth at the search rate within the amplitude around the last-seen yaw.
    private mutating func search(around yaw: Double, positions: [Axis: Double]) -> [Axis: Double] {
        var rates = positions.mapValues { _ in 0.0 }
        guard let position = positions[.yaw] else { return rates }
        if position > yaw + policy.searchAmplitude { searchDirection = -1 }
        if position < yaw - policy.searchAmplitude { searchDirection = 1 }
        rates[.yaw] = searchDirection * policy.searchRate
        return rates
    }
}
