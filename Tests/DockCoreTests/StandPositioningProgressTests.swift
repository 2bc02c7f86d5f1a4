import DockCore
import DockProtocol
import Testing

/// A camera that runs its own AbsolutePosition (the controller only watches), at its own pace:
/// it arrives when it arrives. In virtual time, polled at 20 Hz.
private struct PositioningCamera {
    static let capabilities = Capabilities(
        feedbackHz: 20, imuHz: 0, features: [], buttons: [], customButtons: 0,
        axes: [AxisCapability(axis: .yaw, continuous: false, min: -2.9, max: 2.9, maxSpeed: 2.1, maxAccel: 3.5, countsPerRev: 5184),
               AxisCapability(axis: .pitch, continuous: false, min: -0.52, max: 1.57, maxSpeed: 1.75, maxAccel: 2.6, countsPerRev: 5184)],
        batteries: [])

    var controller = MotionController(capabilities: capabilities, standClosesPositionLoop: true)
    var position: [Axis: Double] = [.yaw: 0, .pitch: 0]
    var velocity: [Axis: Double] = [.yaw: 0, .pitch: 0]
    /// Where the camera is going, and how fast each axis really turns (rad/s).
    var target: [Axis: Double]?
    /// Each axis's true speed for the move: `speed(axis, distance, asked duration)`.
    var speed: (Axis, Double, Double) -> Double
    /// The camera stops on its own here (a stalled axis), if set.
    var stallAt: [Axis: Double] = [:]
    var rates: [Axis: Double] = [:]
    var time = 100.0
    var sent: [(time: Double, message: Message)] = []

    init(speed: @escaping (Axis, Double, Double) -> Double) { self.speed = speed }

    mutating func step(_ dt: Double = 0.05) -> [MotionProgress] {
        time += dt
        for axis in [Axis.yaw, .pitch] {
            var v = 0.0
            if let goal = target?[axis] {
                let d = goal - position[axis]!
                let stride = min(abs(d), rates[axis, default: 0] * dt)
                var next = position[axis]! + (d > 0 ? stride : -stride)
                if let stall = stallAt[axis], (d > 0 ? next >= stall : next <= stall) { next = stall }
                v = (next - position[axis]!) / dt
                position[axis] = next
            }
            velocity[axis] = v
        }
        controller.feedback(Feedback(timeUs: UInt64(time * 1e6), axes: [Axis.yaw, .pitch].map {
            AxisFeedback(axis: $0, position: Float(position[$0]!), velocity: Float(velocity[$0]!), status: [])
        }), at: time)
        return deliver(controller.tick(at: time))
    }

    mutating func deliver(_ output: ControlOutput) -> [MotionProgress] {
        for message in output.messages {
            sent.append((time, message))
            switch message {
            case .position(let duration, let targets):
                target = Dictionary(uniqueKeysWithValues: targets.map { ($0.axis, Double($0.position)) })
                for t in targets { rates[t.axis] = speed(t.axis, abs(Double(t.position) - position[t.axis]!), Double(duration)) }
            case .stop:
                target = nil
            default:
                break
            }
        }
        return output.progress
    }

    /// Runs until the motion ends (or `timeout`); its final progress and when.
    mutating func run(_ id: MotionID, timeout: Double) -> (progress: MotionProgress, time: Double)? {
        let end = time + timeout
        while time < end {
            if let last = step().last(where: { $0.id == id && $0.state != .running }) { return (last, time) }
        }
        return nil
    }
}

@Suite("A camera's own positioning, at the camera's pace")
struct StandPositioningProgressTests {
    /// Issue 21: the camera's tilt turns at a third of its profile's speed. Its AbsolutePosition
    /// arrives three times later than planned: it completes there, never stopped short.
    @Test func aCameraSlowerThanPlannedCompletesAtTheTarget() throws {
        var camera = PositioningCamera { axis, distance, duration in
            (distance / duration) * (axis == .pitch ? 0.33 : 1)
        }
        _ = camera.step()
        let start = camera.time
        let id = try camera.controller.setOrientation([.yaw: 0.3, .pitch: 0.2], relative: false, duration: 1, at: start)
        _ = camera.deliver(camera.controller.tick(at: start))
        let ended = camera.run(id, timeout: 10)
        let end = try #require(ended)
        #expect(end.progress.state == .completed, "\(end.progress.state)")
        #expect(end.time - start > 2.9, "arrived when the camera did")
        #expect(abs(camera.position[.pitch]! - 0.2) < 0.01 && abs(camera.position[.yaw]! - 0.3) < 0.01)
        #expect(!camera.sent.contains { if case .stop = $0.message { true } else { false } }, "never stopped")
    }

    @Test func aCameraThatDoesNotMoveFailsAndIsStopped() throws {
        var camera = PositioningCamera { _, _, _ in 0 }
        _ = camera.step()
        let start = camera.time
        let id = try camera.controller.setOrientation([.pitch: 0.2], relative: false, duration: 1, at: start)
        _ = camera.deliver(camera.controller.tick(at: start))
        let ended = camera.run(id, timeout: 10)
        let end = try #require(ended)
        guard case .failed(let reason) = end.progress.state else { Issue.record("\(end.progress.state)"); return }
        #expect(reason.contains("pitch still 0.200 rad from its target"), "\(reason)")
        #expect(end.time - start < 2, "failed after the stall window, not later")
        #expect(camera.sent.contains { if case .stop = $0.message { $0.time == end.time } else { false } })
    }

    @Test func aCameraThatStallsHalfwayFailsOnceItStopsGettingCloser() throws {
        var camera = PositioningCamera { _, distance, duration in distance / duration }
        camera.stallAt = [.pitch: 0.1]
        _ = camera.step()
        let start = camera.time
        let id = try camera.controller.setOrientation([.pitch: 0.2], relative: false, duration: 1, at: start)
        _ = camera.deliver(camera.controller.tick(at: start))
        let ended = camera.run(id, timeout: 10)
        let end = try #require(ended)
        guard case .failed(let reason) = end.progress.state else { Issue.record("\(end.progress.state)"); return }
        #expect(reason.contains("pitch still 0.100 rad"), "\(reason)")
        // It reached the stall at about 0.5 s; failed a stall window (about 1.1 s) later.
        #expect(end.time - start > 1.4 && end.time - start < 2.2, "\(end.time - start)")
    }
}
