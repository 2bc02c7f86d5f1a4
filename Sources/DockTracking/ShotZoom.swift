#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How tight framing keeps the subject on a camera with an optical zoom (issue 25).
public enum ShotSize: String, CaseIterable, Sendable, Hashable {
    case head
    case upperBody = "upper_body"
    case fullBody = "full_body"
    /// Every selected subject together.
    case group
    /// Zoomed out fully.
    case wide
}

public struct ShotSettings: Sendable, Hashable {
    /// The fraction of the frame's height the measured extent fills, per shot: a face for `head`
    /// and `upper_body` (a face is a steady measure; a body is cut off by those shots), a body for
    /// `full_body`, the selected subjects' union for `group`.
    public var headFace = 0.35
    public var upperBodyFace = 0.14
    public var fullBody = 0.75
    public var group = 0.6
    /// A group is also kept within this fraction of the frame's width.
    public var groupWidth = 0.8
    /// Zooming starts once the extent is this far (relative) from its target and stops within
    /// `settleError`: a dead band, so that a subject's sway does not pump the zoom.
    public var startError = 0.06
    public var settleError = 0.015
    /// No zoom step takes the measured extent closer than this to the frame's edge (fraction of
    /// the frame): pan and tilt re-center it before the zoom goes further.
    public var edgeMargin = 0.06
    /// The gap to the target, in log-magnification, is closed at this rate (1/s).
    public var gain = 5.0
    /// The size a shot zooms to is the extent's predicted this far ahead, s: the frame's age and
    /// the zoom's response.
    public var lead = 0.15
    /// A measure growing or shrinking faster than this (1/s, relative) is a subject walking at or
    /// away from the camera, not the measure's noise (a standing subject's face: under 0.05/s):
    /// the zoom starts once the walk carries the goal `settleError` away, not `startError`.
    public var walkingGrowth = 0.08
    /// A face is this fraction of its person's height: a body box stands in for a missing face.
    public var faceOfBody = 0.13

    public init() {}
}

/// The zoom half of framing: from the framed subjects' size in the image to a magnification, and
/// from that to a zoom rate. Pure; the caller gives the camera at the present magnification.
public struct ShotZoom: Sendable {
    public var shot: ShotSize?
    public var settings: ShotSettings
    /// The way the zoom is going (+1 in, -1 out), nil inside the dead band until the error leaves
    /// it (hysteresis) or a walk carries the goal away (`walkingGrowth`). A zoom move goes one way: it ends on reaching the goal, and only an error
    /// beyond the dead band turns it around, so a measure's noise about the goal cannot pump it.
    private var direction: Double?
    /// How fast the measured extent grows in the image (1/s, relative; from its tracked box's
    /// filtered height): a subject walking at the camera needs the zoom to move by as much with no
    /// error at all, which the gain alone would only follow with a lag (`rate`).
    private var growth = 0.0

    public init(shot: ShotSize? = nil, settings: ShotSettings = .init()) {
        self.shot = shot
        self.settings = settings
    }

    /// The magnification to head for, or nil to leave the zoom where it is (no shot chosen, or
    /// inside the dead band). `subjects` are the framed ones, `lost` when every one of them is
    /// out of sight; `camera` is the camera at `magnification`, `aim` where it points.
    public mutating func target(subjects: [Track], lost: Bool, camera: CameraModel, aim: Aim,
                                magnification: Double, range: ClosedRange<Double>) -> Double? {
        guard let shot else { return nil }
        if shot == .wide || lost || subjects.isEmpty {
            growth = 0
            direction = magnification > range.lowerBound ? -1 : nil
            return direction == nil ? nil : range.lowerBound
        }
        guard let (extent, fraction, clipped, growth) = measure(shot, subjects: subjects) else { return nil }
        self.growth = growth
        let rect = camera.normalizedRect(of: extent, aim: aim)
        var wanted = magnification * fraction / max(rect.height, 1e-3)
        if shot == .group { wanted = min(wanted, magnification * settings.groupWidth / max(rect.width, 1e-3)) }
        wanted *= exp(-growth * settings.lead)
        // An extent the frame's top or bottom cuts off (or touches) is at least as tall as measured:
        // enough to zoom out on, never to zoom in on.
        if clipped, wanted >= magnification, range.contains(magnification) {
            direction = nil
            return nil
        }
        // The goal is the size's, unless the edge margin stops it short: both are judged alike.
        let goal = min(max(wanted, range.lowerBound), bound(rect, magnification: magnification), range.upperBound)
        let error = log(goal / magnification)
        // The way a walk carries the goal (a growing measure: out).
        let walk: Double? = abs(growth) >= settings.walkingGrowth ? (growth > 0 ? -1 : 1) : nil
        // Limits narrowed past the present zoom (a client's) bring it back inside, dead band or not.
        if !range.contains(magnification) {
            direction = error > 0 ? 1 : -1
        } else if let way = direction {
            if error * way <= 0 || abs(error) < settings.settleError { direction = nil }
        } else if abs(error) > settings.startError {
            direction = error > 0 ? 1 : -1
        } else if let walk, error * walk > settings.settleError {
            direction = walk
        }
        return direction == nil ? nil : goal
    }

    /// The zoom rate toward `target` (magnification per second), within `maxSpeed`: the gap closed
    /// at `gain`, plus the extent's growth undone (never so much that the zoom goes the other way).
    public func rate(toward target: Double?, magnification: Double, maxSpeed: Double) -> Double {
        guard let target, target > 0, magnification > 0 else { return 0 }
        let gap = log(target / magnification)
        let rate = magnification * (settings.gain * gap - growth)
        guard rate * gap > 0 else { return 0 }
        return min(max(rate, -maxSpeed), maxSpeed)
    }

    /// The highest magnification that keeps `rect` (seen at `magnification`) `edgeMargin` inside
    /// the frame: zooming by k moves a point k times as far from the center.
    private func bound(_ rect: NormalizedRect, magnification: Double) -> Double {
        let reach = [rect.x, rect.maxX, rect.y, rect.maxY].map { abs($0 - 0.5) }.max() ?? 0.5
        guard reach > 1e-6 else { return .infinity }
        return magnification * (0.5 - settings.edgeMargin) / reach
    }

    /// The extent a shot measures, its target fraction of the frame's height, whether the frame
    /// cuts it off, and how fast it grows (1/s, relative).
    private func measure(_ shot: ShotSize, subjects: [Track]) -> (Box, Double, Bool, Double)? {
        let primary = subjects[0]
        let bodyGrowth = primary.body.map(Self.growth) ?? 0
        switch shot {
        case .head, .upperBody:
            let fraction = shot == .head ? settings.headFace : settings.upperBodyFace
            if let face = primary.face { return (face.box, fraction, !face.clippedEdges.isDisjoint(with: [.top, .bottom]), Self.growth(of: face)) }
            // A body the frame cuts off says nothing of its face's size: hold.
            guard primary.clippedEdges.isDisjoint(with: [.top, .bottom]) else { return nil }
            let body = primary.box
            let face = Box(centerX: body.centerX, centerY: body.top + body.height * settings.faceOfBody / 2,
                           width: body.width, height: body.height * settings.faceOfBody)
            return (face, fraction, false, bodyGrowth)
        case .fullBody:
            return (primary.box, settings.fullBody, !primary.clippedEdges.isDisjoint(with: [.top, .bottom]), bodyGrowth)
        case .group:
            // A group's extent grows with its members' spread too: no feedforward.
            let extent = subjects.dropFirst().reduce(primary.box) { $0.union($1.box) }
            let clipped = subjects.contains { !$0.clippedEdges.isDisjoint(with: [.top, .bottom]) }
            return (extent, settings.group, clipped, 0)
        case .wide:
            return nil
        }
    }

    private static func growth(of box: TrackedBox) -> Double {
        let height = box.filter.height
        return height.position > 1e-6 ? height.velocity / height.position : 0
    }
}
