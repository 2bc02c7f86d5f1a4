#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import Dispatch
import DockCore
import DockProtocol
import DockSim

/// The motion controller closing the loop on the simulated stand, in virtual time: how much faster
/// than real time it runs, what one control tick costs, and how well random orientation moves land.
struct ClosedLoopBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "closed-loop",
                                                    abstract: "Controller + simulated stand in virtual time.")

    @Option(help: "Virtual seconds to run.") var seconds: Double = 600
    @Option(help: "Seed of the stand's noise and of the move targets.") var seed: UInt64 = 1

    func run() throws {
        var stand = SimulatedStand(configuration: StandConfiguration(), seed: seed)
        var targets = SeededRandom(seed: seed &+ 1)
        var decoder = FrameDecoder()
        var sequencer = FrameSequencer()
        var micros: UInt64 = 0
        var capabilities: Capabilities?
        let hello = FrameEncoder.encode(sequencer.frame(.hello(Hello(heartbeatTimeoutMs: 500, host: "dock-bench")), ackRequested: true))
        for case .success(let frame) in decoder.feed(stand.receive([0] + hello, atMicros: 0)) {
            if case .capabilities(let caps) = frame.message { capabilities = caps }
        }
        guard let capabilities else { throw ValidationError("the simulated stand sent no CAPABILITIES") }
        var controller = MotionController(capabilities: capabilities)
        var tickCosts: [Double] = []
        var landingErrors: [Double] = []
        var completed = 0, failed = 0
        var current: (id: MotionID, yaw: Double, pitch: Double)?
        var nextMoveAt = 0.5
        let wallStart = monotonicSeconds(), cpuStart = cpuSeconds()

        while Double(micros) / 1e6 < seconds {
            micros += 10_000
            let now = Double(micros) / 1e6
            var outgoing: [Message] = []
            for case .success(let frame) in decoder.feed(stand.advance(toMicros: micros)) {
                guard case .feedback(let feedback) = frame.message else { continue }
                let t0 = DispatchTime.now().uptimeNanoseconds
                controller.feedback(feedback, at: now)
                let output = controller.tick(at: now)
                tickCosts.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
                outgoing += output.messages
                for progress in output.progress where progress.id == current?.id && progress.state.isFinal {
                    if progress.state == .completed, let c = current, let yaw = stand.truth(.yaw), let pitch = stand.truth(.pitch) {
                        completed += 1
                        landingErrors.append(max(abs(yaw.motorPosition - c.yaw), abs(pitch.motorPosition - c.pitch)))
                    } else {
                        failed += 1
                    }
                    current = nil
                    nextMoveAt = now + 0.3
                }
            }
            if current == nil && now >= nextMoveAt {
                let yaw = (targets.unit() * 2 - 1) * 2.5, pitch = targets.unit() * 1.2 - 0.5
                let duration = 0.4 + targets.unit() * 1.2
                if let id = try? controller.setOrientation([.yaw: yaw, .pitch: pitch], relative: false, duration: duration, at: now) {
                    current = (id, yaw, pitch)
                    outgoing += controller.tick(at: now).messages
                }
            }
            if outgoing.isEmpty { outgoing.append(.heartbeat(uptimeMs: UInt32(micros / 1000))) }
            for message in outgoing {
                _ = decoder.feed(stand.receive(FrameEncoder.encode(sequencer.frame(message)), atMicros: micros))
            }
        }
        let wall = monotonicSeconds() - wallStart, cpu = cpuSeconds() - cpuStart
        let costs = tickCosts.sorted(), errors = landingErrors.sorted()
        print("| closed loop (seed \(seed)) | value |")
        print("|---|---|")
        print(String(cFormat: "| virtual time | %.0f s |", seconds))
        print(String(cFormat: "| wall time | %.2f s (%.0f× real time) |", wall, seconds / wall))
        print(String(cFormat: "| CPU | %.2f s |", cpu))
        print(String(cFormat: "| controller tick p50 / p99 / max | %.1f / %.1f / %.1f µs |", percentile(costs, 0.5), percentile(costs, 0.99), costs.last ?? .nan))
        print("| orientation moves completed / failed | \(completed) / \(failed) |")
        print(String(cFormat: "| landing error p50 / p99 / max (true motor angle) | %.2f / %.2f / %.2f mrad |",
                     percentile(errors, 0.5) * 1000, percentile(errors, 0.99) * 1000, (errors.last ?? .nan) * 1000))
    }
}
