/// One parsed JSON-RPC 2.0 request line. Pure (bytes in, a request or an error out), so the fuzzer
/// (Fuzz/JSONRPCFuzz.swift) exercises exactly what the daemon runs.
public struct JSONRPCRequest: Sendable, Equatable {
    /// nil for a notification (no reply is sent, not even an error).
    public var id: RequestID?
    public var method: String
    /// The params, by name (`{}` when omitted; any other JSON type is refused with -32602).
    public var params: [String: JSONValue]

    /// The request, or the error reply's id and error. A line that is a JSON object without an id
    /// is a notification: its failure has `isNotification` set and gets no reply.
    public static func parse(_ line: UnsafeRawBufferPointer) -> Result<JSONRPCRequest, Failure> {
        var parser = JSONParser(line)
        parser.skipWhitespace()
        guard parser.peek == UInt8(ascii: "{") else {
            // Not an object: which error depends on whether it is JSON at all.
            do throws(JSONParser.Failure) {
                _ = try JSONParser.parse(line)
            } catch {
                return .failure(Failure(id: nil, error: error.rpcError))
            }
            return .failure(Failure(id: nil, error: .invalidRequest("a request is a JSON object")))
        }
        var id: RequestID?
        var badID: String?
        var version: JSONValue?
        var method: JSONValue?
        var params: JSONValue?
        // Members seen: the four a request has as bits, any others by name (rare: no Set to hash).
        var seen: UInt8 = 0
        var others: [String] = []
        /// JSON that cannot be a request (a member twice, nesting too deep), found while the rest
        /// is read on to find the id.
        var unusable: JSONParser.Failure?
        do throws(JSONParser.Failure) {
            if !parser.objectStarts() {
                repeat {
                    let member = try parser.memberName(known: Self.members)
                    // A known name written with escapes ("\u0069d") is still that member.
                    let known = member.known ?? member.name.flatMap { Self.memberNames.firstIndex(of: $0) }
                    if let k = known {
                        if seen & (1 << k) != 0 { unusable = unusable ?? .duplicateMember(Self.memberNames[k]) }
                        seen |= 1 << k
                    } else if let name = member.name {
                        if others.contains(name) { unusable = unusable ?? .duplicateMember(name) }
                        others.append(name)
                    }
                    parser.skipWhitespace()
                    let start = parser.index
                    do throws(JSONParser.Failure) {
                        switch known {
                        case Self.idMember:
                            let range = try parser.skipValue(depth: 1)
                            let text = UnsafeRawBufferPointer(rebasing: line[range])
                            switch text.first ?? 0 {
                            case UInt8(ascii: "\""), UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "n"):
                                id = RequestID(text: String(decoding: text, as: UTF8.self))
                            case UInt8(ascii: "["): badID = "an array"
                            case UInt8(ascii: "{"): badID = "an object"
                            default: badID = "a boolean"
                            }
                        case 0: version = try parser.value(depth: 1)
                        case 2: method = try parser.value(depth: 1)
                        case 3: params = try parser.value(depth: 1)
                        default: _ = try parser.skipValue(depth: 1)
                        }
                    } catch .syntax(let what, let at) {
                        throw .syntax(what, at: at)
                    } catch {
                        unusable = unusable ?? error
                        parser.index = start
                        try parser.skipIteratively()
                    }
                } while try !parser.objectEnds()
            }
            try parser.end()
        } catch {
            return .failure(Failure(id: nil, error: error.rpcError))
        }
        // JSON-RPC 2.0 §4: an id is a string, a number or null; an unusable one is answered with a null id.
        if let badID { return .failure(Failure(id: nil, error: .invalidRequest("the id must be a string, a number or null, not \(badID)", field: "id"))) }
        let notification = seen & (1 << Self.idMember) == 0
        let replyID = id ?? .null
        if let unusable { return .failure(Failure(id: replyID, error: unusable.rpcError, isNotification: notification)) }
        guard version == .string("2.0") else {
            return .failure(Failure(id: replyID, error: .invalidRequest("\"jsonrpc\" must be \"2.0\"", field: "jsonrpc"), isNotification: notification))
        }
        guard case .string(let name) = method else {
            return .failure(Failure(id: replyID, error: .invalidRequest("\"method\" must be a string", field: "method"), isNotification: notification))
        }
        let fields: [String: JSONValue]
        switch params {
        case nil: fields = [:]
        case .object(let o): fields = o
        case let other?:
            return .failure(Failure(id: replyID, error: .invalidParams("params must be an object (by name), not \(other.typeName)", field: "params"),
                                    isNotification: notification))
        }
        return .success(JSONRPCRequest(id: id, method: name, params: fields))
    }

    /// The members a request has, by the bit `seen` keeps for each.
    private static let members: [StaticString] = ["jsonrpc", "id", "method", "params"]
    private static let memberNames = ["jsonrpc", "id", "method", "params"]
    private static let idMember = 1

    public struct Failure: Error, Sendable, Equatable {
        /// The id to answer with (nil: the request's id could not be read; the reply's id is null).
        public var id: RequestID?
        public var error: RPCError
        /// A request object without an id is a notification: JSON-RPC 2.0 answers it never, not even with an error.
        public var isNotification = false
    }
}

/// A request's id exactly as the client wrote it (a string, a number or null), so that it is echoed
/// unchanged: 9007199254740993 and 18446744073709551616 come back as written, not rounded to a double.
public struct RequestID: Sendable, Hashable {
    /// The id's JSON text, already checked by the parser.
    public let text: String
    public static let null = RequestID(text: "null")
}

extension JSONParser.Failure {
    /// Not JSON is a parse error (-32700); JSON that cannot be a request is an invalid request (-32600).
    public var rpcError: RPCError {
        switch self {
        case .syntax(let what, let at): .parse("the line is not JSON: \(what) at byte \(at)")
        case .duplicateMember(let name): .invalidRequest("the member \"\(name)\" is given twice in one object")
        case .tooDeep: .invalidRequest("the request nests deeper than \(JSONParser.maxDepth) levels")
        }
    }
}
