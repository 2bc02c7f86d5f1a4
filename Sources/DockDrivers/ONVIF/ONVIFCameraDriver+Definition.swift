extension ONVIFCameraDriver {
    /// IP PTZ cameras through ONVIF's PTZ service (SOAP over HTTP, DockIO's ONVIFLink).
    public static let definition = DriverDefinition(
        name: "onvif",
        summary: "IP PTZ cameras (Hikvision, Dahua, Reolink, Axis, Tapo, PTZOptics…) through ONVIF's PTZ service: absolute, relative or continuous moves, WS-Security UsernameToken or HTTP Digest auth",
        links: [.onvif],
        defaultBaud: nil,
        options: [
            DriverOption("credentials", .text, default: nil,
                         "the file holding the camera's password (mode 0600 or stricter, read by dockd's link, never shown); default $CREDENTIALS_DIRECTORY/onvif-HOST, else /etc/dockd/onvif/HOST.cred"),
            DriverOption("profile", .text, default: nil, "the media profile token to steer (default: the first with a PTZ configuration)"),
            DriverOption("pan_min", .number(-360...360), default: .number(-170), "the pan, degrees, at the generic space's -1 (ONVIF gives no degrees; above pan_max for a camera whose pan grows to the left)"),
            DriverOption("pan_max", .number(-360...360), default: .number(170), "the pan, degrees, at the generic space's 1"),
            DriverOption("tilt_min", .number(-180...180), default: .number(-30), "the tilt, degrees, at the generic space's -1"),
            DriverOption("tilt_max", .number(-180...180), default: .number(90), "the tilt, degrees, at the generic space's 1"),
            DriverOption("pan_speed", .number(1...1000), default: .number(100),
                         "the pan rate at a ContinuousMove velocity of 1, degrees/s (ONVIF gives none; on a camera whose GetStatus gives no position, the pose is estimated with it: time a turn at full speed)"),
            DriverOption("tilt_speed", .number(1...1000), default: .number(60), "the tilt rate at a ContinuousMove velocity of 1, degrees/s (the same)"),
            DriverOption("pan_velocity_sign", .integer(-1...1), default: .integer(1),
                         "-1 where a positive pan velocity turns the way the pan position decreases (a Tapo C220), else 1"),
            DriverOption("tilt_velocity_sign", .integer(-1...1), default: .integer(1), "the same for tilt"),
            DriverOption("poll_hz", .number(2...20), default: .number(10), "GetStatus requests a second (lower for a camera that struggles; tracking is smoother faster; at least 2: a camera silent for 1 s is taken for lost); on a camera whose GetStatus gives no position, the rate of FEEDBACK from the estimate, GetStatus then asked twice a second (at this rate with max_zoom: the zoom is read from it)"),
            DriverOption("command_interval", .number(0.05...5), default: .number(0.1), "the least time between two moves sent, s"),
            DriverOption("move_timeout", .integer(1...60), default: .integer(1),
                         "a ContinuousMove's Timeout, whole seconds (a fraction broke a Tapo's HTTP server): the camera stops by itself this long after dockd falls silent"),
            DriverOption("read_back_doubt", .number(0...90), default: .number(1),
                         "on a camera whose GetStatus stands still while it moves, steered by rates: how far the pose estimated from the moves may be off (each rate change acts somewhere within its round trip) before a brief Stop lets the camera read where it is, degrees (0: never)"),
            DriverOption("max_zoom", .number(1.1...1000), default: nil,
                         "the optical magnification at the top of the camera's zoom position space (ONVIF gives none; 1x at the bottom, linear between): with it, the zoom is the stand's zoom axis"),
            DriverOption("zoom_seconds", .number(0.1...60), default: .number(3),
                         "seconds the zoom takes from wide to tele at a ContinuousMove zoom velocity of 1"),
            DriverOption("name", .text, default: nil, "the stand's id in the API (default onvif-SERIAL)"),
        ],
        hotplug: nil,
        capabilities: [.angles, .rates, .measuredPosition, .presets],
        make: { s in
            var settings = Settings()
            let pan = (s.number("pan_min"), s.number("pan_max")), tilt = (s.number("tilt_min"), s.number("tilt_max"))
            guard pan.0 != pan.1, tilt.0 != tilt.1 else { throw DriverFailure("pan_min and pan_max (tilt_min and tilt_max) must differ") }
            settings.pan = GenericScale(atMinusOne: pan.0, atOne: pan.1)
            settings.tilt = GenericScale(atMinusOne: tilt.0, atOne: tilt.1)
            settings.panSpeed = s.number("pan_speed")
            settings.tiltSpeed = s.number("tilt_speed")
            let signs = (s.integer("pan_velocity_sign"), s.integer("tilt_velocity_sign"))
            guard signs.0 != 0, signs.1 != 0 else { throw DriverFailure("pan_velocity_sign and tilt_velocity_sign are 1 or -1") }
            settings.panVelocitySign = Double(signs.0)
            settings.tiltVelocitySign = Double(signs.1)
            settings.pollHz = s.number("poll_hz")
            settings.commandInterval = s.number("command_interval")
            settings.moveTimeout = s.integer("move_timeout")
            settings.profile = s.text("profile")
            settings.name = s.text("name")
            settings.readBackDoubt = s.number("read_back_doubt")
            settings.maxZoom = s.optionalNumber("max_zoom")
            settings.zoomSeconds = s.number("zoom_seconds")
            return ONVIFCameraDriver(settings: settings)
        })
}
