import Testing

/// tests/vm/test_dockd_loop.py's walking subject through the v4l2 driver, in virtual time
/// (`V4L2WalkRig`), on the links a loaded VM gives: ioctls answered 40–80 ms late each way and
/// observations 50–150 ms after their capture. Before the fixes the camera hunted about the
/// standing subject by ±0.09 rad (80 ms round trip), or, at 160 ms, was never read again and
/// froze 0.6 rad off.
@Suite struct V4L2WalkTests {
    func walk(ioctl: Double, observation: Double, epoch: Double = 1000) -> V4L2WalkRig {
        var rig = V4L2WalkRig(delays: V4L2WalkRig.Delays(ioctl: ioctl, answer: ioctl, observation: observation), epoch: epoch)
        rig.walk()
        return rig
    }

    /// Whatever the host's clock reads (the walk's timing moves by sub-µs roundings with it), the
    /// camera rests on the two whole degrees nearest the standing subject. With the link's round
    /// trip alone as the loop's delay it hunted over 0.541 … 0.646 rad (six degrees) at one epoch
    /// and over 0.559 … 0.628 at the others: the tracking gain ignored the 0.1 s between reads.
    @Test(arguments: [0.0, 1000, 1234.5])
    func aSlowLinkFollowsTheWalkerAndHoldsStillWhereTheyStand(epoch: Double) {
        let rig = walk(ioctl: 0.04, observation: 0.05, epoch: epoch)
        #expect(rig.inFrame >= 0.99)
        #expect(rig.meanPanError <= 0.02, "mean |subject − pan| \(rig.meanPanError) rad")
        let standing = rig.standingPans
        #expect(standing.upperBound - standing.lowerBound <= 1.5 * V4L2WalkRig.step / V4L2WalkRig.arcSecondsPerRadian,
                "the pan swung over \(standing) while the subject stood at 0.6")
    }

    @Test func aLinkAsSlowAsTheCommandIntervalStillReadsThePoseAndTracks() {
        let rig = walk(ioctl: 0.08, observation: 0.15)
        #expect(rig.inFrame >= 0.99)
        #expect(rig.meanPanError <= 0.045, "mean |subject − pan| \(rig.meanPanError) rad")
        let standing = rig.standingPans
        #expect(abs((standing.lowerBound + standing.upperBound) / 2 - 0.6) <= 0.05 && standing.upperBound - standing.lowerBound <= 0.12,
                "the pan swung over \(standing) while the subject stood at 0.6")
    }
}

extension V4L2WalkTests {
    /// The yardstick, a native stand of the same speed on the same walk: the v4l2 path is
    /// 2.3× its mean error on a link on time and 6.1× at 80 ms each way (BENCHMARKS.md, printed by
    /// `V4L2WalkFigures`; the target, 1.5×, is missed: most of the on-time gap is the camera's 1°
    /// step, on which it rests up to 8.7 mrad off). Those were 1.7× and 7.6× until the tracker's
    /// settle finished its moves on the subject (issue 22), 2.0× and 8.6× before the walk ran in
    /// the virtual host (the timing alone moves them by up to 15 %), and 2.3× and 8.1× before the
    /// tracking gain counted the feedback period in the loop's delay.
    /// This guards the figures from getting worse, it does not meet the target.
    @Test func againstANativeStandOfTheSameSpeed() {
        for (ioctl, observation, bound) in [(0.002, 0.01, 3.0), (0.08, 0.15, 7.5)] {
            let v4l2 = walk(ioctl: ioctl, observation: observation)
            var native = NativeWalkRig(observationDelay: observation)
            native.walk()
            #expect(native.inFrame == 1 && native.meanPanError < 0.006, "the native stand: \(native.meanPanError) rad")
            #expect(v4l2.meanPanError <= bound * native.meanPanError, "\(v4l2.meanPanError) rad against the native stand's \(native.meanPanError)")
        }
    }
}
