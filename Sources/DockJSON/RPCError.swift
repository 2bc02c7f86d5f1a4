/// JSON-RPC 2.0 errors: the standard codes, and dockd's application codes, which mirror DockKit's
/// errors (protocol/API.md lists them). `data` carries what a program needs without parsing the
/// message: the field at fault, the stand, the lease holder, who stopped the stand (the OpenRPC
/// document's Error schema lists every member).
public struct RPCError: Error, Sendable, Equatable {
    public var code: Int
    public var message: String
    public var data: [String: JSONValue]?

    public init(code: Int, message: String, data: [String: JSONValue]? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public static func parse(_ detail: String) -> RPCError { RPCError(code: -32700, message: "parse error: \(detail)") }
    public static func invalidRequest(_ detail: String, field: String? = nil) -> RPCError {
        RPCError(code: -32600, message: "invalid request: \(detail)", data: field.map { ["field": JSONValue($0)] })
    }
    public static func methodNotFound(_ name: String) -> RPCError {
        RPCError(code: -32601, message: "method not found: \(name)", data: ["method": JSONValue(name)])
    }
    public static func invalidParams(_ detail: String, field: String? = nil) -> RPCError {
        RPCError(code: -32602, message: "invalid params: \(detail)", data: field.map { ["field": JSONValue($0)] })
    }
    public static func `internal`(_ detail: String) -> RPCError { RPCError(code: -32603, message: "internal error: \(detail)") }

    public static func notConnected(_ stand: String?) -> RPCError {
        RPCError(code: -32001, message: stand.map { "stand \($0) is not connected" } ?? "no stand is connected",
                 data: stand.map { ["stand": JSONValue($0)] })
    }
    public static func invalidParameter(_ detail: String, field: String? = nil) -> RPCError {
        RPCError(code: -32003, message: "invalid parameter: \(detail)", data: field.map { ["field": JSONValue($0)] })
    }
    public static let noSubjectFound = RPCError(code: -32006, message: "no subject found")
    public static func permissionDenied(_ detail: String, uid: UInt32?) -> RPCError {
        RPCError(code: -32007, message: "permission denied: \(detail)", data: uid.map { ["uid": JSONValue($0)] })
    }
    public static func lineTooLong(_ bytes: Int, limit: Int) -> RPCError {
        RPCError(code: -32600, message: "invalid request: line of \(bytes) bytes exceeds the \(limit)-byte limit; it was discarded",
                 data: ["bytes": JSONValue(bytes), "limit": JSONValue(limit)])
    }
    public static func tooManyClients(_ limit: Int) -> RPCError {
        RPCError(code: -32010, message: "too many clients: dockd serves at most \(limit) connections at once; try again later",
                 data: ["limit": JSONValue(limit)])
    }

    public var json: JSONValue {
        var error: [String: JSONValue] = ["code": JSONValue(code), "message": JSONValue(message)]
        if let data { error["data"] = .object(data) }
        return .object(error)
    }
}
