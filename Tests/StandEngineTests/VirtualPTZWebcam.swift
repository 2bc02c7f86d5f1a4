import DockDrivers
import VirtualTime

/// A PTZ webcam as kernel/vptz behaves, behind the V4L2 driver's device adapter (what
/// VideoDeviceLink answers): a pose moving to each absolute target at 60°/s, read back rounded to
/// its 1° step; each request's ioctl runs `ioctlDelay` after it was written and its answer is read
/// `answerDelay` after that (a loaded machine's thread and socketpair).
struct VirtualPTZWebcam: VirtualPeer {
    static let pan = V4L2Wire.Control.panAbsolute.rawValue, tilt = V4L2Wire.Control.tiltAbsolute.rawValue
    /// vptz's tiny2: ±130° pan, ±90° tilt, 1° steps (arc-seconds), 60°/s.
    static let step = 3600.0, speed = 60 * 3600.0

    let ioctlDelay: UInt64, answerDelay: UInt64
    /// The true pose and the target it moves to, arc-seconds.
    private(set) var pose = (pan: 0.0, tilt: 0.0)
    private var target = (pan: 0.0, tilt: 0.0)
    private var time: UInt64 = 0
    private var lineBuffer: [UInt8] = []
    /// Requests on their way, with when their ioctl runs; answers on theirs, with when they are read.
    private var requests: [(at: UInt64, line: [UInt8])] = []
    private var answers: [(at: UInt64, bytes: [UInt8])] = []

    /// Delays in seconds.
    init(ioctlDelay: Double, answerDelay: Double) {
        self.ioctlDelay = UInt64((ioctlDelay * 1e6).rounded())
        self.answerDelay = UInt64((answerDelay * 1e6).rounded())
    }

    mutating func receive(_ bytes: [UInt8], atMicros micros: UInt64) -> [UInt8] {
        for byte in bytes {
            lineBuffer.append(byte)
            if byte == UInt8(ascii: "\n") {
                requests.append((micros + ioctlDelay, lineBuffer))
                lineBuffer = []
            }
        }
        return []
    }

    /// Moves the pose in 1 ms steps; runs the ioctls due, and returns the answers due.
    mutating func advance(toMicros micros: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        while time < micros {
            let dt = min(1000, micros - time)
            time += dt
            move(by: Double(dt) / 1e6)
            while let request = requests.first, request.at <= time {
                requests.removeFirst()
                answers.append((time + answerDelay, ioctl(request.line)))
            }
            while let answer = answers.first, answer.at <= time {
                answers.removeFirst()
                out += answer.bytes
            }
        }
        return out
    }

    mutating func endSession(atMicros micros: UInt64) {
        requests = []
        answers = []
        lineBuffer = []
    }

    private mutating func move(by dt: Double) {
        func approach(_ from: Double, _ to: Double) -> Double {
            let step = Self.speed * dt
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
}
