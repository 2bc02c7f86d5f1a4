extension V4L2CameraDriver {
    /// UVC PTZ webcams on Linux, through the kernel's V4L2 controls.
    public static let definition = DriverDefinition(
        name: "v4l2",
        summary: "UVC PTZ webcams (OBSBOT, Insta360 Link, Logitech PTZ Pro and others) through their V4L2 pan/tilt controls: absolute, speed or relative",
        links: [.video],
        defaultBaud: nil,
        options: [
            DriverOption("max_speed", .number(0.05...10), default: nil, "the camera's top rate, rad/s (UVC reports none; the pose is estimated with it where the camera does not read back its position); default: its profile's, else 1"),
            DriverOption("poll_hz", .number(2...50), default: .number(10), "pose reads a second (at least 2: a camera silent for 1 s is taken for lost)"),
            DriverOption("command_interval", .number(0.01...2), default: nil, "the least time between two sets, s (a camera sent faster can wedge); default: its profile's, else 0.1"),
            DriverOption("profile", .text, default: .text("auto"),
                         "the camera model's profile (profiles/v4l2/): auto (the one whose card name the camera's contains; none: the defaults), a name found in $DOCKD_V4L2_PROFILES, /etc/dockd/profiles/v4l2 or the installed profiles, or the path of a JSON file"),
            DriverOption("steering", .choice(["auto"] + V4L2Steering.allCases.map(\.rawValue)), default: .text("auto"),
                         "how pan and tilt are steered; auto takes an absolute pose where the camera has one, else a speed of 8 levels or more, else relative steps, else any speed"),
            DriverOption("max_zoom", .number(1.1...1000), default: nil,
                         "the magnification at the camera's ZOOM_ABSOLUTE maximum (1x at its minimum, linear between; UVC gives none): with it, the zoom is the stand's zoom axis; default: its profile's, else the zoom is not steered"),
            DriverOption("name", .text, default: nil, "the stand's id in the API (default v4l2-CARD)"),
        ],
        // The rule marks UVC PTZ cameras (dockd --uvc-controls); dockd checks the descriptors itself too.
        hotplug: HotplugMatch(subsystem: "video4linux", marker: "DOCKD_V4L2_PTZ", usbIDs: [], uvcPanTilt: true),
        capabilities: [.angles, .rates, .measuredPosition],
        make: { s in
            var settings = Settings()
            settings.maxSpeed = s.optionalNumber("max_speed")
            settings.pollHz = s.number("poll_hz")
            settings.commandInterval = s.optionalNumber("command_interval")
            switch s.text("profile") ?? "auto" {
            case "auto": settings.profiles = try V4L2Profile.all()
            case let named: settings.profile = try V4L2Profile.load(named)
            }
            settings.steering = s.text("steering").flatMap(V4L2Steering.init(rawValue:))
            settings.name = s.text("name")
            settings.maxZoom = s.optionalNumber("max_zoom")
            return V4L2CameraDriver(settings: settings)
        })
}
