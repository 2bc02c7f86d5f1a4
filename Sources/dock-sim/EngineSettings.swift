import DockSim

/// Everything the engine is built from; plain values, so it can cross to the event loop.
struct EngineSettings: Sendable {
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
