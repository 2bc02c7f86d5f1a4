import StandEngine

/// JSON-RPC 2.0 errors: the standard codes, and dockd's application codes, which mirror DockKit's
/// errors (protocol/API.md lists them). `data` carries what a program needs without parsing the
/// message (the field at fault, the lease holder).
struct RPCError: Error, Sendable, Equatable {
    var code: Int
    var message: String
    var data: JSONValue?

    static func parse(_ detail: String) -> RPCError { RPCError(code: -32700, message: "parse error: \(detail)") }
    static func invalidRequest(_ detail: String) -> RPCError { RPCError(code: -32600, message: "invalid request: \(detail)") }
    static func methodNotFound(_ name: String) -> RPCError { RPCError(code: -32601, message: "method not found: \(name)") }
    static func invalidParams(_ detail: String, field: String? = nil) -> RPCError {
        RPCError(code: -32602, message: "invalid params: \(detail)", data: field.map { ["field": JSONValue($0)] })
    }
    static func `internal`(_ detail: String) -> RPCError { RPCError(code: -32603, message: "internal error: \(detail)") }

    static func notConnected(_ stand: String?) -> RPCError {
        RPCError(code: -32001, message: stand.map { "stand \($0) is not connected" } ?? "no stand is connected",
                 data: stand.map { ["stand": JSONValue($0)] })
    }
    static func invalidParameter(_ detail: String) -> RPCError { RPCError(code: -32003, message: "invalid parameter: \(detail)") }
    static let noSubjectFound = RPCError(code: -32006, message: "no subject found")
    static func permissionDenied(_ detail: String) -> RPCError { RPCError(code: -32007, message: "permission denied: \(detail)") }
    static func lineTooLong(_ bytes: Int, limit: Int) -> RPCError {
        RPCError(code: -32600, message: "invalid request: line of \(bytes) bytes exceeds the \(limit)-byte limit; it was discarded")
    }

    var json: JSONValue {
        var error: [String: JSONValue] = ["code": JSONValue(code), "message": JSONValue(message)]
        if let data { error["data"] = data }
        return .object(error)
    }
}

extension RPCError {
    /// The engine's refusals as the API's DockKit-like codes.
    init(_ error: EngineError) {
        switch error {
        case .notConnected(let stand): self = .notConnected(stand)
        case .notSupported: self = RPCError(code: -32002, message: error.description)
        case .invalidParameter: self = RPCError(code: -32003, message: error.description)
        case .frameRateTooHigh: self = RPCError(code: -32004, message: error.description)
        case .frameRateTooLow: self = RPCError(code: -32005, message: error.description)
        case .noSubjectFound: self = .noSubjectFound
        case .busy(let holder, let stand):
            self = RPCError(code: -32008, message: error.description,
                            data: ["stand": JSONValue(stand), "holder_client": JSONValue(holder.id), "holder_pid": holder.pid.map { JSONValue($0) } ?? .null])
        case .motionFailed: self = RPCError(code: -32009, message: error.description)
        case .stopped(let by, let stand):
            self = RPCError(code: -32009, message: error.description,
                            data: ["stand": JSONValue(stand), "stopped_by_client": by.map { JSONValue($0.id) } ?? .null,
                                   "stopped_by_pid": by?.pid.map { JSONValue($0) } ?? .null])
        }
    }

}
