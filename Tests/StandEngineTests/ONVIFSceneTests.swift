import DockSim
import StandEngine
import Testing
import VirtualTime

/// Issue 24: a scenario of the suite through the ONVIF driver dockd ships, steering the emulated
/// camera (`EmulatedONVIFCamera`) that offers one motion model, in virtual time, as `dock-bench
/// scenario --driver onvif` runs the whole suite: the walker (40° either side) stays in frame and
/// is framed within 1.5× the native stand's error at the camera's speeds.
@Suite("Engine: a scenario through each ONVIF motion model")
struct ONVIFSceneTests {
    @Test(arguments: ONVIFMotionModel.allCases)
    func theWalkerStaysInFrame(_ model: ONVIFMotionModel) throws {
        let scenario = try ScenarioSuiteTests.scenario("slow-walk")
        let camera = EmulatedONVIFCamera.level(motion: [model])
        let run = try runScene(scenario, seed: 1, kind: .ours, record: false, on: VirtualHost(camera: camera))
        let native = try runScene(scenario, seed: 1, kind: .ours, record: false, stand: .turning(like: camera))
        #expect(run.metrics.inFrame >= 0.99, "\(model): in frame \(run.metrics.inFrame)")
        #expect(run.metrics.rmsError <= 1.5 * native.metrics.rmsError, "\(model): RMS \(run.metrics.rmsError), native \(native.metrics.rmsError)")
        #expect(run.refused.isEmpty, "\(model): refused \(run.refused)")
    }

    /// The suite's judge of the camera's reach (`dock-bench scenario --driver onvif`, §): the
    /// simulated stand at the camera's speeds and range — pan ±170°, not continuous — cannot keep
    /// walk-around's subject (1¼ turns about the camera) in frame, where the stand at its speeds
    /// alone (yaw continuous) can; a walk 40° either side is within both.
    @Test func walkAroundIsBeyondTheCameraReachAndASlowWalkIsNot() throws {
        let camera = EmulatedONVIFCamera.level(motion: [.continuous])
        let around = try ScenarioSuiteTests.scenario("walk-around"), walk = try ScenarioSuiteTests.scenario("slow-walk")
        let reach = try runScene(around, seed: 1, kind: .ours, record: false, stand: .reaching(like: camera)).metrics.inFrame
        let speedOnly = try runScene(around, seed: 1, kind: .ours, record: false, stand: .turning(like: camera)).metrics.inFrame
        let walkInReach = try runScene(walk, seed: 1, kind: .ours, record: false, stand: .reaching(like: camera)).metrics.inFrame
        #expect(reach < 0.99 && speedOnly >= 0.99, "walk-around in frame: \(reach) at the camera's reach, \(speedOnly) at its speeds alone")
        #expect(walkInReach >= 0.99, "slow-walk in frame at the camera's reach: \(walkInReach)")
    }
}
