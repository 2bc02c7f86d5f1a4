import DockSim
import VirtualTime
import Foundation
import StandEngine
import Testing

/// The scenario suite (Benchmarks/Scenarios) through the engine that ships, in virtual time: the
/// issue-#10 targets as regression checks. `dock-bench scenario --suite` runs the same scenes
/// with the same runner and prints the full table (BENCHMARKS.md).
@Suite("Engine: the scenario suite")
struct ScenarioSuiteTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Benchmarks/Scenarios").standardizedFileURL

    static func scenario(_ name: String) throws -> SceneScenario {
        try JSONDecoder().decode(SceneScenario.self, from: Data(contentsOf: folder.appendingPathComponent("\(name).json")))
    }

    static var withinLimits: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
            .filter { (try? scenario($0).withinLimits) == true }
    }

    @Test(arguments: withinLimits)
    func theSubjectStaysInFrame(_ name: String) throws {
        let run = try runScene(try Self.scenario(name), seed: 1, kind: .ours, record: false)
        #expect(run.metrics.inFrame >= 0.999, "\(name): in frame \(run.metrics.inFrame)")
        #expect(run.refused.isEmpty, "\(name): refused \(run.refused)")
    }

    @Test func aNearPersonCutOffByTheFrameIsFramedNotChasedToAPitchLimit() throws {
        let run = try runScene(try Self.scenario("approach-recede"), seed: 1, kind: .ours, record: false)
        #expect(run.metrics.rmsError < 0.08, "RMS \(run.metrics.rmsError)")
    }

    @Test func aFewFramesOfAFalsePersonDoNotDragTheFrame() throws {
        let run = try runScene(try Self.scenario("ghost-face"), seed: 1, kind: .ours, record: false)
        #expect(run.metrics.rmsError < 0.03, "RMS \(run.metrics.rmsError)")
    }

    @Test func aHeldSelectionIsNotTakenByPassersBy() throws {
        for name in ["held-selection", "child", "lost-selection-returns"] {
            let run = try runScene(try Self.scenario(name), seed: 1, kind: .ours, record: false)
            #expect(run.metrics.primarySwitches == 0, "\(name): \(run.metrics.primarySwitches) switches")
        }
    }

    @Test func aStillSubjectGetsAStillCamera() throws {
        let run = try runScene(try Self.scenario("still-subject"), seed: 1, kind: .ours, record: false)
        #expect(run.commandsWhileStill == 0)
        #expect((run.stillError ?? 1) <= 0.02)
    }

    /// Issue 22: a still person under a real detector's box jitter (8 %) and misses (25 %), on
    /// three seeds: moving < 2 % of the still time, aim jitter < 0.2 % of the FOV (the issue's
    /// targets; seed 3 measured 3.1 % and 0.21 % while the camera came to rest beside its subject
    /// after a sweep and moved again), framing no worse than the naive client's.
    @Test(arguments: [UInt64(1), 2, 3])
    func aStillSubjectUnderDetectorNoiseGetsAStillCamera(seed: UInt64) throws {
        let scenario = try Self.scenario("still-subject-noisy")
        let run = try runScene(scenario, seed: seed, kind: .ours, record: false)
        let naive = try runScene(scenario, seed: seed, kind: .naive(gain: 6, deadZone: 0), record: false)
        #expect(run.metrics.stillMotion < 0.02, "moving \(run.metrics.stillMotion * 100) % of the still time")
        #expect(run.metrics.stillJitter < 0.002, "aim jitter \(run.metrics.stillJitter * 100) % of the FOV")
        #expect(run.metrics.rmsError <= naive.metrics.rmsError, "RMS \(run.metrics.rmsError), the naive client's \(naive.metrics.rmsError)")
    }

    /// Issue 22: a still subject framed no worse than the naive client. At seed 2 ours was 1.03×
    /// its RMS error (1.11 against 1.07 %): the camera came to rest at the settle band's edge, 2.3
    /// mrad short of the subject in yaw and 3.0 in pitch, while the naive client jitters about it.
    @Test(arguments: [UInt64(1), 2, 3])
    func aStillSubjectIsFramedNoWorseThanTheNaiveClient(seed: UInt64) throws {
        let run = try expectNoWorseThanTheNaiveClient("still-subject", seed: seed)
        #expect(run.commandsWhileStill == 0, "\(run.commandsWhileStill) commands while still")
    }

    /// Issue 22: sitting down and standing up reframe once: overshoot < 5 % of the FOV, settled < 1 s.
    @Test(arguments: [UInt64(1), 2, 3])
    func aPostureChangeIsReframedOnceWithoutOvershoot(seed: UInt64) throws {
        let run = try runScene(try Self.scenario("sit-stand"), seed: seed, kind: .ours, record: false)
        #expect(run.metrics.overshoot < 0.05, "overshoot \(run.metrics.overshoot * 100) % of the FOV")
        #expect(run.metrics.settleTime < 1, "settled in \(run.metrics.settleTime) s")
    }

    /// Issue 22: no scenario worse than the naive client; sit-stand was 1.03–1.06× its RMS error
    /// (the camera ran past the face after each quick change). The naive client of the suite's
    /// best grid point: gain 6/s, no dead zone.
    @Test(arguments: [UInt64(1), 2, 3])
    func aPostureChangeIsFramedNoWorseThanTheNaiveClient(seed: UInt64) throws {
        try expectNoWorseThanTheNaiveClient("sit-stand", seed: seed)
    }

    /// Issue 22: no scenario worse than the naive client; the pet's was 1.00 / 1.01× its RMS error
    /// at seeds 1 and 2: after the dash the tracker's lagging rate, fed forward, ran the camera
    /// 0.24 rad past where the cat stopped dead (`TrackingControlConfiguration.trailing`'s yaw).
    @Test(arguments: [UInt64(1), 2, 3])
    func aPetsDashIsFramedNoWorseThanTheNaiveClient(seed: UInt64) throws {
        try expectNoWorseThanTheNaiveClient("pet", seed: seed)
    }

    /// Issue 22: no scenario worse than the naive client, its camera's motion included. At seed 2
    /// sit-stand's idle jitter (the camera's RMS speed while the ideal aim is still) was 53.7
    /// mrad/s against the naive client's 53.1: the detector missed the face on the two frames
    /// after the sit-down, the filtered face running on past it stood for the detection, and the
    /// full rate came back and ran the camera 53 mrad past the face.
    @Test(arguments: [UInt64(1), 2, 3])
    func aPostureChangeMovesTheCameraNoMoreThanTheNaiveClient(seed: UInt64) throws {
        let scenario = try Self.scenario("sit-stand")
        let run = try runScene(scenario, seed: seed, kind: .ours, record: false)
        let naive = try runScene(scenario, seed: seed, kind: .naive(gain: 6, deadZone: 0), record: false)
        #expect(run.metrics.idleJitter <= naive.metrics.idleJitter,
                "idle jitter \(run.metrics.idleJitter * 1000) mrad/s, the naive client's \(naive.metrics.idleJitter * 1000)")
    }

    /// Runs the scenario with ours and with the naive client of the suite's best grid point (gain
    /// 6/s, no dead zone) and expects ours no worse in RMS error; ours' run.
    @discardableResult
    func expectNoWorseThanTheNaiveClient(_ name: String, seed: UInt64) throws -> SceneRunResult {
        let scenario = try Self.scenario(name)
        let run = try runScene(scenario, seed: seed, kind: .ours, record: false)
        let naive = try runScene(scenario, seed: seed, kind: .naive(gain: 6, deadZone: 0), record: false)
        #expect(run.metrics.rmsError <= naive.metrics.rmsError, "RMS \(run.metrics.rmsError), the naive client's \(naive.metrics.rmsError)")
        return run
    }

    @Test func aContinuousYawFollowsPastAWholeTurnAndGoesHomeTheShortestWay() throws {
        let run = try runScene(try Self.scenario("walk-around"), seed: 1, kind: .ours, record: true)
        let yaws = run.trace.camera.map { -$0.x }  // camera x is right-positive, yaw left-positive
        #expect((yaws.max() ?? 0) > 2.4 * .pi, "followed to \(yaws.max() ?? 0) rad (the subject went 2.5π)")
        #expect(abs((yaws.last ?? 0) - 2 * .pi) < 0.05, "home at \(yaws.last ?? 0) rad: the nearest whole turn is 2π")
        let farthest = yaws.indices.max { yaws[$0] < yaws[$1] } ?? 0
        #expect(yaws[farthest...].allSatisfy { $0 > 2 * .pi - 0.05 }, "on the way home, never back past 2π")
    }

    @Test func aSubjectHiddenForTwoSecondsIsReacquiredQuickly() throws {
        let run = try runScene(try Self.scenario("occlusion-2s"), seed: 1, kind: .ours, record: false)
        #expect((run.metrics.reacquireTime ?? 0) <= 0.5)
    }

    /// Issue 25: each lost-subject policy with a subject that leaves for good and one that comes
    /// back from the other side, outside the camera's view until it walks in.
    static func phases(_ run: SceneRunResult) -> [TrackingPhase] { run.trace.phases.map(\.phase) }
    static func finalYaw(_ run: SceneRunResult) -> Double { -(run.trace.camera.last?.x ?? 0) }

    @Test func aSubjectGoneForGoodIsGivenUpForThePresetAfterItsTime() throws {
        let preset = try runScene(try Self.scenario("lost-preset-gone"), seed: 1, kind: .ours, record: true)
        #expect(Self.phases(preset) == [.lostHolding, .returning, .atPreset])
        let lost = try #require(preset.trace.phases.first?.time), returning = try #require(preset.trace.phases.dropFirst().first?.time)
        #expect(abs(returning - (lost - LostSubjectPolicy.unseen) - 2) < 0.1, "returns 2 s after the last sight")
        #expect(abs(Self.finalYaw(preset) - 0.3) < 0.02)
        let search = try runScene(try Self.scenario("lost-search-gone"), seed: 1, kind: .ours, record: true)
        #expect(Self.phases(search) == [.lostHolding, .lostSearching, .returning, .atPreset])
        #expect(abs(Self.finalYaw(search)) < 0.02)
        let hold = try runScene(try Self.scenario("lost-hold-gone"), seed: 1, kind: .ours, record: true)
        #expect(Self.phases(hold) == [.lostHolding])
    }

    @Test func aSubjectThatComesBackIsReacquiredByThePresetAndTheSearchNotByHold() throws {
        for name in ["lost-preset-back", "lost-search-back"] {
            let run = try runScene(try Self.scenario(name), seed: 1, kind: .ours, record: true)
            #expect(run.trace.phases.last?.phase == .tracking, "\(name): \(Self.phases(run))")
            #expect((run.metrics.reacquireTime ?? 9) < 1.5, "\(name): reacquired in \(run.metrics.reacquireTime ?? -1) s")
        }
        // Held where it lost the subject (0.95 rad right), the camera never sees it come back on the left.
        let hold = try runScene(try Self.scenario("lost-hold-back"), seed: 1, kind: .ours, record: true)
        #expect(hold.metrics.reacquireTime == nil && Self.phases(hold) == [.lostHolding])
    }

    /// The demo's scenario: the search, the preset, then a sweep once, after which the stand stays
    /// where the sweep ended (tracking starts afresh there) rather than going back to the preset.
    @Test func aSweepAfterTheLostPolicyEndsWhereItTurnedTo() throws {
        let run = try runScene(try Self.scenario("lost-and-sweep"), seed: 1, kind: .ours, record: true)
        #expect(Self.phases(run) == [.lostHolding, .lostSearching, .returning, .atPreset, .sweeping, .tracking])
        #expect(abs(Self.finalYaw(run) - 0.6) < 0.03, "at \(Self.finalYaw(run)) rad")
    }
}
