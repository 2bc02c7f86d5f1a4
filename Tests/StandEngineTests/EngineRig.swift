import DockCore
import DockProtocol
import DockSim
import VirtualTime
import StandEngine

/// Helpers over the virtual host on the simulated stand for the engine's tests.
extension ClientRef {
    static let app = ClientRef(id: 1, pid: 101)
    static let other = ClientRef(id: 2, pid: 202)
}

extension VirtualHost<SimulatedStand> {
    /// A connected rig with dockd's default settings (or `settings`).
    static func connected(_ settings: EngineSettings = EngineSettings(), configure: (inout StandConfiguration) -> Void = { _ in }) -> VirtualHost<SimulatedStand> {
        var configuration = StandConfiguration()
        configure(&configuration)
        var rig = VirtualHost<SimulatedStand>(stand: configuration, settings: settings)
        precondition(rig.connect(), "the simulated stand connects")
        rig.clearRecords()
        return rig
    }

    /// The stand's true output angle of `axis`, rad.
    func angle(_ axis: Axis) -> Double { stand.truth(axis)?.outputPosition ?? 0 }
    func speed(_ axis: Axis) -> Double { stand.truth(axis)?.velocity ?? 0 }

    /// Messages the engine sent since the records were last cleared.
    func sentMessages(_ match: (Message) -> Bool) -> [Message] { sent.map(\.frame.message).filter(match) }

    /// The sequence number of the last frame the engine sent carrying a message of `type`.
    func lastSeq(of type: MessageType) -> UInt16? { sent.last { $0.frame.message.type == type }?.frame.seq }

    /// A frame from the stand as the wire carries it (a NACK, an event), straight into the engine.
    mutating func fromStand(_ message: Message) {
        var sequencer = FrameSequencer()
        inject(FrameEncoder.encode(sequencer.frame(message)))
    }

    /// Final motion progress states published so far, by motion id.
    var finished: [UInt64: MotionProgress.State] {
        var result: [UInt64: MotionProgress.State] = [:]
        for case .motionProgress(let p) in notifications.map(\.notification) where p.state.isFinal { result[p.id.rawValue] = p.state }
        return result
    }

    /// The fault texts dockd published about the stand.
    var daemonFaults: [FaultReport] {
        notifications.compactMap { if case .fault(let f) = $0.notification, f.source == .dockd { return f } else { return nil } }
    }
}

extension Result where Failure == EngineError {
    var error: EngineError? { if case .failure(let e) = self { return e } else { return nil } }
}
