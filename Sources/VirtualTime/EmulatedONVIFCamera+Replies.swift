import DockDrivers

/// The emulated camera's replies, shaped as tests/peers/onvif_camera.py's (its device, media and
/// PTZ handlers with `zoom=False`, `presets=0`), service addresses at http://192.0.2.10:8080.
extension EmulatedONVIFCamera {
    static let space = "http://www.onvif.org/ver10/tptz/PanTiltSpaces/"
    static let position = space + "PositionGenericSpace", translation = space + "TranslationGenericSpace"
    static let velocity = space + "VelocityGenericSpace", speedSpaceURI = space + "GenericSpeedSpace"

    static func envelope(_ body: String) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<env:Envelope xmlns:env=\"\(ONVIFSOAP.soap)\" xmlns:tds=\"\(ONVIFSOAP.device)\" "
            + "xmlns:trt=\"\(ONVIFSOAP.media)\" xmlns:tptz=\"\(ONVIFSOAP.ptz)\" xmlns:tt=\"\(ONVIFSOAP.schema)\" "
            + "xmlns:ter=\"http://www.onvif.org/ver10/error\"><env:Header></env:Header><env:Body>\(body)</env:Body></env:Envelope>"
    }

    /// The camera's clock (UTC, no skew) at `unixSeconds`.
    static func dateAndTime(_ unixSeconds: Double) -> String {
        // "YYYY-MM-DDTHH:MM:SSZ", its numbers as the emulator writes them (no leading zeros).
        let parts = ONVIFSOAP.created(unixSeconds).split { "-T:Z".contains($0) }.map { String(Int($0) ?? 0) }
        let time = "<tt:Time><tt:Hour>\(parts[3])</tt:Hour><tt:Minute>\(parts[4])</tt:Minute><tt:Second>\(parts[5])</tt:Second></tt:Time>"
            + "<tt:Date><tt:Year>\(parts[0])</tt:Year><tt:Month>\(parts[1])</tt:Month><tt:Day>\(parts[2])</tt:Day></tt:Date>"
        return "<tds:GetSystemDateAndTimeResponse><tds:SystemDateAndTime><tt:DateTimeType>Manual</tt:DateTimeType>"
            + "<tt:DaylightSavings>false</tt:DaylightSavings><tt:TimeZone><tt:TZ>UTC0</tt:TZ></tt:TimeZone>"
            + "<tt:UTCDateTime>\(time)</tt:UTCDateTime><tt:LocalDateTime>\(time)</tt:LocalDateTime></tds:SystemDateAndTime></tds:GetSystemDateAndTimeResponse>"
    }

    static let capabilities = "<tds:GetCapabilitiesResponse><tds:Capabilities>"
        + "<tt:Device><tt:XAddr>http://192.0.2.10:8080/onvif/device_service</tt:XAddr></tt:Device>"
        + "<tt:Media><tt:XAddr>http://192.0.2.10:8080/onvif/media_service</tt:XAddr></tt:Media>"
        + "<tt:PTZ><tt:XAddr>http://192.0.2.10:8080/onvif/ptz_service</tt:XAddr></tt:PTZ></tds:Capabilities></tds:GetCapabilitiesResponse>"

    static let deviceInformation = "<tds:GetDeviceInformationResponse><tds:Manufacturer>dockd tests</tds:Manufacturer>"
        + "<tds:Model>Emulated PTZ</tds:Model><tds:FirmwareVersion>1.0.0</tds:FirmwareVersion><tds:SerialNumber>EMU-0001</tds:SerialNumber>"
        + "<tds:HardwareId>EMU-PTZ</tds:HardwareId></tds:GetDeviceInformationResponse>"

    private static func range(_ tag: String, _ uri: String) -> String {
        "<tt:\(tag)><tt:URI>\(uri)</tt:URI><tt:XRange><tt:Min>-1</tt:Min><tt:Max>1</tt:Max></tt:XRange>"
            + "<tt:YRange><tt:Min>-1</tt:Min><tt:Max>1</tt:Max></tt:YRange></tt:\(tag)>"
    }

    /// The spaces of the moves offered (GetNodes' SupportedPTZSpaces, GetConfigurationOptions' Spaces).
    var spaces: String {
        (motion.contains(.absolute) ? Self.range("AbsolutePanTiltPositionSpace", Self.position) : "")
            + (motion.contains(.relative) ? Self.range("RelativePanTiltTranslationSpace", Self.translation) : "")
            + (motion.contains(.continuous) ? Self.range("ContinuousPanTiltVelocitySpace", Self.velocity) : "")
            + (speedSpace ? "<tt:PanTiltSpeedSpace><tt:URI>\(Self.speedSpaceURI)</tt:URI><tt:XRange><tt:Min>0</tt:Min><tt:Max>1</tt:Max></tt:XRange></tt:PanTiltSpeedSpace>" : "")
    }

    var profiles: String {
        let defaults = (motion.contains(.absolute) ? "<tt:DefaultAbsolutePantTiltPositionSpace>\(Self.position)</tt:DefaultAbsolutePantTiltPositionSpace>" : "")
            + (motion.contains(.relative) ? "<tt:DefaultRelativePanTiltTranslationSpace>\(Self.translation)</tt:DefaultRelativePanTiltTranslationSpace>" : "")
            + (motion.contains(.continuous) ? "<tt:DefaultContinuousPanTiltVelocitySpace>\(Self.velocity)</tt:DefaultContinuousPanTiltVelocitySpace>" : "")
            + "<tt:DefaultPTZSpeed><tt:PanTilt x=\"1\" y=\"1\" space=\"\(Self.speedSpaceURI)\"/></tt:DefaultPTZSpeed>"
            + (motion.contains(.continuous) ? "<tt:DefaultPTZTimeout>PT180S</tt:DefaultPTZTimeout>" : "")
        let configuration = "<tt:PTZConfiguration token=\"PTZConfig_1\"><tt:Name>PTZ</tt:Name><tt:UseCount>1</tt:UseCount>"
            + "<tt:NodeToken>PTZNode_1</tt:NodeToken>\(defaults)<tt:PanTiltLimits>\(Self.range("Range", Self.position))"
            + "</tt:PanTiltLimits></tt:PTZConfiguration>"
        return "<trt:GetProfilesResponse><trt:Profiles token=\"Profile_1\" fixed=\"true\"><tt:Name>MainStream</tt:Name>\(configuration)</trt:Profiles>"
            + "<trt:Profiles token=\"Profile_2\" fixed=\"true\"><tt:Name>SubStream</tt:Name></trt:Profiles></trt:GetProfilesResponse>"
    }

    var configurationOptions: String {
        "<tptz:GetConfigurationOptionsResponse><tptz:PTZConfigurationOptions><tt:Spaces>\(spaces)</tt:Spaces>"
            + (motion.contains(.continuous) ? "<tt:PTZTimeout><tt:Min>PT1S</tt:Min><tt:Max>PT3600S</tt:Max></tt:PTZTimeout>" : "")
            + "</tptz:PTZConfigurationOptions></tptz:GetConfigurationOptionsResponse>"
    }

    var nodes: String {
        "<tptz:GetNodesResponse><tptz:PTZNode token=\"PTZNode_1\" FixedHomePosition=\"false\"><tt:Name>PTZ</tt:Name>"
            + "<tt:SupportedPTZSpaces>\(spaces)</tt:SupportedPTZSpaces><tt:MaximumNumberOfPresets>0</tt:MaximumNumberOfPresets>"
            + "<tt:HomeSupported>false</tt:HomeSupported></tptz:PTZNode></tptz:GetNodesResponse>"
    }

    /// Where the head is, in the generic space to six decimals, and whether it moves; the camera's clock.
    func status(_ unixSeconds: Double) -> String {
        let moving = head.moving ? "MOVING" : "IDLE"
        return "<tptz:GetStatusResponse><tptz:PTZStatus><tt:Position>"
            + String(cFormat: "<tt:PanTilt x=\"%.6f\" y=\"%.6f\" space=\"%@\"/>", head.pan.generic, head.tilt.generic, Self.position)
            + "</tt:Position><tt:MoveStatus><tt:PanTilt>\(moving)</tt:PanTilt></tt:MoveStatus>"
            + "<tt:UtcTime>\(ONVIFSOAP.created(unixSeconds))</tt:UtcTime></tptz:PTZStatus></tptz:GetStatusResponse>"
    }
}
