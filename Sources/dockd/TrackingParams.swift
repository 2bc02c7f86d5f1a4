#if canImport(Glibc)
import Glibc
#endif
import DockTracking
import StandEngine

/// Parsing of the tracking methods' params: observations, camera information, framing, ROI.
extension Params {
    /// `observations`: [{kind, rect: {x, y, width, height}, confidence?, face_yaw?, speaking_confidence?,
    /// looking_at_camera_confidence?}], with `origin` ("lower_left", Vision's and DockKit's default, or
    /// "upper_left") and the camera `orientation` the buffer was captured in.
    func detections() throws(RPCError) -> [Detection] {
        guard let list = fields["observations"]?.array else { throw .invalidParams("observations must be a list (it may be empty)") }
        guard list.count <= 64 else { throw .invalidParameter("at most 64 observations per frame") }
        let origin = try optionalString("origin") ?? "lower_left"
        guard origin == "lower_left" || origin == "upper_left" else { throw .invalidParams("origin is lower_left or upper_left") }
        let orientation = try CameraOrientation(name: try optionalString("orientation") ?? "corrected")
        var result: [Detection] = []
        for (i, item) in list.enumerated() {
            let p = Params(item)
            let kind: ObservationKind
            switch try p.optionalString("kind") ?? "body" {
            case "face": kind = .face
            case "body": kind = .body
            case "object": kind = .object
            case let other: throw .invalidParams("observations[\(i)].kind '\(other)' is not face, body or object")
            }
            var rect = try p.rect("rect", context: "observations[\(i)].rect")
            if origin == "lower_left" { rect.y = 1 - rect.y - rect.height }
            rect = orientation.upright(rect)
            result.append(Detection(kind: kind, rect: rect, confidence: try p.unit("confidence") ?? 1,
                                    faceYaw: try p.optionalNumber("face_yaw"), speaking: try p.unit("speaking_confidence"),
                                    lookingAtCamera: try p.unit("looking_at_camera_confidence")))
        }
        return result
    }

    /// A normalized rect inside the unit square.
    func rect(_ key: String, context: String? = nil) throws(RPCError) -> NormalizedRect {
        let name = context ?? key
        guard let value = fields[key], value.object != nil else { throw .invalidParams("\(name) must be {x, y, width, height}") }
        let p = Params(value)
        let r = NormalizedRect(x: try p.number("x"), y: try p.number("y"), width: try p.number("width"), height: try p.number("height"))
        guard r.width > 0, r.height > 0, r.x >= -0.5, r.y >= -0.5, r.maxX <= 1.5, r.maxY <= 1.5 else {
            throw .invalidParameter("\(name) must be a normalized rect with a positive size")
        }
        return r
    }

    /// A number in 0…1, or nil.
    func unit(_ key: String) throws(RPCError) -> Double? {
        guard let v = try optionalNumber(key) else { return nil }
        guard (0...1).contains(v) else { throw .invalidParameter("\(key) must be in 0…1") }
        return v
    }

    /// `camera`: {horizontal_fov, vertical_fov} in radians, or intrinsics {fx, fy, width, height} in pixels.
    func camera() throws(RPCError) -> CameraModel? {
        guard let value = fields["camera"], value != .null else { return nil }
        let p = Params(value)
        if let h = try p.optionalNumber("horizontal_fov") {
            let v = try p.number("vertical_fov")
            guard h > 0.01, h < 3.1, v > 0.01, v < 3.1 else { throw .invalidParameter("fields of view are radians in (0.01, 3.1)") }
            return CameraModel(horizontalFieldOfView: h, verticalFieldOfView: v)
        }
        let fx = try p.number("fx"), fy = try p.number("fy"), w = try p.number("width"), h = try p.number("height")
        guard fx > 0, fy > 0, w > 0, h > 0 else { throw .invalidParameter("intrinsics must be positive") }
        return CameraModel(focalLengthX: fx, focalLengthY: fy, imageWidth: w, imageHeight: h)
    }

    /// The capture time in dockd's clock, from a CLOCK_MONOTONIC `timestamp` in seconds.
    func captureTime(daemonNow: Double) throws(RPCError) -> Double? {
        guard let stamp = try optionalNumber("timestamp") else { return nil }
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let monotonicNow = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        let age = monotonicNow - stamp
        guard age > -0.05, age < 2 else {
            throw .invalidParameter("timestamp is CLOCK_MONOTONIC seconds of the capture, at most 2 s old (it is \(age) s)")
        }
        return daemonNow - max(0, age)
    }

    func framingMode() throws(RPCError) -> FramingMode {
        switch try optionalString("mode") {
        case "automatic": return .automatic
        case "center": return .center
        case "left": return .left
        case "right": return .right
        default: throw .invalidParams("mode is automatic, center, left or right")
        }
    }
}

/// How the camera buffer was oriented when captured; observations are turned upright with it.
/// `corrected` and `landscape_right` are upright already; `landscape_left` is upside down;
/// `portrait` is the upright image turned 90° clockwise; `portrait_upside_down` 90° counter-clockwise.
enum CameraOrientation: String {
    case corrected, portrait, portraitUpsideDown = "portrait_upside_down", landscapeLeft = "landscape_left", landscapeRight = "landscape_right"

    init(name: String) throws(RPCError) {
        guard let o = CameraOrientation(rawValue: name) else {
            throw .invalidParams("orientation is corrected, portrait, portrait_upside_down, landscape_left or landscape_right")
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
