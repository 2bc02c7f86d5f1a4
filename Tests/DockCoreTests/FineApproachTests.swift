import DockCore
import DockProtocol
import Testing

/// The fine approach (`MotionController.fineApproach`, issue 24) in virtual time, against a head
/// steered only by velocities: each command acts `delay` s after it is sent, and each read, taken
/// every 0.1 s, arrives `delay` s after it was taken (a round trip of twice that).
@Suite struct FineApproachTests {
    static let capabilities = Capabilities(
        feedbackHz: 10, imuHz: 0, features: [], buttons: [], customButtons: 0,
        axes: [AxisCapability(axis: .yaw, continuous: false, min: -2.9, max: 2.9, maxSpeed: 1.7, maxAccel: 7, countsPerRev: 360 * 3600),
               AxisCapability(axis: .pitch, continuous: false, min: -0.5, max: 1.5, maxSpeed: 1.0, maxAccel: 4, countsPerRev: 360 * 3600)],
        batteries: [])

    struct VelocityHead {
        var controller: MotionController
        let delay: Double
        var time = 100.0
        var position: [Double] = [0, 0]
        /// Velocities sent, acted on `delay` after `time`.
        var commands: [(time: Double, velocity: [Double])] = [(0, [0, 0])]
        /// Reads taken, delivered `delay` after `time`.
        var reads: [(time: Double, position: [Double])] = []
        var log: [ControlOutput] = []

        init(delay: Double, positionIsPolled: Bool, fineApproach: Bool) {
            controller = MotionController(capabilities: FineApproachTests.capabilities, positionIsPolled: positionIsPolled, fineApproach: fineApproach)
            self.delay = delay
            controller.setRoundTrip(2 * delay)
        }

        /// Advances 10 ms: the head moves at the velocity in force, a read is taken every 0.1 s,
        /// those due are delivered, and the controller ticks every 50 ms.
        mutating func step() {
            let step = 0.01
            let acting = commands.last { $0.time + delay <= time }!.velocity
            for i in position.indices { position[i] += acting[i] * step }
            time += step
            let tick = (time * 100).rounded()
            if Int(tick) % 10 == 0 { reads.append((time, position)) }
            while let read = reads.first, read.time + delay <= time + 1e-9 {
                reads.removeFirst()
                controller.feedback(Feedback(timeUs: 0, axes: [
                    AxisFeedback(axis: .yaw, position: Float(read.position[0]), velocity: 0, status: []),
                    AxisFeedback(axis: .pitch, position: Float(read.position[1]), velocity: 0, status: []),
                ]), at: time)
            }
            guard Int(tick) % 5 == 0 else { return }
            let output = controller.tick(at: time)
            log.append(output)
            for case .velocity(let values) in output.messages {
                commands.append((time, [Axis.yaw, .pitch].map { axis in Double(values.first { $0.axis == axis }?.value ?? 0) }))
            }
        }

        mutating func run(for seconds: Double) {
            for _ in 0..<Int((seconds / 0.01).rounded()) { step() }
        }

        /// Orients to (yaw, pitch) over 1.5 s and runs until the head has long come to rest.
        mutating func orient(yaw: Double, pitch: Double) throws -> MotionProgress.State? {
            run(for: 0.5)
            let id = try controller.setOrientation([.yaw: yaw, .pitch: pitch], relative: false, duration: 1.5, at: time)
            run(for: 8)
            return log.flatMap(\.progress).last { $0.id == id && $0.state.isFinal }?.state
        }
    }

    @Test(arguments: [0.02, 0.08, 0.15])
    func aPolledVelocityHeadRestsWithinTheFineBand(delay: Double) throws {
        var head = VelocityHead(delay: delay, positionIsPolled: true, fineApproach: true)
        let state = try head.orient(yaw: -0.4, pitch: 0.3)
        let band = head.controller.configuration.fineBand
        #expect(state == .completed)
        #expect(abs(head.position[0] + 0.4) < band && abs(head.position[1] - 0.3) < band, "at \(head.position)")
    }

    /// Where the fine approach does not apply, a controller that declares it sends exactly what
    /// one that does not sends: an orientation on a stand whose reads do not lag its commands
    /// (streamed, or no round trip measured), and velocity mode on a polled one.
    @Test func elsewhereNothingChanges() throws {
        for (delay, polled) in [(0.08, false), (0.0, true)] {
            var with = VelocityHead(delay: delay, positionIsPolled: polled, fineApproach: true)
            var without = VelocityHead(delay: delay, positionIsPolled: polled, fineApproach: false)
            _ = try with.orient(yaw: -0.4, pitch: 0.3)
            _ = try without.orient(yaw: -0.4, pitch: 0.3)
            #expect(with.log == without.log, "delay \(delay), polled \(polled)")
        }
        func drive(_ head: inout VelocityHead) throws {
            head.run(for: 0.5)
            for rate in [0.3, -0.2, 0.1, 0.25, -0.3, 0.05, 0.0, -0.15] {
                try head.controller.setVelocity([.yaw: rate, .pitch: -rate / 2], at: head.time)
                head.run(for: 0.2)
            }
            head.run(for: 2)
        }
        var with = VelocityHead(delay: 0.08, positionIsPolled: true, fineApproach: true)
        var without = VelocityHead(delay: 0.08, positionIsPolled: true, fineApproach: false)
        try drive(&with)
        try drive(&without)
        #expect(with.log == without.log)
    }
}
