import DockAPI
import DockClient
import DockJSON

/// `--hold`: keep the connection, and with it the lease that holds the change, until Ctrl-C, SIGTERM
/// or SIGHUP (StopSignals), as systemd-inhibit holds its lock while it runs; dockctl then closes the
/// connection in order and exits 0, and dockd reverts the change.
struct Hold {
    /// Before connecting: from here on Ctrl-C ends the hold instead of killing dockctl.
    private let stop = StopSignals()

    /// Returns on a signal; throws (69) if dockd closes the connection, which also ends the change.
    func wait(_ client: APIClient) throws {
        while !stop.arrived() {
            do {
                _ = try client.receive(within: StopSignals.checkInterval)
            } catch let failure as APIClient.Failure {
                throw Fail("\(failure.description) while holding: the change is gone", exitCode: failure.exitCode)
            }
        }
    }
}

/// The commands whose change lasts as long as their connection.
extension Connection {
    /// Calls `method` for the stand (one must be chosen when several are connected), prints `done`
    /// (or the result as JSON) and, with `--hold`, keeps the connection until a signal; without it,
    /// says on stderr that the change ends with dockctl.
    func leased(_ method: APIMethod, _ params: [String: JSONValue], hold: Bool, done: (JSONValue) -> String) throws {
        let holding = hold ? Hold() : nil
        let client = try client()
        let p = try StandChoice.changes.params(self, client, params)
        let result = try client.call(method, p)
        let stand = p["stand"]?.string
        if json {
            var object = result.object ?? ["result": result]
            object["stand"] = stand.map(JSONValue.string) ?? .null
            object["held"] = .bool(hold)
            Output.json(.object(object))
        } else {
            Output.line(done(result) + (stand.map { " (\($0))" } ?? ""))
        }
        guard let holding else {
            note("this reverts now that dockctl exits (its connection held it); --hold keeps it until Ctrl-C")
            return
        }
        note("holding: Ctrl-C or SIGTERM ends it, and dockd reverts the change")
        try holding.wait(client)
    }
}
