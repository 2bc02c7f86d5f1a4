import DockCore
import DockProtocol
import DockSim
import DockTracking
import VirtualTime
import Foundation
import StandEngine

/// The `WalkingSubject` tracked by a native stand of the same speed (the simulated stand over the wire
/// protocol, its axes limited to `maxSpeed`): the yardstick for the v4l2 path's framing.
struct NativeWalkRig {
    var rig: VirtualHost<SimulatedStand>
    let observationDelay: Double
    private(set) var frames: [WalkingSubject.Frame] = []

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
        // Pan grows to the right, yaw to the left.
        frames = WalkingSubject.walk(&rig, client: .app, observationDelay: observationDelay, frameRate: frameRate, seconds: seconds) {
            (-$0.angle(.yaw), $0.angle(.pitch))
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
