import DockDrivers
import DockIO
import Logging
import NIOCore

/// Every stand the daemon owns, looked up by its stable id (serial number).
actor StandRegistry {
    private var sessions: [StandSession] = []
    private var tasks: [ObjectIdentifier: Task<Void, Never>] = [:]
    private let makeSession: @Sendable (StandEndpoint, any StandDriver) -> StandSession

    init(makeSession: @escaping @Sendable (StandEndpoint, any StandDriver) -> StandSession) {
        self.makeSession = makeSession
    }

    /// Starts owning the stand at `endpoint`; false if it is owned already.
    @discardableResult
    func add(endpoint: StandEndpoint, driver: any StandDriver) -> Bool {
        guard !sessions.contains(where: { $0.endpoint == endpoint }) else { return false }
        let session = makeSession(endpoint, driver)
        sessions.append(session)
        tasks[ObjectIdentifier(session)] = Task { await session.run() }
        return true
    }

    /// Stops the stand at `endpoint` and lets it go (a detach, or the device was unplugged).
    @discardableResult
    func remove(endpoint: StandEndpoint) async -> Bool {
        guard let index = sessions.firstIndex(where: { $0.endpoint == endpoint }) else { return false }
        let session = sessions.remove(at: index)
        await session.shutdown()
        let task = tasks.removeValue(forKey: ObjectIdentifier(session))
        task?.cancel()
        await task?.value
        return true
    }

    var all: [StandSession] { sessions }

    /// The stand named `id`, or when none is named, the only connected one (then the first).
    func find(_ id: String?) async throws(RPCError) -> StandSession {
        if let id {
            for s in sessions where await s.standID == id { return s }
            throw RPCError.notConnected(id)
        }
        for s in sessions where await s.linkState == .connected { return s }
        throw RPCError.notConnected(nil)
    }

    /// Stops every stand's motors, then ends the sessions.
    func shutdown() async {
        for s in sessions { await s.shutdown() }
        for task in tasks.values { task.cancel() }
        for task in tasks.values { await task.value }
    }
}
