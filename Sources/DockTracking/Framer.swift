/// DockKit's framing modes: where the subject sits horizontally in the region of interest.
public enum FramingMode: Sendable, Hashable {
    /// Centered, with lead room ahead of a moving subject.
    case automatic
    case center
    /// Subject on the left third.
    case left
    /// Subject on the right third.
    case right
}

public struct FramingSettings: Sendable, Hashable {
    /// Where a face center goes, as a fraction of the region's height from its top (eyes near the
    /// upper third, the usual portrait composition).
    public var faceLine = 0.35
    /// Least space kept above the framed group, fraction of the region's height.
    public var headroom = 0.06
    /// Lead room: the subject is placed behind center by the distance it covers in this many seconds…
    public var leadTime = 0.5
    /// …but by at most this fraction of the region's width.
    public var maximumLead = 0.15
    /// Several subjects are framed together only while they span at most this fraction of the
    /// region's width; otherwise the most important one alone.
    public var groupFill = 0.9

    public init() {}
}

public struct FramingResult: Sendable, Hashable {
    /// Where the framing puts the camera. (Whether the camera moves there now is the tracking
    /// controller's dead band's call.)
    public let desiredAim: Aim
    /// The subjects actually framed (all selected ones if they fit, else the first).
    public let framed: [SubjectIdentifier]
    /// Whether every framed subject's face (or box, without a face) is fully inside the current image.
    public let inFrame: Bool
}

/// Turns the selected subjects into a desired aim: mode (thirds), region of interest, headroom,
/// lead room, group framing. Works in angles (dockd's tracker space) through a camera
/// model; the aim passed in is the stand's aim at the observations' capture time.
public struct Framer: Sendable {
    public var settings: FramingSettings
    public var mode: FramingMode = .automatic
    /// Normalized, upper-left origin; the framed subjects are kept inside it.
    public var regionOfInterest: NormalizedRect = .fullFrame
    /// Bodies centred vertically instead of the top face on the face line: the `full_body` and
    /// `group` shots, whose zoom keeps the whole bodies in the frame.
    public var bodiesCentered = false

    public init(settings: FramingSettings = .init()) {
        self.settings = settings
    }

    public func frame(selected: [SubjectIdentifier], tracks: [Track], camera: CameraModel, aim: Aim) -> FramingResult {
        var subjects = selected.compactMap { id in tracks.first { $0.id == id } }
        guard !subjects.isEmpty else { return FramingResult(desiredAim: aim, framed: [], inFrame: false) }
        let region = regionOfInterest
        let regionWidth = region.width * camera.horizontalFieldOfView
        if subjects.count > 1, extent(of: subjects).width > settings.groupFill * regionWidth {
            subjects = [subjects[0]]
        }
        let group = extent(of: subjects)

        var targetX: Double
        switch mode {
        case .automatic, .center: targetX = region.x + region.width / 2
        case .left: targetX = region.x + region.width / 3
        case .right: targetX = region.x + region.width * 2 / 3
        }
        if mode == .automatic {
            let meanVelocityX = subjects.map(\.velocity.x).reduce(0, +) / Double(subjects.count)
            // Distance covered in `leadTime`, as a fraction of the image width.
            let lead = meanVelocityX * settings.leadTime / camera.horizontalFieldOfView
            let limit = settings.maximumLead * region.width
            targetX -= min(max(lead, -limit), limit)
        }
        // A whole-body or group shot centres the bodies (room above and below for the zoom to keep
        // them whole); otherwise the top face goes on the face line.
        let topFace = bodiesCentered ? nil : subjects.compactMap(\.face?.box).min { $0.centerY < $1.centerY }
        let anchorY = topFace?.centerY ?? group.centerY
        let targetY = region.y + (topFace == nil ? 0.5 : settings.faceLine) * region.height
        // One subject is framed by its face across too, where there is one: a face box jitters a
        // third as much as a body box, and a body's box widens and shifts when the person bends,
        // sits or raises an arm while the head stays put.
        let anchorX = subjects.count == 1 ? subjects[0].face?.box.centerX ?? group.centerX : group.centerX
        var desired = camera.aim(placing: anchorX, anchorY, atNormalizedX: targetX, normalizedY: targetY)

        // Keep the group inside the region when it fits: shift just enough, never re-center. An edge
        // last seen on the image's border is not where the subject ends (it goes on out of sight):
        // shifting to bring it in would chase the frame's own border.
        let unknown = subjects.reduce(BoxEdges()) { $0.union($1.clippedEdges) }
        let placed = camera.normalizedRect(of: group, aim: desired)
        if placed.width <= region.width {
            if placed.x < region.x, !unknown.contains(.left) {
                desired.x = camera.aim(placing: group.left, 0, atNormalizedX: region.x, normalizedY: 0.5).x
            } else if placed.maxX > region.maxX, !unknown.contains(.right) {
                desired.x = camera.aim(placing: group.right, 0, atNormalizedX: region.maxX, normalizedY: 0.5).x
            }
        }
        let topLimit = region.y + settings.headroom * region.height
        if placed.y < topLimit {
            // Headroom wins over the bottom edge: a cut-off body is fine, a cut-off head is not.
            desired.y = camera.aim(placing: 0, group.top, atNormalizedX: 0.5, normalizedY: topLimit).y
        } else if placed.maxY > region.maxY, placed.height <= region.maxY - topLimit, !unknown.contains(.bottom) {
            desired.y = camera.aim(placing: 0, group.bottom, atNormalizedX: 0.5, normalizedY: region.maxY).y
        }

        let inFrame = subjects.allSatisfy { subject in
            let visible = camera.normalizedRect(of: subject.face?.box ?? subject.box, aim: aim)
            return visible.x >= 0 && visible.y >= 0 && visible.maxX <= 1 && visible.maxY <= 1
        }
        return FramingResult(desiredAim: desired, framed: subjects.map(\.id), inFrame: inFrame)
    }

    /// Everything of the subjects that should be in the picture: bodies and faces.
    private func extent(of subjects: [Track]) -> Box {
        var result = subjects[0].box
        for subject in subjects {
            result = result.union(subject.box)
            if let face = subject.face?.box { result = result.union(face) }
        }
        return result
    }
}
