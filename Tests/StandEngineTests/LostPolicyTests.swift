import DockCore
import DockProtocol
import EngineSimulation
import StandEngine
import Testing

/// The lost-subject policy through the engine that ships, against the simulated stand, in
/// virtual time: a camera app streams what it sees while the subject leaves and comes back.
@Suite("Engine: lost-subject policy")
struct LostPolicyTests {
    static let subject = TestScene(people: [.init(yaw: 0.4)])
    static let empty = TestScene(people: [])
    static let stage = NamedPose(name: "stage", yaw: -0.5, pitch: 0)

    /// A stand framing the subject at yaw 0.4 with `policy` set by the app.
    static func framing(with policy: LostSubjectPolicy) throws -> VirtualStandRig {
        var rig = VirtualStandRig.connected()
        _ = try rig.send(.lostPolicy(policy), from: .app)
        rig.stream(subject, for: 3)
        #expect(abs(rig.angle(.yaw) - 0.4) < 0.03)
        #expect(rig.engine.phase(at: rig.now) == .tracking)
        return rig
    }

    /// Streams the empty scene until the phase is `phase` (or `limit` s pass); the seconds it took.
    static func streamEmpty(_ rig: inout VirtualStandRig, until phase: TrackingPhase, limit: Double) -> Double? {
        let start = rig.now
        var reached: Double?
        rig.stream(empty, for: limit) { rig, _ in
            if reached == nil, rig.engine.phase(at: rig.now) == phase { reached = rig.now - start }
        }
        return reached
    }

    @Test func holdStaysWhereTheSubjectWasLastSeenInsteadOfTheConfiguredHome() throws {
        var rig = try Self.framing(with: LostSubjectPolicy(kind: .hold, after: 0, preset: nil, searchSeconds: 0))
        let framed = rig.angle(.yaw)
        rig.stream(Self.empty, for: 12)
        #expect(abs(rig.angle(.yaw) - framed) < 0.02, "the configured lost behaviour (home) would have turned it to 0")
        #expect(rig.engine.phase(at: rig.now) == .lostHolding)
    }

    @Test func presetHoldsForAfterSecondsThenReturnsToThePreset() throws {
        var rig = try Self.framing(with: LostSubjectPolicy(kind: .preset, after: 2, preset: Self.stage, searchSeconds: 0))
        let framed = rig.angle(.yaw)
        let start = rig.now
        var leftAt: Double?
        rig.stream(Self.empty, for: 10) { rig, _ in
            if leftAt == nil, abs(rig.angle(.yaw) - framed) > 0.02 { leftAt = rig.now - start }
        }
        #expect(abs(rig.angle(.yaw) + 0.5) < 0.015)
        #expect(rig.engine.phase(at: rig.now) == .atPreset)
        // Seconds count from the last frame that saw the subject (up to 0.1 s before the empty scene).
        #expect((leftAt ?? 0) > 1.8, "holds until after")
        let notified = rig.notifications.compactMap { if case .phaseChanged(let p) = $0.notification { p } else { nil } }
        #expect(notified == [.lostHolding, .returning, .atPreset])
    }

    @Test func searchSweepsAroundTheLastSeenYawThenGoesToThePreset() throws {
        var rig = try Self.framing(with: LostSubjectPolicy(kind: .search, after: 1, preset: Self.stage, searchSeconds: 6))
        var searched: ClosedRange<Double>?
        rig.stream(Self.empty, for: 14) { rig, _ in
            guard rig.engine.phase(at: rig.now) == .lostSearching else { return }
            let yaw = rig.angle(.yaw)
            searched = searched.map { min($0.lowerBound, yaw)...max($0.upperBound, yaw) } ?? yaw...yaw
        }
        let range = try #require(searched)
        #expect(range.lowerBound < 0.4 - 0.4 && range.upperBound > 0.4 + 0.4, "it swept both ways: \(range)")
        #expect(range.lowerBound > 0.4 - 0.75 && range.upperBound < 0.4 + 0.75, "around where the subject was lost: \(range)")
        #expect(abs(rig.angle(.yaw) + 0.5) < 0.015)
        #expect(rig.engine.phase(at: rig.now) == .atPreset)
    }

    @Test func aSubjectThatComesBackDuringTheReturnIsTrackedAgain() throws {
        var rig = try Self.framing(with: LostSubjectPolicy(kind: .preset, after: 1, preset: Self.stage, searchSeconds: 0))
        #expect(Self.streamEmpty(&rig, until: .returning, limit: 4) != nil)
        let back = TestScene(people: [.init(yaw: 0.1)])
        rig.stream(back, for: 4)
        #expect(rig.engine.phase(at: rig.now) == .tracking)
        #expect(abs(rig.angle(.yaw) - 0.1) < 0.03, "framing the subject, not the preset")
    }

    @Test func theLeaseEndRevertsToTheConfiguredBehaviour() throws {
        var rig = try Self.framing(with: LostSubjectPolicy(kind: .hold, after: 0, preset: nil, searchSeconds: 0))
        #expect(rig.engine.lostPolicy != nil)
        rig.clientGone(ClientRef.app.id)
        #expect(rig.engine.lostPolicy == nil)
        rig.stream(Self.subject, for: 2, from: .other)
        rig.stream(Self.empty, for: 10, from: .other)
        #expect(abs(rig.angle(.yaw)) < 0.03, "the configuration's home")
    }
}

@Suite("Engine: sweeps and tours")
struct PanTests {
    @Test func aSweepGoesToItsStartThenTurnsAtItsRateToItsEndOnce() throws {
        var rig = VirtualStandRig.connected()
        _ = try rig.send(.pan(.sweep(Sweep(from: -0.5, to: 0.5, rate: 0.2, repeats: false))), from: .app)
        #expect(rig.engine.phase(at: rig.now) == .sweeping)
        #expect(rig.run(until: rig.now + 6) { abs($0.angle(.yaw) + 0.5) < 0.01 }, "at its start")
        #expect(rig.run(until: rig.now + 3) { $0.angle(.yaw) > -0.3 })
        var speeds: [Double] = []
        for _ in 0..<20 { rig.run(for: 0.1); speeds.append(rig.speed(.yaw)) }
        #expect(speeds.allSatisfy { abs($0 - 0.2) < 0.005 }, "constant rate across the middle: \(speeds)")
        #expect(rig.run(until: rig.now + 6) { $0.engine.runningPan == nil })
        rig.run(for: 1)
        #expect(abs(rig.angle(.yaw) - 0.5) < 0.03)
        #expect(rig.engine.phase(at: rig.now) == .tracking)
    }

    @Test func aRepeatingSweepTurnsBackAtEachEndUntilStopped() throws {
        var rig = VirtualStandRig.connected()
        _ = try rig.send(.pan(.sweep(Sweep(from: 0.3, to: -0.3, rate: 0.5, repeats: true))), from: .app)
        var lowest = 0.0, highest = 0.0
        for _ in 0..<150 {
            rig.run(for: 0.1)
            lowest = min(lowest, rig.angle(.yaw)); highest = max(highest, rig.angle(.yaw))
        }
        #expect(rig.engine.phase(at: rig.now) == .sweeping)
        #expect(lowest < -0.28 && lowest > -0.36 && highest > 0.28 && highest < 0.36, "\(lowest)…\(highest)")
        _ = try rig.send(.endPan, from: .app)
        rig.run(for: 1)
        #expect(rig.engine.runningPan == nil && abs(rig.speed(.yaw)) < 1e-3)
    }

    @Test func aClientsMotionOrAStopTakesOverFromASweep() throws {
        var rig = VirtualStandRig.connected()
        _ = try rig.send(.pan(.sweep(Sweep(from: -1, to: 1, rate: 0.3, repeats: true))), from: .app)
        rig.run(for: 1)
        _ = try rig.send(.orient([.yaw: 0.2], relative: false, duration: nil), from: .app)
        #expect(rig.engine.runningPan == nil)
        rig.run(for: 4)
        #expect(abs(rig.angle(.yaw) - 0.2) < 0.01)
        _ = try rig.send(.pan(.sweep(Sweep(from: -1, to: 1, rate: 0.3, repeats: true))), from: .app)
        rig.run(for: 1)
        _ = rig.command(.stop, from: .other)
        rig.run(for: 1)
        #expect(rig.engine.runningPan == nil && abs(rig.speed(.yaw)) < 1e-3)
    }

    @Test func aTourVisitsEachPresetAndDwellsThere() throws {
        var rig = VirtualStandRig.connected()
        let stops = [Tour.Stop(pose: NamedPose(name: "a", yaw: 0.6, pitch: 0.1), dwell: 2),
                     Tour.Stop(pose: NamedPose(name: "b", yaw: -0.4, pitch: -0.1), dwell: 1)]
        _ = try rig.send(.pan(.tour(Tour(stops: stops, repeats: false))), from: .app)
        #expect(rig.engine.phase(at: rig.now) == .touring)
        var atA = 0.0, atB = 0.0
        #expect(rig.run(until: rig.now + 20) { rig in
            if abs(rig.angle(.yaw) - 0.6) < 0.01 && abs(rig.angle(.pitch) - 0.1) < 0.01 { atA += 0.001 }
            if abs(rig.angle(.yaw) + 0.4) < 0.01 && abs(rig.angle(.pitch) + 0.1) < 0.01 { atB += 0.001 }
            return rig.engine.runningPan == nil
        })
        #expect(atA > 1.9 && atA < 2.6, "dwelt at a: \(atA) s")
        #expect(atB > 0.9 && atB < 1.6, "dwelt at b: \(atB) s")
        #expect(abs(rig.angle(.yaw) + 0.4) < 0.015)
    }

    @Test func aTourToAPoseOutsideTheLimitsIsRefusedRatherThanNeverArriving() throws {
        var rig = VirtualStandRig.connected()
        let stops = [Tour.Stop(pose: NamedPose(name: "up", yaw: 0, pitch: 1.2), dwell: 1)]  // the simulated pitch stops at 0.9
        #expect(throws: EngineError.self) { _ = try rig.send(.pan(.tour(Tour(stops: stops, repeats: false))), from: .app) }
        #expect(rig.engine.runningPan == nil)
    }

    @Test func theConfiguredCustomButtonStartsAndEndsItsSweep() throws {
        var settings = EngineSettings()
        settings.buttonSweep = ButtonSweep(button: 1, sweep: Sweep(from: -0.3, to: 0.3, rate: 0.4, repeats: true))
        var rig = VirtualStandRig.connected(settings)
        rig.stand(.customButton(id: 2, pressed: true))
        rig.run(for: 0.5)
        #expect(rig.engine.runningPan == nil, "another button does nothing")
        rig.stand(.customButton(id: 1, pressed: true))
        rig.run(for: 0.2)
        rig.stand(.customButton(id: 1, pressed: false))
        rig.run(for: 4)
        #expect(rig.engine.phase(at: rig.now) == .sweeping)
        #expect(abs(rig.speed(.yaw)) > 0.1)
        rig.stand(.customButton(id: 1, pressed: true))
        rig.run(for: 1)
        #expect(rig.engine.runningPan == nil && abs(rig.speed(.yaw)) < 1e-3)
    }
}
