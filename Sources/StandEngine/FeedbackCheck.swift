import DockProtocol

/// What a stand cannot have measured. Such reports are refused, counted and reported, never acted on.
enum FeedbackCheck {
    /// Why a FEEDBACK frame cannot be true, or nil: a non-finite value, a limited axis far outside its
    /// range, a speed far beyond the axis's maximum.
    static func implausible(_ feedback: Feedback, capabilities: Capabilities?) -> String? {
        for a in feedback.axes {
            guard a.position.isFinite, a.velocity.isFinite else { return "\(a.axis) reported \(a.position) rad, \(a.velocity) rad/s" }
            guard let c = capabilities?.axis(a.axis) else { continue }
            if !c.continuous && (a.position < c.min - 0.2 || a.position > c.max + 0.2) {
                return "\(a.axis) at \(a.position) rad, outside its range \(c.min)…\(c.max)"
            }
            if abs(a.velocity) > 3 * c.maxSpeed + 0.5 {
                return "\(a.axis) at \(a.velocity) rad/s, its maximum is \(c.maxSpeed)"
            }
        }
        return nil
    }
}
