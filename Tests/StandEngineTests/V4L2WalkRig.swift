import DockCore
import DockDrivers
import DockProtocol
import DockTracking
import Foundation
import StandEngine
import VirtualTime

/// dockd's engine and v4l2 driver in the virtual host every driver runs in, steering a virtual
/// PTZ webcam (`VirtualPTZWebcam`: kernel/vptz's pose and step), with a face walking past it fed to
/// `tracking.observe`: tests/vm/test_dockd_loop.py's walking subject in virtual time, where the
/// link's and the client's delays can be set and repeated exactly.
struct V4L2WalkRig {
    struct Delays {
        /// From a request written to its ioctl running, and from the ioctl to its answer read, s.
        var ioctl = 0.002, answer = 0.002
        /// From a frame's capture to dockd handling its observation, s.
        var observation = 0.01
    }

    static let arcSecondsPerRadian = 180 * 3600 / Double.pi
    static let step = VirtualPTZWebcam.step
    static let hfov = 80 * Double.pi / 180
    static let vfov = 2 * atan(tan(hfov / 2) * 9 / 16)
    static let face = (width: 0.06, height: 0.1)

    var host: VirtualHost<VirtualPTZWebcam>
    let observationDelay: Double
    /// Every frame: its capture time, where the subject and the camera were (rad), whether the face was in it.
    private(set) var frames: [(time: Double, subject: Double, pan: Double, tilt: Double, inFrame: Bool)] = []

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

    /// The subject's pan, rad: standing at 0 for 2 s, walking right at 0.12 rad/s for 5 s, then standing.
    static func subject(at t: Double) -> Double { 0.12 * min(5, max(0, t - 2)) }

    /// Connects, then runs the walk (22 s of 15 Hz frames) from the first frame; each frame's
    /// observation reaches the engine `observationDelay` after its capture.
    mutating func walk(frameRate: Double = 15, seconds: Double = 22) {
        host.run(until: host.now + 1)
        precondition(host.engine.linkState == .connected, "the virtual camera connects")
        host.command(.camera(CameraModel(horizontalFieldOfView: Self.hfov, verticalFieldOfView: Self.vfov)))
        host.command(.setTracking(true))
        let start = host.now
        var queue: [(at: Double, frame: ObservedFrame)] = []
        var frame = 0
        while host.now - start < seconds {
            let capture = start + Double(frame) / frameRate
            while let first = queue.first, first.at <= capture {
                host.run(until: first.at)
                queue.removeFirst()
                host.command(.observe(first.frame))
            }
            host.run(until: capture)
            let pan = host.peer.pose.pan / Self.arcSecondsPerRadian, tilt = host.peer.pose.tilt / Self.arcSecondsPerRadian
            let subject = Self.subject(at: capture - start)
            let (detections, inFrame) = Self.face(subject: subject, pan: pan, tilt: tilt)
            frames.append((capture, subject, pan, tilt, inFrame))
            queue.append((capture + observationDelay, ObservedFrame(detections: detections, captureTime: capture)))
            frame += 1
        }
        host.run(until: host.now + 0.5)
    }

    /// The face a camera at `pan`, `tilt` sees of a subject at `subject` (rad, at the camera's
    /// height), as walking_subject.py projects it: none when it is out of the frame.
    static func face(subject: Double, pan: Double, tilt: Double) -> ([Detection], Bool) {
        let x = 0.5 + tan(subject - pan) / (2 * tan(hfov / 2))
        let y = 0.5 - tan(-tilt) / (2 * tan(vfov / 2))
        let inFrame = abs(subject - pan) < hfov / 2 && (face.width / 2...1 - face.width / 2).contains(x)
            && abs(tilt) < vfov / 2 && (face.height / 2...1 - face.height / 2).contains(y)
        let rect = NormalizedRect(x: x - face.width / 2, y: y - face.height / 2, width: face.width, height: face.height)
        return (inFrame ? [Detection(kind: .face, rect: rect, confidence: 0.95)] : [], inFrame)
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
