import DockProtocol
import DockTracking
import Foundation
import StandEngine
import VirtualTime

/// tests/vm/test_dockd_loop.py's walking subject in virtual time, as both walk rigs run it (the v4l2
/// path, `V4L2WalkRig`, and its yardstick, `NativeWalkRig`): a face seen by an 80° camera from where
/// the stand points, sent to `tracking.observe` a set delay after each capture.
enum WalkingSubject {
    typealias Frame = (time: Double, subject: Double, pan: Double, tilt: Double, inFrame: Bool)

    static let hfov = 80 * Double.pi / 180
    static let vfov = 2 * atan(tan(hfov / 2) * 9 / 16)
    static let face = (width: 0.06, height: 0.1)

    /// The subject's pan, rad: standing at 0 for 2 s, walking right at 0.12 rad/s for 5 s, then standing.
    static func subject(at t: Double) -> Double { 0.12 * min(5, max(0, t - 2)) }

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

    /// Turns tracking on for `client` and runs the walk (`seconds` of frames at `frameRate`) on a
    /// connected host; each frame's observation reaches the engine `observationDelay` after its
    /// capture. `aim`: where the camera points (pan grows to the right, rad). Every frame, in order.
    static func walk<Peer: VirtualPeer>(_ host: inout VirtualHost<Peer>, client: ClientRef, observationDelay: Double,
                                        frameRate: Double, seconds: Double,
                                        aim: (VirtualHost<Peer>) -> (pan: Double, tilt: Double)) -> [Frame] {
        host.command(.camera(CameraModel(horizontalFieldOfView: hfov, verticalFieldOfView: vfov)), from: client)
        host.command(.setTracking(true), from: client)
        let start = host.now
        var frames: [Frame] = []
        var queue: [(at: Double, frame: ObservedFrame)] = []
        while host.now - start < seconds {
            let capture = start + Double(frames.count) / frameRate
            while let first = queue.first, first.at <= capture {
                host.run(until: first.at)
                queue.removeFirst()
                host.command(.observe(first.frame), from: client)
            }
            host.run(until: capture)
            let (pan, tilt) = aim(host)
            let subject = subject(at: capture - start)
            let (detections, inFrame) = face(subject: subject, pan: pan, tilt: tilt)
            frames.append((capture, subject, pan, tilt, inFrame))
            queue.append((capture + observationDelay, ObservedFrame(detections: detections, captureTime: capture)))
        }
        return frames
    }
}
