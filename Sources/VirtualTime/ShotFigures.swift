import DockSim
import DockTracking

/// The zoom target of issue 25, counted on the scene's ground truth: how often the framed person's
/// height in the frame (the extent the shot measures: the face for `head` and `upper_body`, the body
/// for `full_body`, the intended people's union for `group`) is within ±10 % of the shot's fraction;
/// and how often the zoom turned around (a pumping zoom turns around far more often than the
/// subject's walk does).
public struct ShotFigures: Sendable {
    public let shot: ShotSize?
    public private(set) var samples = 0
    public private(set) var within = 0
    /// Samples in which the lens could frame the shot at all (its height at the zoom's range
    /// within tolerance), and how many of those were within: a head shot of a face 10 m away
    /// needs more than a 10× lens.
    public private(set) var reachable = 0
    public private(set) var withinReachable = 0
    private let maxZoom: Double
    public private(set) var reversals = 0
    private var lastDirection = 0.0
    static let tolerance = 0.1
    /// Slower than this (magnification per second) is not moving: the stand's noise.
    static let moving = 0.05

    /// `maxZoom`: the lens's longest magnification (its shortest is 1).
    public init(shot: ShotSize?, maxZoom: Double = 1) { self.shot = shot; self.maxZoom = maxZoom }

    /// Samples in which the first intended person is in the room and in front of the camera, seen
    /// at `zoom` (heights scale with the magnification).
    mutating func add(_ truth: [ScenePersonTruth], intended: [Int], zoom: Double) {
        guard let shot, shot != .wide else { return }
        let people = intended.compactMap { id in truth.first { $0.id == id && $0.present } }
        guard let primary = people.first, let body = primary.bodyRect else { return }
        let settings = ShotSettings()
        let (height, target): (Double?, Double) = switch shot {
        case .head: (primary.faceRect?.height, settings.headFace)
        case .upperBody: (primary.faceRect?.height, settings.upperBodyFace)
        case .fullBody: (body.height, settings.fullBody)
        case .group: (people.compactMap(\.bodyRect).reduce(body) { $0.union($1) }.height, settings.group)
        case .wide: (nil, 1)
        }
        guard let height else { return }
        samples += 1
        let isWithin = abs(height / target - 1) <= Self.tolerance
        if isWithin { within += 1 }
        if height * maxZoom / zoom >= target * (1 - Self.tolerance), height / zoom <= target * (1 + Self.tolerance) {
            reachable += 1
            if isWithin { withinReachable += 1 }
        }
    }

    /// The stand's zoom velocity now: a change of direction counts once.
    mutating func addZoom(velocity: Double) {
        guard abs(velocity) > Self.moving else { return }
        let direction: Double = velocity > 0 ? 1 : -1
        if lastDirection != 0, direction != lastDirection { reversals += 1 }
        lastDirection = direction
    }

    /// The fraction of samples within tolerance; nil without a shot or samples.
    public var fraction: Double? { samples > 0 ? Double(within) / Double(samples) : nil }
    /// The same over the samples the lens could frame.
    public var reachableFraction: Double? { reachable > 0 ? Double(withinReachable) / Double(reachable) : nil }
}
