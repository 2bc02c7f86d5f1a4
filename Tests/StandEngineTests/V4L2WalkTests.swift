import Testing

/// tests/vm/test_dockd_loop.py's walking subject through the v4l2 driver, in virtual time
/// (`V4L2WalkRig`), on the links a loaded VM gives: ioctls answered 40–80 ms late each way and
/// observations 50–150 ms after their capture. Before the fixes the camera hunted about the
/// standing subject by ±0.09 rad (80 ms round trip), or, at 160 ms, was never read again and
/// froze 0.6 rad off.
@Suite struct V4L2WalkTests {
    func walk(ioctl: Double, observation: Double) -> V4L2WalkRig {
        var rig = V4L2WalkRig(delays: V4L2WalkRig.Delays(ioctl: ioctl, answer: ioctl, observation: observation))
        rig.walk()
        return rig
    }

    @Test func aSlowLinkFollowsTheWalkerAndHoldsStillWhereTheyStand() {
        let rig = walk(ioctl: 0.04, observation: 0.05)
        #expect(rig.inFrame >= 0.99)
        #expect(rig.meanPanError <= 0.02, "mean |subject − pan| \(rig.meanPanError) rad")
        let standing = rig.standingPans
        #expect(standing.upperBound - standing.lowerBound <= 0.07, "the pan swung over \(standing) while the subject stood at 0.6")
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
