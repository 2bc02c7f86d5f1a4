import DockProtocol

/// One pose of a custom animation, `time` seconds after it starts. Angles in rad, relative to the
/// start pose or absolute (see `Animation.Positioning`). `roll` is animated only if every keyframe
/// gives it.
public struct Keyframe: Equatable, Sendable {
    public var time: Double
    public var pitch: Double
    public var yaw: Double
    public var roll: Double?
    public init(time: Double, pitch: Double = 0, yaw: Double = 0, roll: Double? = nil) {
        self.time = time; self.pitch = pitch; self.yaw = yaw; self.roll = roll
    }
}

/// An expressive motion, played with `MotionController.play`. Every animation starts from the
/// stand's pose when it is played (an implicit keyframe at t = 0) and passes through its keyframes
/// on a monotone cubic Hermite spline that is at rest at both ends.
///
/// Built-ins (DockKit's four), nominal shapes; offsets are from the start pose, rad:
///
/// - `yes`: a vertical nod, three swings decaying — pitch +0.15 at 0.30 s, −0.10 at 0.65 s,
///   +0.10 at 1.00 s, −0.05 at 1.30 s, back to the start at 1.60 s. Yaw holds.
/// - `no`: a horizontal shake — yaw +0.20 at 0.30 s, −0.16 at 0.70 s, +0.10 at 1.05 s, −0.05 at
///   1.40 s, back at 1.70 s. Pitch holds.
/// - `kapow`: a quick tilt that hangs, then snaps back past centre and swings out like a damped
///   pendulum — pitch +0.15 at 0.25 s, held to 0.40 s, −0.08 at 0.70 s, +0.045 at 0.95 s,
///   −0.02 at 1.17 s, back at 1.40 s.
/// - `wakeup`: ends at home (yaw 0, pitch 0), not at the start — the head droops to 0.30 below home
///   pitch (or stays lower if it already is) by 0.80 s and rests there to 1.30 s, then rises while
///   yaw turns home, reaching pitch +0.06 (a stretch) and yaw 0 at 2.30 s, settling at home at 2.80 s.
///   On a continuous yaw "home" is the unwrapped 0, so extra turns are unwound.
///
/// Built-ins adapt to the stand: amplitudes shrink (per direction) to stay 0.02 rad inside the active
/// position limits, and the whole timeline slows uniformly until the peak speed and acceleration fit
/// within `planningMargin` of the limits. Custom animations are never adapted: one that does not fit
/// is refused with `invalidParameter` before anything moves.
public struct Animation: Equatable, Sendable {
    public enum Positioning: Equatable, Sendable {
        /// Keyframe angles are offsets from the pose when the animation starts (yaw adds to the
        /// unwrapped multi-turn position).
        case relative
        /// Keyframe angles are positions (unwrapped on a continuous yaw).
        case absolute
    }

    public enum BuiltIn: String, CaseIterable, Sendable {
        case yes, no, wakeup, kapow
    }

    enum Source: Equatable, Sendable {
        case builtIn(BuiltIn)
        case keyframes([Keyframe], Positioning)
    }

    public let name: String
    let source: Source

    public static let yes = Animation(name: "yes", source: .builtIn(.yes))
    public static let no = Animation(name: "no", source: .builtIn(.no))
    public static let wakeup = Animation(name: "wakeup", source: .builtIn(.wakeup))
    public static let kapow = Animation(name: "kapow", source: .builtIn(.kapow))

    public static func builtIn(_ kind: BuiltIn) -> Animation { Animation(name: kind.rawValue, source: .builtIn(kind)) }

    /// A custom animation; `time`s strictly increasing and > 0.
    public static func custom(_ keyframes: [Keyframe], positioning: Positioning = .relative, name: String = "custom") -> Animation {
        Animation(name: name, source: .keyframes(keyframes, positioning))
    }
}

extension Animation.BuiltIn {
    /// The axis the animation is about; a stand without it cannot play it.
    var primaryAxis: Axis { self == .no ? .yaw : .pitch }

    /// Nominal (time, offset) points of the one axis a relative built-in moves; the others hold.
    /// nil for `wakeup`, which is planned from the start pose.
    var relativeShape: (axis: Axis, points: [(time: Double, offset: Double)])? {
        switch self {
        case .yes: (.pitch, [(0.30, 0.15), (0.65, -0.10), (1.00, 0.10), (1.30, -0.05), (1.60, 0)])
        case .no: (.yaw, [(0.30, 0.20), (0.70, -0.16), (1.05, 0.10), (1.40, -0.05), (1.70, 0)])
        case .kapow: (.pitch, [(0.25, 0.15), (0.40, 0.15), (0.70, -0.08), (0.95, 0.045), (1.17, -0.02), (1.40, 0)])
        case .wakeup: nil
        }
    }

    static let wakeupTimes = [0.80, 1.30, 2.30, 2.80]
    static let wakeupDroop = 0.30
    static let wakeupStretch = 0.06
}
