import Foundation

/// libFuzzer target for the API's request parser (Sources/dockd/JSONRPCRequest.swift, with
/// JSONValue and RPCError): any bytes give a request or a JSON-RPC error, never a crash; a request
/// written back as JSON parses to the same request.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    switch JSONRPCRequest.parse(bytes) {
    case .failure(let failure):
        guard (-32700 ... -32600).contains(failure.error.code) else { violation("parser error code \(failure.error.code)") }
    case .success(let request):
        var object: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(request.method), "params": request.params]
        if let id = request.id { object["id"] = id }
        guard let again = try? JSONEncoder().encode(JSONValue.object(object)) else { violation("request does not encode") }
        guard case .success(let reparsed) = JSONRPCRequest.parse(again), reparsed == request else {
            violation("request does not round-trip: \(String(decoding: again, as: UTF8.self))")
        }
    }
    return 0
}

func violation(_ what: String) -> Never {
    FileHandle.standardError.write(Data("JSONRPCFuzz: \(what)\n".utf8))
    abort()
}
