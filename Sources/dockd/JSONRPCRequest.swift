import Foundation

/// One parsed JSON-RPC 2.0 request line. Pure (bytes in, a request or an error out), so the fuzzer
/// (Fuzz/JSONRPCFuzz.swift) exercises exactly what the daemon runs.
struct JSONRPCRequest: Sendable, Equatable {
    /// nil for a notification (no reply is sent).
    var id: JSONValue?
    var method: String
    var params: JSONValue

    /// The request, or the error reply's id and error.
    static func parse<Bytes: Sequence>(_ line: Bytes) -> Result<JSONRPCRequest, Failure> where Bytes.Element == UInt8 {
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(line))
        } catch {
            return .failure(Failure(id: .null, error: .parse("the line is not JSON")))
        }
        guard case .object(let fields) = value else {
            return .failure(Failure(id: .null, error: .invalidRequest("a request is a JSON object")))
        }
        let id = fields["id"]
        let replyID = id ?? .null
        let notification = id == nil
        guard fields["jsonrpc"] == "2.0" else { return .failure(Failure(id: replyID, error: .invalidRequest("\"jsonrpc\" must be \"2.0\""), isNotification: notification)) }
        guard let method = fields["method"]?.string else { return .failure(Failure(id: replyID, error: .invalidRequest("\"method\" must be a string"), isNotification: notification)) }
        let params = fields["params"] ?? .object([:])
        guard params.object != nil else { return .failure(Failure(id: replyID, error: .invalidParams("params must be an object"), isNotification: notification)) }
        return .success(JSONRPCRequest(id: id, method: method, params: params))
    }

    struct Failure: Error, Sendable, Equatable {
        var id: JSONValue
        var error: RPCError
        /// A request object without an id is a notification: JSON-RPC 2.0 answers it never, not even with an error.
        var isNotification = false
    }
}
