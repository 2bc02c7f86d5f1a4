import DockDrivers
import DockCore
import DockProtocol

/// What the command line asks of a run: the scripted commands.
struct Script: Sendable {
    var velocity: [Axis: Double]
    var velocitySeconds: Double
    var target: [Axis: Double]?
    var gain: Double
    var position: [Axis: Double]?
    var duration: Double
    var orient: [Axis: Double]?
    var orientDuration: Double
}

/// Step response of one --orient move through the motion controller.
struct OrientRun {
    var controller: MotionController
    var id: MotionID?
    var startedAt = 0.0
    var start: [Axis: Double] = [:]
    var endedAt: Double?
    var state = ""
    var settledAt: Double?
    var maxOvershoot = 0.0
    var commands = 0
}

/// What --calibrate needs: the identity-profile driver, the camera's own profile to build on, where
/// the result goes.
struct CalibrationRun: Sendable {
    var driver: VISCADriver
    var base: VISCAProfile
    var output: String
    var name: String
    var axes: [Calibration.AxisSetup]
    var window: Double
    var endpoint: String
}
