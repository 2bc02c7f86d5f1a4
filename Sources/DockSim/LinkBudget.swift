import DockProtocol

/// PROTOCOL.md §5.1: a stand's periodic output (FEEDBACK and IMU) fits in 75 % of its link. It keeps
/// FEEDBACK as fast as it can (never below 50 Hz) and gives IMU what is left.
public enum LinkBudget {
    public static let share = 0.75
    public static let minimumFeedbackHz: UInt16 = 50

    /// Bytes on the wire of one FEEDBACK for `axes` axes and of one IMU (payload + 8, §5.1).
    public static func feedbackBytes(axes: Int) -> Int { 8 + 1 + 13 * axes + 8 }
    public static let imuBytes = 32 + 8

    /// The rates to announce on a link carrying `bytesPerSecond`, at most the ones wanted: the
    /// fastest FEEDBACK (wanted, halved down to 50 Hz) with the fastest IMU (wanted, halved, then 0)
    /// that fit. nil when even 50 Hz FEEDBACK alone does not fit: a link the protocol does not support.
    public static func rates(feedbackHz: UInt16, imuHz: UInt16, axes: Int, bytesPerSecond: Double) -> (feedbackHz: UInt16, imuHz: UInt16)? {
        let budget = share * bytesPerSecond
        for feedback in halvings(from: feedbackHz, floor: minimumFeedbackHz) {
            for imu in halvings(from: imuHz, floor: 25) + [0] where imu <= imuHz {
                let bytes = Double(feedback) * Double(feedbackBytes(axes: axes)) + Double(imu) * Double(imuBytes)
                if bytes <= budget { return (feedback, imu) }
            }
        }
        return nil
    }

    /// `start`, `start / 2`, … while not below `floor` (the floor itself last, when `start` is above it).
    private static func halvings(from start: UInt16, floor: UInt16) -> [UInt16] {
        guard start > 0 else { return [] }
        var values: [UInt16] = []
        var value = start
        while value > floor { values.append(value); value /= 2 }
        values.append(min(start, floor))
        return values
    }
}
