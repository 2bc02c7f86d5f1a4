/// One parameter of an API method (by name), as the method's description declares it: dockd checks
/// a request's scalar params against it before the method runs, the methods read their values
/// through it, and DockAPITests checks it against the OpenRPC document.
public struct APIParam: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// A finite number in the range (the unit names it in messages; "" for none).
        case number(ClosedRange<Double>, unit: String)
        /// A whole number in the range.
        case integer(ClosedRange<Double>)
        case boolean
        case string
        /// One of these strings (the method names the choices in its own message).
        case choice([String])
        case list
        /// An object; `schema` names the document's components/schemas entry when it has one.
        case object(schema: String?)
    }

    public let name: String
    public let kind: Kind
    public let required: Bool

    public init(_ name: String, _ kind: Kind, required: Bool = false) {
        self.name = name
        self.kind = kind
        self.required = required
    }

    /// The most an angle may be, rad: about 1600 turns of a continuous yaw, more than an hour of
    /// turning at any stand's speed.
    public static let angleLimit = 10_000.0
    /// The most a rate may be, rad/s (stands clamp to their own far lower limits).
    public static let rateLimit = 1_000.0
    /// Motion ids are JSON integers a double holds exactly.
    public static let largestID = 9_007_199_254_740_991.0

    /// Omitted or null: the first connected stand.
    public static let stand = APIParam("stand", .string)
    /// Take control of a stand another client holds (its lease ends).
    public static let force = APIParam("force", .boolean)
    /// The most a zoom target or rate may be, magnification (per second); stands refuse their own.
    public static let zoomLimit = 1_000.0
    /// motion.orient's targets: angles, and the optical magnification on a stand with a zoom axis.
    public static let positions = ["yaw", "pitch", "roll"].map { APIParam($0, .number(-angleLimit...angleLimit, unit: "rad")) }
        + [APIParam("zoom", .number(-zoomLimit...zoomLimit, unit: "x"))]
    /// motion.velocity's rates: rad/s, and magnification per second for zoom.
    public static let rates = ["yaw", "pitch", "roll"].map { APIParam($0, .number(-rateLimit...rateLimit, unit: "rad/s")) }
        + [APIParam("zoom", .number(-zoomLimit...zoomLimit, unit: "x/s"))]
    public static let topics = APIParam("topics", .list, required: true)
    public static let motionRate = APIParam("motion_rate", .number(0...1000, unit: "Hz"))
    public static let enabled = APIParam("enabled", .boolean, required: true)
    public static let relative = APIParam("relative", .boolean)
    public static let duration = APIParam("duration", .number(0...3600, unit: "s"))
    public static let motionID = APIParam("id", .integer(1...largestID), required: true)
    public static let axes = APIParam("axes", .object(schema: nil), required: true)
    public static let animationName = APIParam("name", .choice(["yes", "no", "wakeup", "kapow"]))
    public static let keyframes = APIParam("keyframes", .list)
    public static let framingModes = ["automatic", "center", "left", "right"]
    public static let framing = APIParam("mode", .choice(framingModes))
    /// The shot sizes of DockTracking's ShotSize (DockAPI does not depend on it).
    public static let shot = APIParam("shot", .choice(["head", "upper_body", "full_body", "group", "wide"]))
    public static let rect = APIParam("rect", .object(schema: "NormalizedRect"), required: true)
    public static let ids = APIParam("ids", .list)
    public static let selectX = APIParam("x", .number(0...1, unit: ""))
    public static let selectY = APIParam("y", .number(0...1, unit: ""))
    public static let camera = APIParam("camera", .object(schema: "Camera"))
    public static let observations = APIParam("observations", .list, required: true)
    /// CLOCK_MONOTONIC seconds of the capture.
    public static let timestamp = APIParam("timestamp", .number(0...1e12, unit: "s"))
    public static let origin = APIParam("origin", .choice(["lower_left", "upper_left"]))
    public static let orientation = APIParam("orientation", .choice(["corrected", "portrait", "portrait_upside_down", "landscape_left", "landscape_right"]))
    /// A tty path with an optional @baud, unix:, rfcomm:, udp:, tcp:, video: or onvif:// endpoint.
    public static let device = APIParam("device", .string, required: true)
    /// One of the driver table's names (DriverTableTests checks the document's enum against it).
    public static let driver = APIParam("driver", .string)
    public static let defaultTracking = APIParam("tracking", .boolean)
    public static let defaultFraming = APIParam("framing", .choice(framingModes))
    public static let defaultROI = APIParam("roi", .object(schema: "NormalizedRect"))
    public static let reset = APIParam("reset", .boolean)
    /// A preset's name (its characters are checked by dockd's PresetName, with data.field name).
    public static let presetName = APIParam("name", .string, required: true)
    public static let lostPolicy = APIParam("policy", .choice(["hold", "preset", "search"]), required: true)
    /// Seconds after the subject was last seen (`tracking.lost_policy`).
    public static let lostAfter = APIParam("after", .number(0...3600, unit: "s"))
    public static let lostPreset = APIParam("preset", .string)
    public static let searchSeconds = APIParam("search_seconds", .number(0...3600, unit: "s"))
    public static let sweepFrom = APIParam("from", .number(-angleLimit...angleLimit, unit: "rad"), required: true)
    public static let sweepTo = APIParam("to", .number(-angleLimit...angleLimit, unit: "rad"), required: true)
    /// A panorama's speed: from a crawl to as fast as any stand turns (its own limit clamps it).
    public static let sweepRate = APIParam("rate", .number(0.001...10, unit: "rad/s"), required: true)
    public static let repeats = APIParam("repeat", .boolean)
    public static let tourStops = APIParam("stops", .list, required: true)
}
