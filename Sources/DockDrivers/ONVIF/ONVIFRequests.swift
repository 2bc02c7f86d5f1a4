/// The SOAP Body contents the ONVIF driver sends (ONVIF Core, Media and PTZ service WSDLs), with
/// the prefixes `ONVIFSOAP.envelope` declares.
enum ONVIFRequests {
    static let getSystemDateAndTime = "<tds:GetSystemDateAndTime/>"
    static let getCapabilities = "<tds:GetCapabilities><tds:Category>All</tds:Category></tds:GetCapabilities>"
    static let getDeviceInformation = "<tds:GetDeviceInformation/>"
    static let getProfiles = "<trt:GetProfiles/>"

    static func getConfigurationOptions(_ configuration: String) -> String {
        "<tptz:GetConfigurationOptions><tptz:ConfigurationToken>\(ONVIFSOAP.escape(configuration))</tptz:ConfigurationToken></tptz:GetConfigurationOptions>"
    }

    static let getNodes = "<tptz:GetNodes/>"

    static func getPresets(_ profile: String) -> String { "<tptz:GetPresets>\(token(profile))</tptz:GetPresets>" }

    static func getStatus(_ profile: String) -> String { "<tptz:GetStatus>\(token(profile))</tptz:GetStatus>" }

    static func stop(_ profile: String) -> String {
        "<tptz:Stop>\(token(profile))<tptz:PanTilt>true</tptz:PanTilt><tptz:Zoom>true</tptz:Zoom></tptz:Stop>"
    }

    /// Velocities in the generic space (−1…1), the zoom's where given; `timeout` whole seconds,
    /// since a fraction ("PT0.5S") broke a Tapo's HTTP server and without any the camera runs on
    /// for minutes.
    static func continuousMove(_ profile: String, x: Double, y: Double, zoom: Double? = nil, timeout: Int) -> String {
        "<tptz:ContinuousMove>\(token(profile))<tptz:Velocity><tt:PanTilt x=\"\(number(x))\" y=\"\(number(y))\"/>\(zoomVector(zoom))</tptz:Velocity>"
            + "<tptz:Timeout>PT\(timeout)S</tptz:Timeout></tptz:ContinuousMove>"
    }

    /// A pan/tilt position, and the zoom's where given (in its position space); at `speed` where given.
    static func absoluteMove(_ profile: String, x: Double, y: Double, zoom: Double? = nil, speed: MoveSpeed? = nil) -> String {
        "<tptz:AbsoluteMove>\(token(profile))<tptz:Position><tt:PanTilt x=\"\(number(x))\" y=\"\(number(y))\"/>\(zoomVector(zoom))</tptz:Position>\(speedVector(speed))</tptz:AbsoluteMove>"
    }

    /// The Speed element of a pan/tilt move: GenericSpeedSpace's one number for the combined move
    /// in x (ONVIF PTZ Service Specification, 5.7.4), and the same in y for a camera that reads
    /// a speed per axis.
    private static func speedVector(_ speed: MoveSpeed?) -> String {
        speed.map { "<tptz:Speed><tt:PanTilt x=\"\(number($0.fraction))\" y=\"\(number($0.fraction))\"/></tptz:Speed>" } ?? ""
    }

    private static func zoomVector(_ zoom: Double?) -> String { zoom.map { "<tt:Zoom x=\"\(number($0))\"/>" } ?? "" }

    /// A pan/tilt translation, and the zoom's where given (in its translation space); at `speed` where given.
    static func relativeMove(_ profile: String, x: Double, y: Double, zoom: Double? = nil, speed: MoveSpeed? = nil) -> String {
        "<tptz:RelativeMove>\(token(profile))<tptz:Translation><tt:PanTilt x=\"\(number(x))\" y=\"\(number(y))\"/>\(zoomVector(zoom))</tptz:Translation>\(speedVector(speed))</tptz:RelativeMove>"
    }

    /// Stores where the camera points as a preset named `name`: in the camera's preset `token`
    /// (overwritten), or a new one whose token the camera answers.
    static func setPreset(_ profile: String, name: String, token presetToken: String?) -> String {
        "<tptz:SetPreset>\(token(profile))<tptz:PresetName>\(ONVIFSOAP.escape(name))</tptz:PresetName>"
            + (presetToken.map { "<tptz:PresetToken>\(ONVIFSOAP.escape($0))</tptz:PresetToken>" } ?? "") + "</tptz:SetPreset>"
    }

    static func removePreset(_ profile: String, token presetToken: String) -> String {
        "<tptz:RemovePreset>\(token(profile))<tptz:PresetToken>\(ONVIFSOAP.escape(presetToken))</tptz:PresetToken></tptz:RemovePreset>"
    }

    private static func token(_ profile: String) -> String { "<tptz:ProfileToken>\(ONVIFSOAP.escape(profile))</tptz:ProfileToken>" }

    /// A decimal with six places and no exponent (what every camera's parser takes).
    static func number(_ x: Double) -> String {
        let scaled = Int64((min(1e6, max(-1e6, x)) * 1_000_000).rounded())
        let magnitude = scaled.magnitude
        let fraction = String(magnitude % 1_000_000)
        return (scaled < 0 ? "-" : "") + "\(magnitude / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }
}

/// A pan/tilt move's speed, a fraction of the top speed (ONVIF's GenericSpeedSpace, 0…1), at least
/// a hundredth: a camera may take 0 for its default, the top speed.
struct MoveSpeed: Equatable, Sendable {
    let fraction: Double
    init(_ fraction: Double) { self.fraction = min(1, max(0.01, fraction)) }
}
