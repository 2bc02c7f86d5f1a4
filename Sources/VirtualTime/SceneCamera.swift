/// A peer a scenario run (`runScene`) can film through: where its camera points, on a base that may
/// move, and which of the host's writes told it to move. The simulated stand (native protocol) and
/// the emulated ONVIF camera are both.
public protocol SceneCamera: VirtualPeer {
    /// Where the camera points now, on its base: yaw and pitch (rad, dockd's axes), the zoom's
    /// magnification (1 without a zoom) and its rate.
    var sceneAim: (yaw: Double, pitch: Double, zoom: Double, zoomVelocity: Double) { get }
    /// The base's yaw and pitch in the world at `micros` (a hand-held stand sways; a camera on a wall does not).
    func sceneBase(atMicros micros: UInt64) -> (yaw: Double, pitch: Double)
    /// How many of the host's writes (as `VirtualHost.written` records them) told it to move: a
    /// rate not zero, or a target.
    static func motionCommands(in written: [(time: Double, bytes: [UInt8])]) -> Int
}
