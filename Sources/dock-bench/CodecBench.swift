#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import DockProtocol

/// Encode and decode throughput of the wire codec on a realistic mix (mostly FEEDBACK and IMU).
struct CodecBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "codec", abstract: "Wire codec throughput.")

    @Option(help: "Frames to encode and decode.") var frames: Int = 1_000_000

    func run() {
        var sequencer = FrameSequencer()
        let feedback = Message.feedback(Feedback(timeUs: 123_456_789, axes: [
            AxisFeedback(axis: .yaw, position: 0.5, velocity: 0.25, effort: 0.1, status: []),
            AxisFeedback(axis: .pitch, position: -0.25, velocity: 0, effort: .nan, status: [.atMin]),
        ]))
        let imu = Message.imu(ImuSample(timeUs: 1, gyro: (0.01, 0.02, 0.03), accel: (0, 0, 9.81)))
        let velocity = Message.velocity([AxisValue(.yaw, 0.3), AxisValue(.pitch, -0.1)])
        let mix = [feedback, imu, feedback, velocity]

        let encodeStart = monotonicSeconds(), encodeCPU = cpuSeconds()
        var wire: [UInt8] = []
        wire.reserveCapacity(frames * 45)
        for i in 0..<frames { wire += FrameEncoder.encode(sequencer.frame(mix[i & 3])) }
        let encodeTime = monotonicSeconds() - encodeStart, encodeCost = cpuSeconds() - encodeCPU

        var decoder = FrameDecoder()
        var decoded = 0
        let decodeStart = monotonicSeconds(), decodeCPU = cpuSeconds()
        var offset = 0
        while offset < wire.count {
            let end = min(wire.count, offset + 4096)  // serial-sized reads
            decoder.feed(wire[offset..<end]) { if case .success = $0 { decoded += 1 } }
            offset = end
        }
        let decodeTime = monotonicSeconds() - decodeStart, decodeCost = cpuSeconds() - decodeCPU
        precondition(decoded == frames, "decoded \(decoded) of \(frames)")

        print("| codec | frames | MB | wall s | frames/s | ns/frame (CPU) |")
        print("|---|---|---|---|---|---|")
        let mb = Double(wire.count) / 1e6
        print(String(cFormat: "| encode | %d | %.1f | %.2f | %.0f | %.0f |", frames, mb, encodeTime, Double(frames) / encodeTime, encodeCost / Double(frames) * 1e9))
        print(String(cFormat: "| decode | %d | %.1f | %.2f | %.0f | %.0f |", frames, mb, decodeTime, Double(frames) / decodeTime, decodeCost / Double(frames) * 1e9))
    }
}
