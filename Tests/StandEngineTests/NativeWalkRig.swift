import DockCore
import DockProtocol
import DockSim
import DockTracking
import VirtualTime
import Foundation
import StandEngine

/// `V4L2WalkRig`'s walk through a native stand of the same speed (the simulated stand over the wire
/// protocol, its axes limited to `maxSpeed`): the yardstick for the v4l2 path's framing.
struct NativeWalkRig {
    var rig: VirtualHost<SimulatedStand>
    let observationDelay: Double
    private(set) var frames: [(time: Double, subject: Double, pan: Double, tilt: Double, inFrame: Bool)] = []

    init(maxSpeed: Double = 0.3, observationDelay: Double) {
        rig = VirtualHost<SimulatedStand>.connected { configuration in
            for i in configuration.axes.indices {
                configuration.axes[i].maxSpeed = maxSpeed
                configuration.axes[i].maxAccel = 4 * maxSpeed
            }
        }
        self.observationDelay = observationDelay
    }

    mutating func walk(frameRate: Double = 15, seconds: Double = 22) {
        _ = try? rig.send(.camera(CameraModel(horizontalFieldOfView: V4L2WalkRig.hfov, verticalFieldOfView: V4L2WalkRig.vfov)), from: .app)
        _ = try? rig.send(.setTracking(true), from: .app)
        let start = rig.now
        var queue: [(at: Double, frame: ObservedFrame)] = []
        var frame = 0
        while rig.now - start < seconds {
            let capture = start + Double(frame) / frameRate
            while let first = queue.first, first.at <= capture {
                rig.run(until: first.at)
                queue.removeFirst()
                rig.command(.observe(first.frame), from: .app)
            }
            rig.run(until: capture)
            // Pan grows to the right, yaw to the left.
            let pan = -rig.angle(.yaw), tilt = rig.angle(.pitch)
            let subject = V4L2WalkRig.subject(at: capture - start)
            let (detections, inFrame) = V4L2WalkRig.face(subject: subject, pan: pan, tilt: tilt)
            frames.append((capture, subject, pan, tilt, inFrame))
            queue.append((capture + observationDelay, ObservedFrame(detections: detections, captureTime: capture)))
            frame += 1
        }
    }

    var meanPanError: Double { frames.map { abs($0.subject - $0.pan) }.reduce(0, +) / Double(max(1, frames.count)) }
    /// The same walk with the stand's pose read on a grid of `step` radians (a camera's 1° step): what
    /// the framing error would be had this stand rested, as the webcam must, on the nearest step.
    func meanPanError(onGridOf step: Double) -> Double {
        frames.map { abs($0.subject - ($0.pan / step).rounded() * step) }.reduce(0, +) / Double(max(1, frames.count))
    }
    var inFrame: Double { Double(frames.filter(\.inFrame).count) / Double(max(1, frames.count)) }
}
