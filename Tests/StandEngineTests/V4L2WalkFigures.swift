import Foundation
import Testing

/// The figures BENCHMARKS.md gives for the virtual walks ("A PTZ webcam under a real kernel"): the
/// v4l2 path's mean |subject − pan| over ioctl delays (each way) × observation delays, against a
/// native stand of the same speed on the same walk. Printed for the page; run with
/// `swift test --filter V4L2WalkFigures`.
@Suite struct V4L2WalkFigures {
    @Test func theWalkOverTheDelayGridAgainstANativeStand() {
        var lines = ["ioctl ms | observation ms | in frame | mean |subject − pan| rad | native | ratio | native on the 1° grid | ratio | standing pan"]
        var total = 0.0, count = 0.0
        for ioctl in [0.002, 0.02, 0.04, 0.08, 0.1, 0.15, 0.2] {
            for observation in [0.01, 0.05, 0.15] {
                var rig = V4L2WalkRig(delays: V4L2WalkRig.Delays(ioctl: ioctl, answer: ioctl, observation: observation))
                rig.walk()
                var native = NativeWalkRig(observationDelay: observation)
                native.walk()
                let standing = rig.standingPans
                let gridded = native.meanPanError(onGridOf: V4L2WalkRig.step / V4L2WalkRig.arcSecondsPerRadian)
                lines.append(String(format: "%.0f | %.0f | %.1f %% | %.4f | %.4f | %.1f× | %.4f | %.1f× | %.3f … %.3f", ioctl * 1000, observation * 1000,
                                    100 * rig.inFrame, rig.meanPanError, native.meanPanError, rig.meanPanError / native.meanPanError,
                                    gridded, rig.meanPanError / gridded, standing.lowerBound, standing.upperBound))
                if ioctl < 0.1 { total += rig.meanPanError; count += 1 }
                #expect(rig.inFrame >= 0.95, "ioctl \(ioctl), observation \(observation): in frame \(rig.inFrame)")
            }
        }
        lines.append(String(format: "mean over the 12 pairs up to 80 ms: %.4f rad", total / count))
        print(lines.joined(separator: "\n"))
    }
}
