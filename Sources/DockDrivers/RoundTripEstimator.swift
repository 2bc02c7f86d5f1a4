/// The link's round-trip time, from acknowledgement samples, the way TCP estimates it (RFC 6298):
/// a smoothed mean and mean deviation, and from them the time to wait before resending. Pure: the
/// driver passes each measured round trip in seconds.
public struct RoundTripEstimator: Sendable, Equatable {
    /// The smoothed round trip, s; nil before the first sample.
    public private(set) var smoothed: Double?
    /// The smoothed mean deviation of the samples, s.
    public private(set) var variation = 0.0
    /// The largest sample so far, s.
    public private(set) var largest = 0.0

    public init() {}

    public mutating func sample(_ roundTrip: Double) {
        guard roundTrip.isFinite, roundTrip >= 0 else { return }
        largest = max(largest, roundTrip)
        guard let srtt = smoothed else {
            smoothed = roundTrip
            variation = roundTrip / 2
            return
        }
        // RFC 6298 §2.3: β = 1/4 for the deviation (updated first, from the old mean), α = 1/8.
        variation = 0.75 * variation + 0.25 * abs(srtt - roundTrip)
        smoothed = 0.875 * srtt + 0.125 * roundTrip
    }

    /// How long to wait for an acknowledgement before resending: SRTT + 4·RTTVAR, never below
    /// `floor` (the protocol's 100 ms on a healthy link) nor above `ceiling`.
    public func resendTimeout(floor: Double, ceiling: Double) -> Double {
        guard let smoothed else { return floor }
        return min(ceiling, max(floor, smoothed + 4 * variation))
    }
}
