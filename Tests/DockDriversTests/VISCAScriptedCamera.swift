import DockDrivers
import DockProtocol

/// A VISCA camera for the driver's unit tests in virtual time, answering the way Sony's command
/// lists say: AddressSet with the next address, IF_Clear with a socket-0 completion (and the
/// buffers emptied), a command with ACK then Completion in one of two sockets ("buffer full" when
/// both are held), Pan-tiltPosInq with the position, all after `latency` seconds. Drives move the
/// pan at 10 units/s per speed byte. The integration tests run the Python emulator
/// (tests/peers/visca_camera.py) in real time; this small model exists because the driver's
/// timing is tested here in virtual time, which no real peer can run in.
struct ScriptedCamera {
    var latency = 0.005
    /// Both command sockets held by another controller until then (IF_Clear frees them).
    var heldUntil = -Double.infinity
    /// Answer every moving drive with this error code instead (0x02 syntax, 0x41 not executable).
    var refuseDrives: UInt8?
    /// Answer nothing.
    var silent = false
    private(set) var panUnits = 0.0
    private(set) var panRate = 0.0
    private(set) var received: [(time: Double, message: [UInt8])] = []
    private var pending: [(due: Double, bytes: [UInt8])] = []
    private var buffer: [UInt8] = []
    private var lastTime = 0.0

    mutating func advance(to time: Double) {
        panUnits += panRate * max(0, time - lastTime)
        lastTime = time
    }

    /// Messages received whose bytes after the address start with `prefix`.
    func messages(_ prefix: [UInt8]) -> [(time: Double, message: [UInt8])] {
        received.filter { Array($0.message.dropFirst().prefix(prefix.count)) == prefix }
    }

    mutating func feed(_ bytes: [UInt8], at time: Double) {
        advance(to: time)
        for b in bytes {
            buffer.append(b)
            guard b == 0xFF else { continue }
            let message = buffer
            buffer = []
            received.append((time, message))
            if !silent { answer(message, at: time) }
        }
    }

    /// Replies due by `time`, in order.
    mutating func due(at time: Double) -> [UInt8] {
        advance(to: time)
        let ready = pending.filter { $0.due <= time }
        pending.removeAll { $0.due <= time }
        return ready.flatMap(\.bytes)
    }

    private mutating func reply(_ bytes: [UInt8], at time: Double) { pending.append((time + latency, bytes)) }

    private mutating func answer(_ m: [UInt8], at time: Double) {
        if m == VISCA.addressSet() { return reply([0x88, 0x30, 0x02, 0xFF], at: time) }
        if m == VISCA.ifClear(address: 1) {
            heldUntil = -Double.infinity
            return reply([0x90, 0x50, 0xFF], at: time)
        }
        if m == VISCA.positionInquiry(address: 1) {
            return reply([0x90, 0x50] + VISCA.nibbles(Int(panUnits.rounded()), count: 4) + VISCA.nibbles(0, count: 4) + [0xFF], at: time)
        }
        guard m.count >= 4, m[1] == 0x01 else { return reply([0x90, 0x60, 0x02, 0xFF], at: time) }
        if time < heldUntil { return reply([0x90, 0x60, 0x03, 0xFF], at: time) }
        if m[2] == 0x06 && m[3] == 0x01 {
            let moving = m[6] != 0x03
            if moving, let code = refuseDrives { return reply([0x90, code == 0x41 ? 0x61 : 0x60, code, 0xFF], at: time) }
            panRate = m[6] == 0x01 ? -10 * Double(m[4]) : m[6] == 0x02 ? 10 * Double(m[4]) : 0
        }
        reply([0x90, 0x41, 0xFF, 0x90, 0x51, 0xFF], at: time)
    }
}

/// Runs a driver against a `ScriptedCamera` in virtual time: a tick every `step` seconds (as the
/// daemon's 20 ms timer), replies delivered when due, `script` called before each tick to send
/// commands. Returns every report.
@discardableResult
func run(_ driver: inout VISCADriver, _ camera: inout ScriptedCamera, from start: Double, to end: Double, step: Double = 0.01,
         script: (inout VISCADriver, Double) -> [UInt8] = { _, _ in [] }) -> [DriverReport] {
    var reports: [DriverReport] = []
    var t = start
    while t < end - 1e-9 {
        t += step
        let replies = camera.due(at: t)
        if !replies.isEmpty { reports += driver.receive(replies, at: t) }
        camera.feed(script(&driver, t), at: t)
        let out = driver.tick(at: t)
        reports += out.reports
        camera.feed(out.bytes, at: t)
    }
    return reports
}

/// A driver started against `camera` and run until it reports ready.
func connected(_ profile: VISCAProfile, _ camera: inout ScriptedCamera) -> (driver: VISCADriver, time: Double) {
    var d = VISCADriver(profile: profile, address: 1, transport: .serial, pollHz: 20)
    camera.feed(d.start(at: 0), at: 0)
    var t = 0.0
    while t < 5 {
        let reports = run(&d, &camera, from: t, to: t + 0.01)
        t += 0.01
        if reports.contains(where: { if case .ready = $0 { true } else { false } }) { return (d, t) }
    }
    return (d, t)
}

extension DriverReport {
    var isRefusal: Bool { if case .refused = self { true } else { false } }
    var isFeedback: Bool { if case .feedback = self { true } else { false } }
}
