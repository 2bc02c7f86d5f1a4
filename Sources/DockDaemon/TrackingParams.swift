import DockIO
import DockJSON
import DockTracking
import StandEngine

/// Parsing of the tracking methods' params: observations, camera information, framing, ROI.
extension Params {
    /// `observations`: [{kind, rect: {x, y, width, height}, confidence?, face_yaw?, speaking_confidence?,
    /// looking_at_camera_confidence?, keypoints? (bodies)}], with `origin` ("lower_left", Vision's and DockKit's default, or
    /// "upper_left") and the camera `orientation` the buffer was captured in.
    func detections() throws(RPCError) -> [Detection] {
        guard let list = try optionalList("observations") else { throw .invalidParams("observations must be a list (it may be empty)", field: "observations") }
        guard list.count <= 64 else { throw .invalidParameter("at most 64 observations per frame", field: "observations") }
        let origin = try optionalString("origin") ?? "lower_left"
        guard origin == "lower_left" || origin == "upper_left" else { throw .invalidParams("origin is lower_left or upper_left", field: "origin") }
        let orientation = try CameraOrientation(name: try optionalString("orientation") ?? "corrected")
        var result: [Detection] = []
        for (i, item) in list.enumerated() {
            let p = try Params.element(item, of: "observations", at: i)
            let kind: ObservationKind
            switch try p.optionalString("kind") ?? "body" {
            case "face": kind = .face
            case "body": kind = .body
            case "object": kind = .object
            case let other: throw .invalidParams("\(p.field("kind")) '\(other)' is not face, body or object", field: p.field("kind"))
            }
            var rect = try p.rect("rect")
            if origin == "lower_left" { rect.y = 1 - rect.y - rect.height }
            rect = orientation.upright(rect)
            let pose = try p.keypoints()?.mapped { point in
                let y = origin == "lower_left" ? 1 - point.y : point.y
                let upright = orientation.upright(NormalizedRect(x: point.x, y: y, width: 0, height: 0))
                return BodyKeypoint(x: upright.x, y: upright.y, visibility: point.visibility)
            }
            if pose != nil, kind != .body {
                throw .invalidParams("\(p.field("keypoints")) go with a body observation, not a \(kind)", field: p.field("keypoints"))
            }
            result.append(Detection(kind: kind, rect: rect, confidence: try p.unit("confidence") ?? 1,
                                    faceYaw: try p.optionalNumber("face_yaw", in: -2 * .pi...2 * .pi, unit: "rad"),
                                    speaking: try p.unit("speaking_confidence"),
                                    lookingAtCamera: try p.unit("looking_at_camera_confidence"), pose: pose))
        }
        return result
    }

    /// `keypoints`: {joint: {x, y, visibility?}} with the joints of `BodyJoint`, points normalized
    /// like `rect` (as sent, origin not yet applied), as far out of the frame as a rect may reach;
    /// visibility 0…1, default 1.
    func keypoints() throws(RPCError) -> BodyPose? {
        guard let p = try optionalObject("keypoints") else { return nil }
        var joints: [BodyJoint: BodyKeypoint] = [:]
        for (name, value) in p.fields {
            guard let joint = BodyJoint(rawValue: name) else {
                let known = BodyJoint.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalidParams("\(p.field(name)) is not a joint (\(known))", field: p.field(name))
            }
            guard case .object(let fields) = value else {
                throw .invalidParams("\(p.field(name)) must be an object, not \(value.typeName)", field: p.field(name))
            }
            let point = Params(fields, path: p.field(name))
            joints[joint] = BodyKeypoint(x: try point.number("x", in: -0.5...1.5, unit: ""), y: try point.number("y", in: -0.5...1.5, unit: ""),
                                         visibility: try point.unit("visibility") ?? 1)
        }
        return BodyPose(joints: joints)
    }

    /// A normalized rect near the unit square (a box may stick out of the frame by half of it).
    func rect(_ key: String) throws(RPCError) -> NormalizedRect {
        let p = try object(key)
        let near = -1.0...2.0
        let r = NormalizedRect(x: try p.number("x", in: near, unit: ""), y: try p.number("y", in: near, unit: ""),
                               width: try p.number("width", in: 0...2, unit: ""), height: try p.number("height", in: 0...2, unit: ""))
        guard r.width > 0, r.height > 0, r.x >= -0.5, r.y >= -0.5, r.maxX <= 1.5, r.maxY <= 1.5 else {
            throw .invalidParameter("\(field(key)) must be a normalized rect with a positive size", field: field(key))
        }
        return r
    }

    /// A number in 0…1, or nil.
    func unit(_ key: String) throws(RPCError) -> Double? {
        try optionalNumber(key, in: 0...1, unit: "")
    }

    /// `camera`: {horizontal_fov, vertical_fov} in radians, or intrinsics {fx, fy, width, height} in pixels.
    func camera() throws(RPCError) -> CameraModel? {
        guard let p = try optionalObject("camera") else { return nil }
        if let h = try p.optionalNumber("horizontal_fov", in: 0.01...3.1, unit: "rad") {
            let v = try p.number("vertical_fov", in: 0.01...3.1, unit: "rad")
            return CameraModel(horizontalFieldOfView: h, verticalFieldOfView: v)
        }
        let pixels = 1e-3...1e6
        let fx = try p.number("fx", in: pixels, unit: "px"), fy = try p.number("fy", in: pixels, unit: "px")
        let w = try p.number("width", in: pixels, unit: "px"), h = try p.number("height", in: pixels, unit: "px")
        let model = CameraModel(focalLengthX: fx, focalLengthY: fy, imageWidth: w, imageHeight: h)
        guard (0.01...3.1).contains(model.horizontalFieldOfView), (0.01...3.1).contains(model.verticalFieldOfView) else {
            throw .invalidParameter("the intrinsics give a field of view outside 0.01…3.1 rad", field: "camera")
        }
        return model
    }

    /// The capture time in dockd's clock, from a CLOCK_MONOTONIC `timestamp` in seconds.
    func captureTime(daemonNow: Double) throws(RPCError) -> Double? {
        guard let stamp = try optionalNumber("timestamp", in: 0...1e12, unit: "s") else { return nil }
        let age = MonotonicClock.now() - stamp
        guard age > -0.05, age < 2 else {
            throw .invalidParameter("timestamp is CLOCK_MONOTONIC seconds of the capture, at most 2 s old (it is \(age) s)", field: "timestamp")
        }
        return daemonNow - max(0, age)
    }

    func framingMode() throws(RPCError) -> FramingMode {
        switch try optionalString("mode") {
        case "automatic": return .automatic
        case "center": return .center
        case "left": return .left
        case "right": return .right
        default: throw .invalidParams("mode is automatic, center, left or right", field: "mode")
        }
    }

    /// tracking.framing's `mode` and `shot`: each optional (omitted: unchanged), one at least.
    func framingRequest() throws(RPCError) -> (mode: FramingMode?, shot: ShotSize?) {
        let mode = try optionalString("mode") == nil ? nil : try framingMode()
        var shot: ShotSize?
        if let text = try optionalString("shot") {
            guard let size = ShotSize(rawValue: text) else {
                throw .invalidParams("shot is \(ShotSize.allCases.map(\.rawValue).joined(separator: ", "))", field: "shot")
            }
            shot = size
        }
        guard mode != nil || shot != nil else { throw .invalidParams("give mode, shot or both", field: "mode") }
        return (mode, shot)
    }
}

/// How the camera buffer was oriented when captured; observations are turned upright with it.
/// `corrected` and `landscape_right` are upright already; `landscape_left` is upside down;
/// `portrait` is the upright image turned 90° clockwise; `portrait_upside_down` 90° counter-clockwise.
enum CameraOrientation: String {
    case corrected, portrait, portraitUpsideDown = "portrait_upside_down", landscapeLeft = "landscape_left", landscapeRight = "landscape_right"

    init(name: String) throws(RPCError) {
        guard let o = CameraOrientation(rawValue: name) else {
            throw .invalidParams("orientation is corrected, portrait, portrait_upside_down, landscape_left or landscape_right", field: "orientation")
        }
        self = o
    }

    func upright(_ r: NormalizedRect) -> NormalizedRect {
        switch self {
        case .corrected, .landscapeRight: r
        case .landscapeLeft: NormalizedRect(x: 1 - r.maxX, y: 1 - r.maxY, width: r.width, height: r.height)
        case .portrait: NormalizedRect(x: r.y, y: 1 - r.maxX, width: r.height, height: r.width)
        case .portraitUpsideDown: NormalizedRect(x: 1 - r.maxY, y: r.x, width: r.height, height: r.width)
        }
    }
}
