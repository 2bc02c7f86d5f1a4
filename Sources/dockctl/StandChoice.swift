import DockAPI
import DockClient
import DockJSON

/// Which stand a command acts on when `--stand` is not given. dockd would take the first connected
/// one; with several connected that is a guess, so dockctl decides and says so: a command that
/// changes a stand refuses to guess, one that only reads takes the first and names it on stderr.
enum StandChoice {
    case changes, reads

    /// The stand's id to pass to dockd, or nil when none is connected (dockd then answers -32001).
    func resolve(_ connection: Connection, _ client: APIClient) throws -> String? {
        if let stand = connection.stand { return stand }
        let connected = try StandList.connectedIDs(client)
        guard connected.count > 1 else { return connected.first }
        let names = connected.joined(separator: ", ")
        switch self {
        case .changes:
            throw Fail("\(connected.count) stands are connected (\(names)): name one with --stand", exitCode: ExitStatus.usage)
        case .reads:
            note("\(connected.count) stands are connected (\(names)): showing \(connected[0]) (--stand chooses)")
            return connected[0]
        }
    }

    /// `params` with the stand named, when there is one.
    func params(_ connection: Connection, _ client: APIClient, _ params: [String: JSONValue] = [:]) throws -> [String: JSONValue] {
        var p = params
        if let stand = try resolve(connection, client) { p["stand"] = .string(stand) }
        return p
    }
}

extension Connection {
    /// One call about one stand, on a connection of its own; the stand chosen as `choice` says.
    func call(_ method: APIMethod, _ params: [String: JSONValue] = [:], choice: StandChoice) throws -> (result: JSONValue, stand: String?) {
        let client = try client()
        let p = try choice.params(self, client, params)
        return (try client.call(method, p), p["stand"]?.string)
    }
}
