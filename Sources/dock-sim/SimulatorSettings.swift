import DockSim

/// Everything dock-sim's host is built from; plain values, so it can cross to the event loop.
struct SimulatorSettings: Sendable {
    enum Link: Sendable {
        case pty(symlink: String?)
        case unix(path: String)
    }

    var stand: SimulatedStand
    var link: Link
    var script: [SimScript.Step]
    var baud: Int?
    var logFrames: Bool
}
