import DockCore
import DockDrivers
import DockProtocol
import DockTracking
import Foundation
import StandEngine

/// dockd's engine and v4l2 driver steering a virtual PTZ webcam the way kernel/vptz behaves (a
/// pose moving to each absolute target at its own speed, read back rounded to the 1° step), with a
/// face walking past it fed to `tracking.observe`: tests/vm/test_dockd_loop.py's walking subject in
/// virtual time, where the link's and the client's delays can be set and repeated exactly.
struct V4L2WalkRig {
    struct Delays {
        /// From a request written to its ioctl running, and from the ioctl to its answer read, s.
        var ioctl = 0.002, answer = 0.002
        /// From a frame's capture to dockd handling its observation, s.
        var observation = 0.01
    }

    static let pan = V4L2Wire.Control.panAbsolute.rawValue, tilt = V4L2Wire.Control.tiltAbsolute.rawValue
    static let arcSecondsPerRadian = 180 * 3600 / Double.pi
    /// vptz's tiny2: ±130° pan, ±90° tilt, 1° steps, 60°/s.
    static let step = 3600.0, cameraSpeed = 60 * 3600.0
    static let hfov = 80 * Double.pi / 180
    static let vfov = 2 * atan(tan(hfov / 2) * 9 / 16)
    static let face = (width: 0.06, height: 0.1)

    var engine: StandEngine
    var delays: Delays
    var now = 0.0
    /// The camera's true pose and target, arc-seconds.
    var pose = (pan: 0.0, tilt: 0.0)
    var target = (pan: 0.0, tilt: 0.0)
    /// Requests on their way: when the ioctl runs, and the request.
    private var requests: [(at: Double, line: [UInt8])] = []
    private var answers: [(at: Double, bytes: [UInt8])] = []
    private var observations: [(at: Double, frame: ObservedFrame)] = []
    private var outgoing: [UInt8] = []
    /// Every frame: its capture time, where the subject and the camera were (rad), whether the face was in it.
    private(set) var frames: [(time: Double, subject: Double, pan: Double, tilt: Double, inFrame: Bool)] = []
    private(set) var refusals: [EngineError] = []

    init(maxSpeed: Double = 0.3, delays: Delays = Delays()) {
        var settings = V4L2CameraDriver.Settings()
        settings.maxSpeed = maxSpeed
        engine = StandEngine(driver: V4L2CameraDriver(settings: settings), settings: EngineSettings(), fallbackName: "vptz")
        self.delays = delays
        apply(engine.handle(.linkOpened, at: now))
    }

    /// The subject's pan, rad: standing at 0 for 2 s, walking right at 0.12 rad/s for 5 s, then standing.
    static func subject(at t: Double) -> Double { 0.12 * min(5, max(0, t - 2)) }

    /// Connects, then runs the walk (22 s of 15 Hz frames) from the first frame.
    mutating func walk(frameRate: Double = 15, seconds: Double = 22) {
        run(until: 1)
        precondition(engine.linkState == .connected, "the virtual camera connects")
        command(.camera(CameraModel(horizontalFieldOfView: Self.hfov, verticalFieldOfView: Self.vfov)))
        command(.setTracking(true))
        let start = now
        var frame = 0
        while now - start < seconds {
            let capture = start + Double(frame) / frameRate
            run(until: capture)
            observe(subject: Self.subject(at: capture - start))
            frame += 1
        }
        run(until: now + 0.5)
    }

    private mutating func observe(subject: Double) {
        let pan = pose.pan / Self.arcSecondsPerRadian, tilt = pose.tilt / Self.arcSecondsPerRadian
        let (detections, inFrame) = Self.face(subject: subject, pan: pan, tilt: tilt)
        frames.append((now, subject, pan, tilt, inFrame))
        observations.append((now + delays.observation, ObservedFrame(detections: detections, captureTime: now)))
    }

    /// The face a camera at `pan`, `tilt` sees of a subject at `subject` (rad, at the camera's
    /// height), as walking_subject.py projects it: none when it is out of the frame.
    static func face(subject: Double, pan: Double, tilt: Double) -> ([Detection], Bool) {
        let x = 0.5 + tan(subject - pan) / (2 * tan(hfov / 2))
        let y = 0.5 - tan(-tilt) / (2 * tan(vfov / 2))
        let inFrame = abs(subject - pan) < hfov / 2 && (face.width / 2...1 - face.width / 2).contains(x)
            && abs(tilt) < vfov / 2 && (face.height / 2...1 - face.height / 2).contains(y)
        let rect = NormalizedRect(x: x - face.width / 2, y: y - face.height / 2, width: face.width, height: face.height)
        return (inFrame ? [Detection(kind: .face, rect: rect, confidence: 0.95)] : [], inFrame)
    }

    private mutating func command(_ command: EngineCommand) {
        apply(engine.handle(.command(command, from: ClientRef(id: 1), force: false, token: 1), at: now))
    }

    /// Advances in 1 ms steps: the camera moves, ioctls run and answer, observations land, the
    /// engine is ticked when it asks.
    mutating func run(until end: Double) {
        while now < end - 1e-9 {
            now += 0.001
            move(by: 0.001)
            while let request = requests.first, request.at <= now {
                requests.removeFirst()
                answers.append((now + delays.answer, ioctl(request.line)))
            }
            while let answer = answers.first, answer.at <= now {
                answers.removeFirst()
                apply(engine.handle(.received(answer.bytes), at: now))
            }
            while let observation = observations.first, observation.at <= now {
                observations.removeFirst()
                let out = engine.handle(.command(.observe(observation.frame), from: ClientRef(id: 1), force: false, token: 2), at: now)
                for reply in out.replies { if case .failure(let error) = reply.result { refusals.append(error) } }
                apply(out)
            }
            if let due = engine.nextTick, due <= now { apply(engine.handle(.tick, at: now)) }
        }
    }

    private mutating func move(by dt: Double) {
        func approach(_ from: Double, _ to: Double) -> Double {
            let step = Self.cameraSpeed * dt
            return abs(to - from) <= step ? to : from + (to > from ? step : -step)
        }
        pose = (approach(pose.pan, target.pan), approach(pose.tilt, target.tilt))
    }

    /// What vptz answers a request: the controls and card to a query, the pose rounded to its step
    /// to a read, a set taken as the new target and echoed.
    private mutating func ioctl(_ line: [UInt8]) -> [UInt8] {
        guard let request = V4L2Wire.request(Substring(String(decoding: line.dropLast(), as: UTF8.self))) else { return [] }
        switch request {
        case .query:
            let volatile: UInt32 = 0x0080
            return V4L2Wire.encode(.control(.init(id: Self.pan, minimum: -468_000, maximum: 468_000, step: 3600, defaultValue: 0, flags: volatile)))
                + V4L2Wire.encode(.control(.init(id: Self.tilt, minimum: -324_000, maximum: 324_000, step: 3600, defaultValue: 0, flags: volatile)))
                + V4L2Wire.encode(.card("vptz OBSBOT Tiny 2 (virtual)"))
        case .get(let ids):
            func read(_ value: Double) -> Int32 { Int32((value / Self.step).rounded() * Self.step) }
            return V4L2Wire.encode(.values(ids.map { ($0, $0 == Self.pan ? read(pose.pan) : read(pose.tilt)) }))
        case .set(let values, _):
            for (id, value) in values {
                if id == Self.pan { target.pan = Double(value) } else if id == Self.tilt { target.tilt = Double(value) }
            }
            return V4L2Wire.encode(.values(values))
        case .extensionUnit, .extensionUnitRead:
            return V4L2Wire.encode(.failure(errno: 22, text: "no such extension unit"))
        }
    }

    private mutating func apply(_ out: EngineOutput) {
        outgoing += out.bytes
        while let end = outgoing.firstIndex(of: UInt8(ascii: "\n")) {
            requests.append((now + delays.ioctl, Array(outgoing[...end])))
            outgoing.removeFirst(end + 1)
        }
    }

    // MARK: - Figures

    var inFrame: Double { Double(frames.filter(\.inFrame).count) / Double(max(1, frames.count)) }
    /// The mean |subject − pan| over every frame, rad.
    var meanPanError: Double { frames.map { abs($0.subject - $0.pan) }.reduce(0, +) / Double(max(1, frames.count)) }
    /// The pan's range while the subject stands at the end (from 1 s after it stops), rad.
    var standingPans: ClosedRange<Double> {
        let start = frames.first?.time ?? 0
        let pans = frames.filter { $0.time - start >= 8 }.map(\.pan)
        return (pans.min() ?? 0)...(pans.max() ?? 0)
    }
    var tilts: ClosedRange<Double> { (frames.map(\.tilt).min() ?? 0)...(frames.map(\.tilt).max() ?? 0) }
}
