import DockDrivers
import DockProtocol
import DockSim
import StandEngine

/// The virtual host on the simulated stand, through the native driver: dockd with a stand.
extension VirtualHost where Peer == SimulatedStand {
    public init(stand configuration: StandConfiguration = StandConfiguration(), seed: UInt64 = 1,
                settings: EngineSettings = EngineSettings(), epoch: Double = 1000) {
        self.init(driver: NativeDriver(heartbeatTimeoutMs: configuration.defaultHeartbeatTimeoutMs, host: "rig"),
                  peer: SimulatedStand(configuration: configuration, seed: seed), settings: settings, name: "rig", epoch: epoch)
    }

    public var stand: SimulatedStand { peer }

    /// Something happens to the stand (a button, a fault injected).
    public mutating func stand(_ action: SimAction) { atPeer { $0.apply(action, atMicros: $1) } }

    /// The frames the engine sent the stand since the records were last cleared, with their host time.
    public var sent: [(time: Double, frame: Frame)] {
        var decoder = FrameDecoder()
        return written.flatMap { write in
            decoder.feed(write.bytes).compactMap { if case .success(let frame) = $0 { (write.time, frame) } else { nil } }
        }
    }

    /// VELOCITY messages with a non-zero rate on some axis among them: motion commands.
    public var movingCommands: Int { SimulatedStand.motionCommands(in: written) }
}

extension SimulatedStand: SceneCamera {
    public var sceneAim: (yaw: Double, pitch: Double, zoom: Double, zoomVelocity: Double) {
        (truth(.yaw)?.outputPosition ?? 0, truth(.pitch)?.outputPosition ?? 0, truth(.zoom)?.outputPosition ?? 1, truth(.zoom)?.velocity ?? 0)
    }

    public func sceneBase(atMicros micros: UInt64) -> (yaw: Double, pitch: Double) {
        let base = baseAttitude(atMicros: micros)
        return (base.0, base.1)
    }

    /// VELOCITY messages with a non-zero rate on some axis.
    public static func motionCommands(in written: [(time: Double, bytes: [UInt8])]) -> Int {
        var decoder = FrameDecoder()
        return written.flatMap { decoder.feed($0.bytes) }.count {
            if case .success(let frame) = $0, case .velocity(let rates) = frame.message { rates.contains { $0.value != 0 } } else { false }
        }
    }
}
