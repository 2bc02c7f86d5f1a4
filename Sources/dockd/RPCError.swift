/// JSON-RPC 2.0 errors: the standard codes, and dockd's application codes, which mirror DockKit's
/// errors (protocol/API.md lists them).
struct RPCError: Error, Sendable, Equatable {
    var code: Int
    var message: String

    static func parse(_ detail: String) -> RPCError { RPCError(code: -32700, message: "parse error: \(detail)") }
    static func invalidRequest(_ detail: String) -> RPCError { RPCError(code: -32600, message: "invalid request: \(detail)") }
    static func methodNotFound(_ name: String) -> RPCError { RPCError(code: -32601, message: "method not found: \(name)") }
    static func invalidParams(_ detail: String) -> RPCError { RPCError(code: -32602, message: "invalid params: \(detail)") }
    static func `internal`(_ detail: String) -> RPCError { RPCError(code: -32603, message: "internal error: \(detail)") }

    static func notConnected(_ stand: String?) -> RPCError {
        RPCError(code: -32001, message: stand.map { "stand \($0) is not connected" } ?? "no stand is connected")
    }
    static func notSupported(_ detail: String) -> RPCError { RPCError(code: -32002, message: "not supported by device: \(detail)") }
    static func invalidParameter(_ detail: String) -> RPCError { RPCError(code: -32003, message: "invalid parameter: \(detail)") }
    static let frameRateTooHigh = RPCError(code: -32004, message: "frame rate too high")
    static let frameRateTooLow = RPCError(code: -32005, message: "frame rate too low")
    static let noSubjectFound = RPCError(code: -32006, message: "no subject found")
    static func permissionDenied(_ detail: String) -> RPCError { RPCError(code: -32007, message: "permission denied: \(detail)") }
    static func busy(_ detail: String) -> RPCError { RPCError(code: -32008, message: "busy: \(detail)") }
    static func motionFailed(_ detail: String) -> RPCError { RPCError(code: -32009, message: "motion failed: \(detail)") }
    static func lineTooLong(_ bytes: Int, limit: Int) -> RPCError {
        RPCError(code: -32600, message: "invalid request: line of \(bytes) bytes exceeds the \(limit)-byte limit; it was discarded")
    }

    var json: JSONValue { ["code": JSONValue(code), "message": JSONValue(message)] }
}
