import DockCore
import DockProtocol
import DockSim
import VirtualTime
import StandEngine
import Testing

/// Sweeps and tours through the engine that ships, against the simulated stand, in virtual time.
@Suite("Engine: sweeps and tours")
struct PanTests {
    @Test func aSweepGoesToItsStartThenTurnsAtItsRateToItsEndOnce() throws {
        var rig = VirtualHost<SimulatedStand>.connected()
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
        var rig = VirtualHost<SimulatedStand>.connected()
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
        var rig = VirtualHost<SimulatedStand>.connected()
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
        var rig = VirtualHost<SimulatedStand>.connected()
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
        var rig = VirtualHost<SimulatedStand>.connected()
        let stops = [Tour.Stop(pose: NamedPose(name: "up", yaw: 0, pitch: 1.2), dwell: 1)]  // the simulated pitch stops at 0.9
        #expect(throws: EngineError.self) { _ = try rig.send(.pan(.tour(Tour(stops: stops, repeats: false))), from: .app) }
        #expect(rig.engine.runningPan == nil)
    }

    @Test func theConfiguredCustomButtonStartsAndEndsItsSweep() throws {
        var settings = EngineSettings()
        settings.buttonSweep = ButtonSweep(button: 1, sweep: Sweep(from: -0.3, to: 0.3, rate: 0.4, repeats: true))
        var rig = VirtualHost<SimulatedStand>.connected(settings)
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
