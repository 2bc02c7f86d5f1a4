import DockProtocol
@testable import DockSim
import Testing

/// The §5.1 table of PROTOCOL.md, computed: the sizes are the real encoder's, the rates the rule's.
@Suite("Slow links (PROTOCOL.md §5.1)")
struct LinkBudgetTests {
    @Test func frameSizesAreTheEncoders() {
        let feedback = Feedback(timeUs: 1, axes: [AxisFeedback(axis: .yaw, position: 1, velocity: 1), AxisFeedback(axis: .pitch, position: 1, velocity: 1)])
        #expect(FrameEncoder.encode(Frame(seq: 0x0101, message: .feedback(feedback))).count == LinkBudget.feedbackBytes(axes: 2))
        let imu = ImuSample(timeUs: 1, gyro: (1, 1, 1), accel: (1, 1, 1))
        #expect(FrameEncoder.encode(Frame(seq: 0x0101, message: .imu(imu))).count == LinkBudget.imuBytes)
        #expect(LinkBudget.feedbackBytes(axes: 2) == 43 && LinkBudget.feedbackBytes(axes: 3) == 56)
    }

    @Test("the table's rows", arguments: [
        (115_200, 2, 100, 100), (115_200, 3, 100, 50), (57_600, 2, 100, 0), (57_600, 3, 50, 25),
        (38_400, 2, 50, 0), (38_400, 3, 50, 0), (1_000_000, 2, 100, 100),
    ])
    func rates(baud: Int, axes: Int, feedbackHz: Int, imuHz: Int) throws {
        let got = try #require(LinkBudget.rates(feedbackHz: 100, imuHz: 100, axes: axes, bytesPerSecond: Double(baud) / 10))
        #expect(got.feedbackHz == UInt16(feedbackHz) && got.imuHz == UInt16(imuHz), "\(baud) baud, \(axes) axes: \(got)")
    }

    @Test func belowThirtyEightKiloBaudIsNotSupported() {
        #expect(LinkBudget.rates(feedbackHz: 100, imuHz: 100, axes: 2, bytesPerSecond: 1920) == nil)
        #expect(LinkBudget.rates(feedbackHz: 100, imuHz: 0, axes: 2, bytesPerSecond: 960) == nil)
    }

    @Test func ratesNeverRiseAboveTheWantedOnes() {
        let got = LinkBudget.rates(feedbackHz: 60, imuHz: 0, axes: 2, bytesPerSecond: 1e6)
        #expect(got?.feedbackHz == 60 && got?.imuHz == 0)
    }
}
