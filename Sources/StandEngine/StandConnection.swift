import DockCore

/// What one connection to the stand holds, from its READY until the link closes: nothing of it
/// outlives the connection (a reconnect starts from a new READY).
struct StandConnection: Sendable {
    /// The controller that steers the stand, made from what the stand said it is.
    var motion: MotionController
    /// A sweep or tour that runs: it steers instead of tracking.
    var panPlanner: PanPlanner?
}
