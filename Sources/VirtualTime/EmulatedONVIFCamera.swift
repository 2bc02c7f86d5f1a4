import DockDrivers

/// The moves an ONVIF camera offers (tests/peers/onvif_camera.py's `motion`).
public enum ONVIFMotionModel: String, Sendable, CaseIterable {
    /// ContinuousMove: velocities, with a Timeout.
    case continuous
    /// AbsoluteMove: a position in the generic space, at a Speed.
    case absolute
    /// RelativeMove: a translation from where the head is, at a Speed.
    case relative
}

/// An ONVIF PTZ camera as the ONVIF driver's link (DockIO's `ONVIFLink`) passes it on, over
/// `ONVIFWire`, in virtual time: what the unit tests, `dock-bench scenario --driver onvif` and the
/// scenario suite steer through the driver dockd ships. It follows the project's emulator
/// (tests/peers/onvif_camera.py), which the integration tests use: the same profile, PTZ
/// configuration, node and spaces (the moves offered, `motion`; a PanTiltSpeedSpace or not), the
/// same head (`EmulatedONVIFHead`: 100°/s pan over −170…170°, 60°/s tilt over −30…90° by default, at
/// a velocity or Speed of 1; pan and tilt of an absolute or relative move arriving together), a
/// ContinuousMove running until its Timeout, a move not offered answered with its fault
/// (env:Receiver / ter:ActionNotSupported, HTTP 500), GetStatus's Position to six decimals and its
/// MoveStatus.
///
/// Where it differs from the emulator: no zoom (the emulator's `zoom=False`), no presets or home
/// (MaximumNumberOfPresets 0), no authentication, faults injected, reboots or position quirks
/// (`position_static`, `no_position`, ...); the head starts where `start` says (the emulator's at
/// generic 0, 0: tilt 30° up); and a request waits its `latency` (the next of `latencies`, in turn,
/// never overtaking an earlier one) before the camera acts on it and answers at once — a loaded
/// camera or host — where the emulator's `latency` acts on a request when it comes and answers late.
public struct EmulatedONVIFCamera: VirtualPeer, Sendable {
    public let motion: Set<ONVIFMotionModel>
    /// Whether it lists a PanTiltSpeedSpace: without, an absolute or relative move's Speed is ignored (the top speed).
    public let speedSpace: Bool
    public private(set) var head: EmulatedONVIFHead
    /// The camera's wall clock at peer time 0, s since 1970 (answered with every reply, and in GetSystemDateAndTime).
    public let wallClockAtStart: Double
    let latencies: [UInt64]
    private var received = 0
    /// The requests waiting, each with when the camera acts on it and answers.
    private var queue: [(due: UInt64, body: [UInt8])] = []
    private var decoder = ONVIFWire.Decoder()

    /// `latencies`: µs, one a request in turn. `start`: the generic pan and tilt the head starts at.
    public init(motion: Set<ONVIFMotionModel> = Set(ONVIFMotionModel.allCases), speedSpace: Bool = true, latencies: [UInt64] = [3000],
                pan: (atMinusOne: Double, atOne: Double, speed: Double) = (-170, 170, 100),
                tilt: (atMinusOne: Double, atOne: Double, speed: Double) = (-30, 90, 60),
                start: (pan: Double, tilt: Double) = (0, 0), wallClockAtStart: Double = 1_795_639_621) {
        precondition(!latencies.isEmpty, "a latency per request")
        self.motion = motion
        self.speedSpace = speedSpace
        self.latencies = latencies
        self.wallClockAtStart = wallClockAtStart
        head = EmulatedONVIFHead(pan: pan, tilt: tilt, start: start)
    }

    /// Where the head points as dockd's yaw (−pan: ONVIF's pan grows to the right) and pitch (tilt), radians.
    public var yaw: Double { -head.pan.position * .pi / 180 }
    public var pitch: Double { head.tilt.position * .pi / 180 }
    public var still: Bool { !head.moving }

    public mutating func receive(_ bytes: [UInt8], atMicros micros: UInt64) -> [UInt8] {
        guard let frames = decoder.feed(bytes) else { return ONVIFWire.encode(.failure("a broken request")) }
        for case .request(let request) in frames {
            let latency = latencies[received % latencies.count]
            received += 1
            // One request at a time from the driver, but a later one never overtakes an earlier.
            queue.append((max(micros + latency, queue.last?.due ?? 0), request.body))
        }
        return []
    }

    public mutating func advance(toMicros micros: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        while let first = queue.first, first.due <= micros {
            queue.removeFirst()
            let now = Double(first.due) / 1e6
            head.run(to: now)
            let (status, body) = answer(first.body, at: now)
            out += ONVIFWire.encode(.response(status: status, wallClock: wallClockAtStart + now, body: Array(body.utf8)))
        }
        head.run(to: Double(micros) / 1e6)
        return out
    }

    /// The connection is gone: what is queued goes unanswered (the head keeps its motion, as a camera's does).
    public mutating func endSession(atMicros micros: UInt64) {
        queue.removeAll()
        decoder = ONVIFWire.Decoder()
    }

    /// The camera acts on a request (a SOAP Body's content) and answers: HTTP status and envelope.
    private mutating func answer(_ request: [UInt8], at now: Double) -> (Int, String) {
        let parsed = try? XMLReader.parse(ONVIFSOAP.envelope(body: request, security: nil))
        guard let parsed, case .success(let body) = ONVIFSOAP.body(of: parsed) else {
            return Self.fault(sender: true, ["WellFormed"], "a request that is not a SOAP Body")
        }
        switch body.name {
        case "GetSystemDateAndTime": return (200, Self.envelope(Self.dateAndTime(wallClockAtStart + now)))
        case "GetCapabilities": return (200, Self.envelope(Self.capabilities))
        case "GetDeviceInformation": return (200, Self.envelope(Self.deviceInformation))
        case "GetProfiles": return (200, Self.envelope(profiles))
        case "GetConfigurationOptions": return (200, Self.envelope(configurationOptions))
        case "GetNodes": return (200, Self.envelope(nodes))
        case "GetStatus": return (200, Self.envelope(status(wallClockAtStart + now)))
        case "Stop":
            // PanTilt false leaves the head moving; there is no zoom to stop.
            if ["true", "1"].contains((body.value("PanTilt") ?? "true").lowercased()) { head.stop() }
            return (200, Self.envelope("<tptz:StopResponse/>"))
        case "ContinuousMove":
            guard motion.contains(.continuous) else { return Self.notOffered("ContinuousMove", .continuous) }
            guard let velocity = Self.panTilt(body.child("Velocity")) else {
                return Self.fault(sender: true, ["InvalidArgVal", "InvalidVelocity"], "no Velocity/PanTilt")
            }
            // Without a Timeout: the configuration's DefaultPTZTimeout, 180 s.
            let timeout = body.value("Timeout").map(Self.seconds) ?? 180
            guard let timeout, timeout > 0 else { return Self.fault(sender: true, ["InvalidArgVal", "InvalidTimeout"], "a Timeout that is not a duration") }
            head.turn(x: velocity.x, y: velocity.y, until: now + min(timeout, 3600))
            return (200, Self.envelope("<tptz:ContinuousMoveResponse/>"))
        case "AbsoluteMove":
            guard motion.contains(.absolute) else { return Self.notOffered("AbsoluteMove", .absolute) }
            guard let position = Self.panTilt(body.child("Position")), abs(position.x) <= 1 + 1e-6, abs(position.y) <= 1 + 1e-6 else {
                return Self.fault(sender: true, ["InvalidArgVal", "InvalidPosition"], "no Position/PanTilt within -1..1")
            }
            head.go(pan: head.pan.degrees(generic: position.x), tilt: head.tilt.degrees(generic: position.y), speed: speed(of: body))
            return (200, Self.envelope("<tptz:AbsoluteMoveResponse/>"))
        case "RelativeMove":
            guard motion.contains(.relative) else { return Self.notOffered("RelativeMove", .relative) }
            guard let step = Self.panTilt(body.child("Translation")), abs(step.x) <= 1 + 1e-6, abs(step.y) <= 1 + 1e-6 else {
                return Self.fault(sender: true, ["InvalidArgVal", "InvalidTranslation"], "no Translation/PanTilt within -1..1")
            }
            // From where the head is now (a move in progress is cancelled: from the pose it reached).
            head.go(pan: head.pan.degrees(generic: head.pan.generic + step.x), tilt: head.tilt.degrees(generic: head.tilt.generic + step.y),
                    speed: speed(of: body))
            return (200, Self.envelope("<tptz:RelativeMoveResponse/>"))
        default:
            return Self.fault(sender: false, ["ActionNotSupported"], "\(body.name) is not supported by this device")
        }
    }

    /// An absolute or relative move's Speed: GenericSpeedSpace's one number for the combined pan/tilt
    /// move, in x (the top speed where the camera lists no speed space, or the move gives none).
    private func speed(of body: XMLElement) -> Double {
        guard speedSpace, let x = body.child("Speed")?.child("PanTilt")?.attributes["x"].flatMap(Double.init) else { return 1 }
        return min(1, max(0, x))
    }

    private static func panTilt(_ element: XMLElement?) -> (x: Double, y: Double)? {
        guard let panTilt = element?.child("PanTilt"), let x = panTilt.attributes["x"].flatMap(Double.init),
              let y = panTilt.attributes["y"].flatMap(Double.init), x.isFinite, y.isFinite else { return nil }
        return (x, y)
    }

    /// xs:duration's seconds as the driver sends them ("PT1S", "PT0.5S"), nil for anything else.
    private static func seconds(_ text: String) -> Double? {
        guard text.hasPrefix("PT"), text.hasSuffix("S") else { return nil }
        return Double(text.dropFirst(2).dropLast())
    }

    private static func notOffered(_ action: String, _ model: ONVIFMotionModel) -> (Int, String) {
        fault(sender: false, ["ActionNotSupported"], "\(action): this camera has no \(model.rawValue) moves")
    }

    /// A SOAP 1.2 fault: HTTP 400 for env:Sender, 500 for env:Receiver (as the emulator's).
    private static func fault(sender: Bool, _ subcodes: [String], _ reason: String) -> (Int, String) {
        var sub = ""
        for code in subcodes.reversed() { sub = "<env:Subcode><env:Value>ter:\(code)</env:Value>\(sub)</env:Subcode>" }
        return (sender ? 400 : 500, envelope("<env:Fault><env:Code><env:Value>env:\(sender ? "Sender" : "Receiver")</env:Value>\(sub)</env:Code>"
                                             + "<env:Reason><env:Text xml:lang=\"en\">\(ONVIFSOAP.escape(reason))</env:Text></env:Reason></env:Fault>"))
    }
}
