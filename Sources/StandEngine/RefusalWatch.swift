/// Drives the stand refuses. A few refusals within a second mean the stand cannot move now (a
/// camera powered off, a busy interface, a fault): motion is held back, for a second at first and
/// twice as long each time it happens again soon after, up to 8 s.
struct RefusalWatch: Sendable {
    private var recent: [Double] = []
    private var until = -Double.infinity
    private var backoff = 0.0
    private var reason = ""

    /// How many refusals within `window` seconds hold motion back.
    private static let threshold = 3
    private static let window = 1.0

    /// Notes one refused drive; returns the hold when this one starts it.
    mutating func refused(_ why: String, at now: Double) -> (reason: String, seconds: Double)? {
        reason = why
        recent.removeAll { now - $0 > Self.window }
        recent.append(now)
        guard recent.count >= Self.threshold, now >= until else { return nil }
        // Quiet for a while since the last hold: start again from a second.
        backoff = now - until > 10 ? 1 : min(8, max(1, backoff * 2))
        until = now + backoff
        recent.removeAll()
        return (why, backoff)
    }

    func holding(at now: Double) -> Bool { now < until }

    /// Why motion is held back now, for the caller; nil when it is not.
    func holdReason(at now: Double) -> String? {
        guard holding(at: now) else { return nil }
        let left = Int(((until - now) * 10).rounded(.up))
        return "\(reason); motion is held back for \(left / 10).\(left % 10) s"
    }
}
