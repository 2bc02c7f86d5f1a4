/// Every stand the daemon owns, looked up by its stable id (serial number).
actor StandRegistry {
    private var sessions: [StandSession] = []
    private var tasks: [ObjectIdentifier: Task<Void, Never>] = [:]

    func add(_ session: StandSession) {
        sessions.append(session)
        tasks[ObjectIdentifier(session)] = Task { await session.run() }
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
