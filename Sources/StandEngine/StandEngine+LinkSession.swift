import DockDrivers

/// The engine as a session over its link: a host that only moves bytes and time (dockd's
/// `LinkSessionHost` on a real link, the virtual link of the tests and benchmarks) runs it as it
/// runs any other.
extension StandEngine: LinkSession {
    public mutating func handle(link event: LinkEvent, at now: Double) -> EngineOutput {
        switch event {
        case .opened: handle(.linkOpened, at: now)
        case .received(let bytes): handle(.received(bytes), at: now)
        case .tick: handle(.tick, at: now)
        case .closed(let reason): handle(.linkClosed(reason: reason), at: now)
        }
    }
}

extension EngineOutput: LinkSessionOutput {}
