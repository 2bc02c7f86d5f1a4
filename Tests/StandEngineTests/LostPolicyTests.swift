import DockCore
import DockProtocol
import DockSim
import VirtualTime
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
    static func framing(with policy: LostSubjectPolicy) throws -> VirtualHost<SimulatedStand> {
        var rig = VirtualHost<SimulatedStand>.connected()
        _ = try rig.send(.lostPolicy(policy), from: .app)
        rig.stream(subject, for: 3)
        #expect(abs(rig.angle(.yaw) - 0.4) < 0.03)
        #expect(rig.engine.phase(at: rig.now) == .tracking)
        return rig
    }

    /// Streams the empty scene until the phase is `phase` (or `limit` s pass); the seconds it took.
    static func streamEmpty(_ rig: inout VirtualHost<SimulatedStand>, until phase: TrackingPhase, limit: Double) -> Double? {
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

    @Test func aPresetOutsideTheLimitsInForceIsBlockedNotReturnedToForever() throws {
        // The app narrowed yaw to -0.3…0.8 after choosing a preset at -0.5: the return could only
        // press against the limit, "returning" for ever. The stand holds where it is instead.
        var rig = try Self.framing(with: LostSubjectPolicy(kind: .preset, after: 1, preset: Self.stage, searchSeconds: 0))
        _ = try rig.send(.limits([.yaw: LimitRequest(min: -0.3, max: 0.8)]), from: .app)
        let framed = rig.angle(.yaw)
        #expect(Self.streamEmpty(&rig, until: .blocked, limit: 6) != nil)
        rig.stream(Self.empty, for: 2)
        #expect(rig.engine.phase(at: rig.now) == .blocked)
        #expect(abs(rig.angle(.yaw) - framed) < 0.02, "held, not pressed against the limit")
        // Wider limits again: the return goes on to the preset.
        _ = try rig.send(.limits([.yaw: LimitRequest(min: -1, max: 1)]), from: .app)
        rig.stream(Self.empty, for: 4)
        #expect(abs(rig.angle(.yaw) + 0.5) < 0.015)
        #expect(rig.engine.phase(at: rig.now) == .atPreset)
    }

    @Test func aStopShowsAsStoppedNotAsThePolicysPhaseFromBeforeIt() throws {
        // The policy is not stepped while a stop holds: its phase stayed the one from before the
        // stop ("at-preset" here) for a stand that neither tracks nor follows the policy.
        var rig = try Self.framing(with: LostSubjectPolicy(kind: .preset, after: 1, preset: Self.stage, searchSeconds: 0))
        #expect(Self.streamEmpty(&rig, until: .atPreset, limit: 4) != nil)
        _ = rig.command(.stop, from: .other)
        rig.stream(Self.empty, for: 2)
        #expect(rig.engine.stoppedBy == .other)
        #expect(rig.engine.phase(at: rig.now) == .stopped)
        _ = rig.command(.resume, from: .other)
        rig.stream(Self.empty, for: 4)
        #expect(rig.engine.phase(at: rig.now) == .atPreset, "the policy goes on once the stop ends")
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
