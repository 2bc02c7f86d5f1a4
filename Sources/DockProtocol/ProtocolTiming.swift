/// Every time of PROTOCOL.md §3 and §5 in one place, in seconds, so the host's driver, its link
/// watchdog and the simulated stand cannot disagree. The numbers fit together (PROTOCOL.md §3,
/// "Timing"): the handshake gives up before the link timeout; the link timeout is four stand
/// heartbeats; the host's heartbeat interval is a quarter of the stand's timeout.
public enum ProtocolTiming {
    // MARK: Stand → host

    /// A stand that has sent nothing else for this long sends HEARTBEAT (in every state).
    public static let standHeartbeatInterval = 0.25
    /// The host declares the link lost after this long without a valid frame from the stand: four
    /// stand heartbeats, so three lost in a row are survived.
    public static let linkTimeout = 1.0
    /// A stand answers HELLO (HELLO_REPLY) and any ACK request (ACK/NACK) within these.
    public static let helloReplyWithin = 0.1
    public static let ackWithin = 0.05
    /// BATTERY goes out when a level moved this far from the last one sent, or charge/flags changed…
    public static let batteryLevelStep: Float = 0.01
    /// …and at least this often.
    public static let batteryReportInterval = 10.0

    // MARK: Host → stand

    /// HELLO is sent at link open and again every `helloInterval` until HELLO_REPLY and
    /// CAPABILITIES are in, `helloAttempts` times in all…
    public static let helloInterval = 0.15
    public static let helloAttempts = 5
    /// …and the handshake fails this long after the first HELLO (0.75 s, inside `linkTimeout`, so
    /// the failure names the handshake rather than a lost link).
    public static var handshakeTimeout: Double { helloInterval * Double(helloAttempts) }

    /// The stand's heartbeat timeout: what HELLO asks for when it asks for 0, and the stand's clamp.
    public static let defaultHeartbeatTimeoutMs: UInt16 = 500
    public static let heartbeatTimeoutRangeMs: ClosedRange<UInt16> = 100...5000
    /// The longest the host may stay silent: a quarter of the stand's heartbeat timeout (the stand
    /// then stops only after four frames in a row are lost).
    public static func hostSilenceLimit(heartbeatTimeoutMs: UInt16) -> Double {
        Double(clampedHeartbeatTimeoutMs(heartbeatTimeoutMs)) / 4000
    }
    /// What a stand does with HELLO's `heartbeat_timeout_ms`: 0 is its default, the rest clamped.
    public static func clampedHeartbeatTimeoutMs(_ asked: UInt16, standDefault: UInt16 = defaultHeartbeatTimeoutMs) -> UInt16 {
        let value = asked == 0 ? standDefault : asked
        return min(heartbeatTimeoutRangeMs.upperBound, max(heartbeatTimeoutRangeMs.lowerBound, value))
    }

    /// A command that asked for an ACK is resent after this long without one (longer on a link
    /// measured slower: SRTT + 4·RTTVAR, at most `resendCeiling`), at most `maxResends` times.
    public static let resendAfter = 0.1
    public static let resendCeiling = 1.0
    public static let maxResends = 3

    /// Reconnecting after a lost link or a failed handshake: 0.25 s doubling to 8 s.
    public static let reconnectBackoff: ClosedRange<Double> = 0.25...8
    /// Reconnecting to a stand of another major version: it will refuse again until its firmware
    /// changes, so the host asks once a minute (and at once when the device is plugged in again).
    public static let incompatibleRetry = 60.0
}
