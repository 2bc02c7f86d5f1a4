/// DockKit allows at most 2 orientation/animation calls per second; more are refused with
/// frame-rate-too-high. A sliding window over the accepted calls' times (refused calls do not count).
struct CommandRateLimiter: Sendable, Equatable {
    let limit: Int
    let window: Double
    private var accepted: [Double] = []

    init(limit: Int, window: Double) { self.limit = limit; self.window = window }

    func allows(at time: Double) -> Bool {
        accepted.count { time - $0 < window } < limit
    }

    mutating func record(at time: Double) {
        accepted.removeAll { time - $0 >= window }
        accepted.append(time)
    }
}
