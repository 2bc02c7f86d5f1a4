import DockDrivers
import Foundation
import VirtualTime

/// A velocity-only ONVIF camera that turns, as the project's emulator does (tests/peers/onvif_camera.py
/// with `motion=("continuous",)`): ContinuousMove and Stop, its head at 100°/s pan and 60°/s tilt at a
/// velocity of 1 over −170…170° and −30…90°, GetStatus giving where it points. Each request is
/// handled and answered `latency` after it came (the next of `latencies`, in turn): a loaded
/// camera or host, whose requests wait before the camera acts on them. A ContinuousMove's
/// Timeout is not kept (the driver renews its moves well within it).
struct TurningONVIFCameraPeer: VirtualPeer {
    /// Generic units: where the head points and how fast it turns (units/s).
    private(set) var pan = 0.0, tilt = 0.0
    private var panRate = 0.0, tiltRate = 0.0
    private var time: UInt64 = 0
    /// The replies waiting, each with when the camera acts on its request and answers.
    private var queue: [(due: UInt64, body: String)] = []
    private var decoder = ONVIFWire.Decoder()
    let latencies: [UInt64]
    private var requests = 0

    /// `latencies`: µs, taken in turn, one a request.
    init(latencies: [UInt64]) { self.latencies = latencies }

    /// Degrees per generic unit, and degrees/s at a velocity of 1.
    static let panDegreesPerUnit = 170.0, tiltDegreesPerUnit = 60.0
    static let panSpeed = 100.0, tiltSpeed = 60.0

    /// Where the head points as dockd's yaw (−pan) and pitch, radians.
    var yaw: Double { -(-170 + (pan + 1) * Self.panDegreesPerUnit) * .pi / 180 }
    var pitch: Double { (-30 + (tilt + 1) * Self.tiltDegreesPerUnit) * .pi / 180 }
    var still: Bool { panRate == 0 && tiltRate == 0 }

    mutating func receive(_ bytes: [UInt8], atMicros micros: UInt64) -> [UInt8] {
        guard let frames = decoder.feed(bytes) else { return ONVIFWire.encode(.failure("a broken request")) }
        for case .request(let request) in frames {
            let latency = latencies[requests % latencies.count]
            requests += 1
            // One request at a time from the driver, but a later one never overtakes an earlier.
            let due = max(micros + latency, queue.last?.due ?? 0)
            queue.append((due, String(decoding: request.body, as: UTF8.self)))
        }
        return []
    }

    mutating func advance(toMicros micros: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        while let first = queue.first, first.due <= micros {
            queue.removeFirst()
            turn(to: first.due)
            out += ONVIFWire.encode(.response(status: 200, wallClock: ONVIFCameraDriverTests.wallClock + Double(first.due) / 1e6,
                                              body: Array(answer(first.body).utf8)))
        }
        turn(to: micros)
        return out
    }

    mutating func endSession(atMicros micros: UInt64) {}

    private mutating func turn(to micros: UInt64) {
        let dt = Double(micros - time) / 1e6
        time = micros
        pan = min(1, max(-1, pan + panRate * dt))
        tilt = min(1, max(-1, tilt + tiltRate * dt))
    }

    /// The camera acts on a request and answers it.
    private mutating func answer(_ body: String) -> String {
        if body.hasPrefix("<tptz:ContinuousMove>") {
            let x = Self.attribute("x", in: body), y = Self.attribute("y", in: body)
            panRate = x * Self.panSpeed / Self.panDegreesPerUnit
            tiltRate = y * Self.tiltSpeed / Self.tiltDegreesPerUnit
            return ONVIFEmulatorReplies.stop
        }
        if body.hasPrefix("<tptz:Stop>") {
            (panRate, tiltRate) = (0, 0)
            return ONVIFEmulatorReplies.stop
        }
        if body.contains("GetConfigurationOptions") { return ONVIFEmulatorReplies.continuousOnlyOptions }
        if body.contains("GetStatus") {
            // Six decimals, as the emulator's (and most cameras') GetStatus.
            let read = String(format: #"x="%.6f" y="%.6f""#, pan, tilt)
            return ONVIFEmulatorReplies.status.replacingOccurrences(of: #"x="0.250000" y="-0.500000""#, with: read)
        }
        return ONVIFCameraPeer.answers.first { body.contains($0.operation) }?.reply ?? ONVIFEmulatorReplies.stop
    }

    /// The number in `name="…"` of a velocity's PanTilt.
    private static func attribute(_ name: String, in body: String) -> Double {
        guard let panTilt = body.range(of: "<tt:PanTilt "), let start = body.range(of: name + "=\"", range: panTilt.upperBound..<body.endIndex),
              let end = body[start.upperBound...].firstIndex(of: "\"") else { return 0 }
        return Double(body[start.upperBound..<end]) ?? 0
    }
}
