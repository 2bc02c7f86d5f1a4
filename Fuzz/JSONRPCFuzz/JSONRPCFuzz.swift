@testable import DockJSON
#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer target for the API's request parser and JSON writer (Sources/DockJSON/JSONRPCRequest.swift,
/// JSONParser.swift, JSONWriter.swift, JSONValue.swift, RPCError.swift): any bytes give a request or a
/// JSON-RPC error, never a crash; a request written back as JSON parses to the same request; the id
/// is kept as the text the client wrote and is itself one JSON value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    switch JSONRPCRequest.parse(bytes) {
    case .failure(let failure):
        guard [-32700, -32600, -32602].contains(failure.error.code) else { violation("parser error code \(failure.error.code)") }
    case .success(let request):
        var line = JSONBytes()
        line.jsonText("{\"jsonrpc\":\"2.0\",\"method\":")
        line.writeJSONString(request.method)
        line.jsonText(",\"params\":")
        line.writeJSON(.object(request.params))
        if let id = request.id {
            line.jsonText(",\"id\":")
            line.jsonText(id.text)
            let idAlone = Array(id.text.utf8)
            let reread = idAlone.withUnsafeBytes { text in Result { () throws(JSONParser.Failure) in try JSONParser.parse(text) } }
            guard case .success(let value) = reread, value.string != nil || value.double != nil || value == .null else {
                violation("the id \(id.text) is not one JSON string, number or null")
            }
        }
        line.jsonText("}")
        guard case .success(let reparsed) = line.bytes.withUnsafeBytes({ JSONRPCRequest.parse($0) }) else {
            violation("the request written back does not parse: \(String(decoding: line.bytes, as: UTF8.self))")
        }
        // A number beyond a double's range reads as infinity, which JSON can only write as null.
        guard reparsed.method == request.method, reparsed.id == request.id,
              JSONValue.object(reparsed.params) == finite(.object(request.params)) else {
            violation("request does not round-trip: \(String(decoding: line.bytes, as: UTF8.self))")
        }
    }
    return 0
}

private func finite(_ value: JSONValue) -> JSONValue {
    switch value {
    case .number(let n): n.isFinite ? value : .null
    case .float(let f): f.isFinite ? value : .null
    case .array(let a): .array(a.map(finite))
    case .object(let o): .object(o.mapValues(finite))
    default: value
    }
}

func violation(_ what: String) -> Never {
    let line = Array("JSONRPCFuzz: \(what)\n".utf8)
    line.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    abort()
}
