import DockDrivers
import DockProtocol
import DockSim
import StandEngine

extension EmulatedONVIFCamera {
    /// The camera with its head level and ahead, at yaw 0, pitch 0, where the scenes start a stand
    /// (the emulator's head starts at generic 0, 0: 30° up).
    public static func level(motion: Set<ONVIFMotionModel>, speedSpace: Bool = true, latencies: [UInt64] = [3000]) -> EmulatedONVIFCamera {
        let head = EmulatedONVIFCamera(motion: motion).head
        func generic(_ axis: EmulatedONVIFHead.Axis) -> Double { 2 * (0 - axis.atMinusOne) / (axis.atOne - axis.atMinusOne) - 1 }
        return EmulatedONVIFCamera(motion: motion, speedSpace: speedSpace, latencies: latencies, start: (generic(head.pan), generic(head.tilt)))
    }
}

extension StandConfiguration {
    /// The simulated stand turning as fast as `camera`'s head, with the top accelerations the ONVIF
    /// driver declares for it (four times the speeds): issue 24's native reference "at equal speed".
    public static func turning(like camera: EmulatedONVIFCamera) -> StandConfiguration {
        var stand = StandConfiguration()
        for (i, degrees) in [camera.head.pan.speed, camera.head.tilt.speed].enumerated() {
            stand.axes[i].maxSpeed = degrees * .pi / 180
            stand.axes[i].maxAccel = 4 * stand.axes[i].maxSpeed
        }
        return stand
    }

    /// `turning(like:)` with the reach of `camera`'s head too: yaw (−pan) and pitch (tilt) between
    /// its ends, yaw not continuous. What a stand of the camera's speed and range can keep in frame
    /// tells a scene beyond the camera's limits from a fault of its driver.
    public static func reaching(like camera: EmulatedONVIFCamera) -> StandConfiguration {
        var stand = turning(like: camera)
        let pan = [camera.head.pan.atMinusOne, camera.head.pan.atOne], tilt = [camera.head.tilt.atMinusOne, camera.head.tilt.atOne]
        stand.axes[0].continuous = false
        (stand.axes[0].min, stand.axes[0].max) = (-pan.max()! * .pi / 180, -pan.min()! * .pi / 180)
        (stand.axes[1].min, stand.axes[1].max) = (tilt.min()! * .pi / 180, tilt.max()! * .pi / 180)
        return stand
    }
}

extension EmulatedONVIFCamera: SceneCamera {
    public var sceneAim: (yaw: Double, pitch: Double, zoom: Double, zoomVelocity: Double) { (yaw, pitch, 1, 0) }

    /// On a wall: it does not sway.
    public func sceneBase(atMicros micros: UInt64) -> (yaw: Double, pitch: Double) { (0, 0) }

    /// ContinuousMoves at a velocity not zero, and every AbsoluteMove and RelativeMove.
    public static func motionCommands(in written: [(time: Double, bytes: [UInt8])]) -> Int {
        var decoder = ONVIFWire.Decoder()
        return written.flatMap { decoder.feed($0.bytes) ?? [] }.count { frame in
            guard case .request(let request) = frame, let body = try? XMLReader.parse(ONVIFSOAP.envelope(body: request.body, security: nil)),
                  case .success(let move) = ONVIFSOAP.body(of: body) else { return false }
            switch move.name {
            case "AbsoluteMove", "RelativeMove": return true
            case "ContinuousMove":
                let panTilt = move.child("Velocity")?.child("PanTilt")
                return ["x", "y"].contains { panTilt?.attributes[$0].flatMap(Double.init).map { $0 != 0 } ?? false }
            default: return false
            }
        }
    }
}

extension VirtualHost where Peer == EmulatedONVIFCamera {
    /// The ONVIF driver dockd ships, made from its driver table definition with `options` (as the
    /// config file gives them), steering `camera`.
    public init(camera: EmulatedONVIFCamera, options: [String: String] = [:], settings: EngineSettings = EngineSettings(),
                epoch: Double = 1000) throws(DriverFailure) {
        let driver = try DriverTable.definition("onvif").make(texts: options, heartbeatTimeoutMs: ProtocolTiming.defaultHeartbeatTimeoutMs)
        self.init(driver: driver, peer: camera, settings: settings, name: "virtual:onvif", epoch: epoch)
    }
}
