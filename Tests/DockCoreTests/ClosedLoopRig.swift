import DockCore
import DockProtocol
import DockSim
import Testing

/// A `MotionController` closed around the real pure `SimulatedStand`, in virtual time: every 10 ms
/// the stand runs its physics, its FEEDBACK goes to the controller, the controller ticks, and its
/// messages go back to the stand as bytes. The host clock runs `hostEpoch` seconds ahead of the
/// stand's, so a controller that confused the two would fail.
///
/// The stand samples FEEDBACK on its own 10 ms grid; the rig ticks `feedbackPhase` seconds after
/// each sample (the daemon ticks right after a FEEDBACK, and on a timer that can fall anywhere in the
/// period). Each FEEDBACK reaches the controller at the host time it was sent (no transport delay),
/// so the controller sees it `feedbackPhase` old at the tick. Tests that depend on the loop's timing
/// run at every phase in `feedbackPhases`.
struct ClosedLoopRig {
    static let hostEpoch = 1000.0
    static let stepMicros: UInt64 = 10_000
    /// FEEDBACK at the tick, 3 ms and 9 ms before it.
    static let feedbackPhases: [Double] = [0, 0.003, 0.009]

    /// The true state of one axis (zero for an axis the stand lacks).
    struct AxisSample {
        var motorPosition = 0.0
        var velocity = 0.0
    }

    struct Sample {
        var time: Double
        var yaw: AxisSample
        var pitch: AxisSample
        var status: [Axis: AxisStatus]
    }

    /// A stand with a continuous yaw and nothing else.
    static var yawOnlyStand: StandConfiguration {
        var configuration = StandConfiguration()
        configuration.axes = configuration.axes.filter { $0.axis == .yaw }
        return configuration
    }

    var stand: SimulatedStand
    var controller: MotionController
    private var decoder = FrameDecoder()
    private var sequencer = FrameSequencer()
    private(set) var micros: UInt64 = 0
    private var lastSentMicros: UInt64 = 0
    /// Every tick's output, with its host time.
    private(set) var log: [(time: Double, output: ControlOutput)] = []
    /// The stand's true state after every step.
    private(set) var samples: [Sample] = []
    /// NACKs the stand sent: a correct controller never provokes one.
    private(set) var nacks: [Nack] = []
    private var lastStatus: [Axis: AxisStatus] = [:]
    /// With a slow link the stand's frames arrive this late, and each FEEDBACK is stamped on arrival.
    private let linkDelay: Double

    /// `linkDelay`: the stand answers that many seconds late (its `slow` fault); the controller is
    /// told the round trip, as the daemon tells it what its driver measured.
    init(stand configuration: StandConfiguration = StandConfiguration(), motion: MotionConfiguration = .init(),
         feedbackPhase: Double = 0, linkDelay: Double = 0, standClosesPositionLoop: Bool = false) throws {
        precondition(feedbackPhase >= 0 && feedbackPhase < Double(Self.stepMicros) / 1e6, "a phase within one period")
        var stand = SimulatedStand(configuration: configuration, seed: 7)
        var sequencer = FrameSequencer()
        let hello = FrameEncoder.encode(sequencer.frame(.hello(Hello(heartbeatTimeoutMs: 500, host: "DockCoreTests")), ackRequested: true))
        var decoder = FrameDecoder()
        let replies = decoder.feed(stand.receive([0] + hello, atMicros: 0))
        let capabilities = replies.compactMap { result -> Capabilities? in
            if case .success(let frame) = result, case .capabilities(let c) = frame.message { return c }
            return nil
        }.first
        self.stand = stand
        self.sequencer = sequencer
        self.decoder = decoder
        self.controller = MotionController(capabilities: try #require(capabilities), configuration: motion,
                                           standClosesPositionLoop: standClosesPositionLoop)
        self.linkDelay = linkDelay
        if linkDelay > 0 {
            _ = self.stand.apply(.slow(delayMs: linkDelay * 1000, seconds: 86400), atMicros: 0)
            controller.setRoundTrip(linkDelay)
        }
        // The stand's FEEDBACK falls on multiples of 10 ms after its HELLO at 0; ticks lag them.
        self.micros = UInt64((feedbackPhase * 1e6).rounded())
    }

    var time: Double { Self.hostEpoch + Double(micros) / 1e6 }

    func truth(_ axis: Axis) -> SimulatedStand.AxisTruth { stand.truth(axis)! }

    /// One feedback period: physics, FEEDBACK → controller (at the host time it was sent), tick,
    /// messages → stand.
    mutating func step() {
        micros += Self.stepMicros
        for case .success(let frame) in decoder.feed(stand.advance(toMicros: micros)) {
            switch frame.message {
            case .feedback(let f):
                // The stand's clock started at the rig's 0: its time_us is the rig's micros then.
                precondition(f.timeUs <= micros)
                controller.feedback(f, at: linkDelay > 0 ? time : Self.hostEpoch + Double(f.timeUs) / 1e6)
                for a in f.axes { lastStatus[a.axis] = a.status }
            case .nack(let n): nacks.append(n)
            default: break
            }
        }
        deliver(controller.tick(at: time))
        func sample(_ axis: Axis) -> AxisSample {
            stand.truth(axis).map { AxisSample(motorPosition: $0.motorPosition, velocity: $0.velocity) } ?? AxisSample()
        }
        samples.append(Sample(time: time, yaw: sample(.yaw), pitch: sample(.pitch), status: lastStatus))
    }

    /// Ticks now, between feedback periods (as the daemon does right after `stop`), and sends the result.
    @discardableResult
    mutating func tickNow() -> ControlOutput {
        let output = controller.tick(at: time)
        deliver(output)
        return output
    }

    private mutating func deliver(_ output: ControlOutput) {
        log.append((time, output))
        var messages = output.messages
        // The daemon's heartbeat duty (PROTOCOL.md §3), so an idle stand does not lapse.
        if messages.isEmpty && micros - lastSentMicros >= 100_000 { messages.append(.heartbeat(uptimeMs: UInt32(micros / 1000))) }
        for message in messages {
            let bytes = FrameEncoder.encode(sequencer.frame(message, ackRequested: true))
            for case .success(let frame) in decoder.feed(stand.receive(bytes, atMicros: micros)) {
                if case .nack(let n) = frame.message { nacks.append(n) }
            }
            lastSentMicros = micros
        }
    }

    mutating func run(for seconds: Double) {
        let end = micros + UInt64((seconds * 1e6).rounded())
        while micros < end { step() }
    }

    /// Runs until `id` reports a final state (or `timeout` passes); returns it with its host time.
    @discardableResult
    mutating func runUntilFinished(_ id: MotionID, timeout: Double = 10) -> (time: Double, progress: MotionProgress)? {
        let end = micros + UInt64(timeout * 1e6)
        while micros < end {
            step()
            if let done = final(id) { return done }
        }
        return nil
    }

    /// The final progress report of `id`, if any.
    func final(_ id: MotionID) -> (time: Double, progress: MotionProgress)? {
        for entry in log {
            if let p = entry.output.progress.first(where: { $0.id == id && $0.state.isFinal }) { return (entry.time, p) }
        }
        return nil
    }

    /// Samples from `start` on.
    func samples(since start: Double) -> [Sample] { samples.filter { $0.time >= start } }

    /// Every VELOCITY the controller sent from `start` on, per axis.
    func commands(since start: Double) -> [(time: Double, yaw: Double, pitch: Double)] {
        log.filter { $0.time >= start }.flatMap { entry in
            entry.output.messages.compactMap { message -> (Double, Double, Double)? in
                guard case .velocity(let values) = message else { return nil }
                let yaw = values.first { $0.axis == .yaw }.map { Double($0.value) } ?? 0
                let pitch = values.first { $0.axis == .pitch }.map { Double($0.value) } ?? 0
                return (entry.time, yaw, pitch)
            }
        }
    }

    /// Moves to a pose and waits out the rate-limit window, so a test starts from there.
    mutating func settle(at pose: [Axis: Double]) throws {
        let id = try controller.setOrientation(pose, relative: false, duration: nil, at: time)
        let result = runUntilFinished(id)
        let done = try #require(result)
        try #require(done.progress.state == .completed)
        run(for: 1.1)
    }
}

/// Turning points of a path: an extremum counts once the path has come back from it by more than
/// `hysteresis` rad, so sensor noise and creep are not counted.
func reversals(_ values: [Double], hysteresis h: Double = 0.01) -> Int {
    guard let first = values.first else { return 0 }
    var extreme = first, direction = 0, count = 0
    for v in values {
        switch direction {
        case 0:
            if v > first + h { direction = 1; extreme = v } else if v < first - h { direction = -1; extreme = v }
        case 1:
            if v > extreme { extreme = v } else if v < extreme - h { count += 1; direction = -1; extreme = v }
        default:
            if v < extreme { extreme = v } else if v > extreme + h { count += 1; direction = 1; extreme = v }
        }
    }
    return count
}

extension ClosedLoopRig {
    /// The default simulated stand's CAPABILITIES, for tests that drive the controller by hand.
    static var standCapabilities: Capabilities { StandConfiguration().capabilities }
}
