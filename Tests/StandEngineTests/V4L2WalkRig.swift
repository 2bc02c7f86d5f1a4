import DockCore
import DockDrivers
import DockProtocol
import DockTracking
import Foundation
import StandEngine
import VirtualTime

/// dockd's engine and v4l2 driver in the virtual host every driver runs in, steering a virtual
/// PTZ webcam (`VirtualPTZWebcam`: kernel/vptz's pose and step) after the `WalkingSubject`, where
/// the link's and the client's delays can be set and repeated exactly.
struct V4L2WalkRig {
    struct Delays {
        /// From a request written to its ioctl running, and from the ioctl to its answer read, s.
        var ioctl = 0.002, answer = 0.002
        /// From a frame's capture to dockd handling its observation, s.
        var observation = 0.01
    }

    static let arcSecondsPerRadian = 180 * 3600 / Double.pi
    static let step = VirtualPTZWebcam.step

    var host: VirtualHost<VirtualPTZWebcam>
    let observationDelay: Double
    /// Every frame: its capture time, where the subject and the camera were (rad), whether the face was in it.
    private(set) var frames: [WalkingSubject.Frame] = []

    /// `epoch`: the host's clock when the rig starts, s. The walk's timing moves with it by
    /// sub-µs roundings, enough to tip a loop near hunting one way or the other.
    init(maxSpeed: Double = 0.3, delays: Delays = Delays(), epoch: Double = 1000) {
        var settings = V4L2CameraDriver.Settings()
        settings.maxSpeed = maxSpeed
        host = VirtualHost(driver: V4L2CameraDriver(settings: settings),
                           peer: VirtualPTZWebcam(ioctlDelay: delays.ioctl, answerDelay: delays.answer), name: "vptz", epoch: epoch)
        observationDelay = delays.observation
        host.open()
    }

    /// Connects, then runs the walk (22 s of 15 Hz frames) from the first frame.
    mutating func walk(frameRate: Double = 15, seconds: Double = 22) {
        host.run(until: host.now + 1)
        precondition(host.engine.linkState == .connected, "the virtual camera connects")
        frames = WalkingSubject.walk(&host, client: ClientRef(id: 1), observationDelay: observationDelay, frameRate: frameRate, seconds: seconds) {
            ($0.peer.pose.pan / Self.arcSecondsPerRadian, $0.peer.pose.tilt / Self.arcSecondsPerRadian)
        }
    }

    // MARK: - Figures

    var inFrame: Double { Double(frames.filter(\.inFrame).count) / Double(max(1, frames.count)) }
    /// The mean |subject − pan| over every frame, rad.
    var meanPanError: Double { frames.map { abs($0.subject - $0.pan) }.reduce(0, +) / Double(max(1, frames.count)) }
    /// The pan's range while the subject stands at the end (from 1 s after it stops), rad.
    var standingPans: ClosedRange<Double> {
        let start = frames.first?.time ?? 0
        let pans = frames.filter { $0.time - start >= 8 }.map(\.pan)
        return (pans.min() ?? 0)...(pans.max() ?? 0)
    }
}
