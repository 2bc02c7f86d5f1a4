import DockAPI
import DockIO
import DockJSON
import Testing

/// protocol/dockd.openrpc.json is written by hand for people and tools; the methods dockd runs are
/// declared in `APIMethod`. These tests hold the two to one another field by field, so that a method,
/// a param or a flag changed in one and not the other fails here.
struct OpenRPCDocumentTests {
    static let document: JSONValue = {
        let root = "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let bytes = try! WholeFile.read(root + "/protocol/dockd.openrpc.json", atMost: 16 << 20)
        return try! bytes.withUnsafeBytes { (raw) throws(JSONParser.Failure) in try JSONParser.parse(raw) }
    }()

    /// The document's method objects by name.
    static let methods: [String: JSONValue] = {
        var byName: [String: JSONValue] = [:]
        for m in document["methods"]?.array ?? [] { byName[m["name"]?.string ?? ""] = m }
        return byName
    }()

    /// Follows a `$ref` inside the document (`#/components/...`).
    static func resolve(_ value: JSONValue) -> JSONValue {
        guard let ref = value["$ref"]?.string, ref.hasPrefix("#/") else { return value }
        var node = document
        for part in ref.dropFirst(2).split(separator: "/") { node = node[String(part)] ?? .null }
        return node
    }

    @Test func theDocumentHasExactlyTheDeclaredMethods() {
        #expect(Set(Self.methods.keys) == Set(APIMethod.allCases.map(\.name)))
    }

    @Test func eachMethodsParamsAreTheDeclaredOnesInOrderWithTheirRequiredness() {
        for method in APIMethod.allCases {
            let documented = (Self.methods[method.name]?["params"]?.array ?? []).map(Self.resolve)
            let names = documented.map { $0["name"]?.string ?? "?" }
            #expect(names == method.declaration.params.map(\.name), "\(method.name)")
            for (param, doc) in zip(method.declaration.params, documented) {
                #expect((doc["required"]?.bool ?? false) == param.required, "\(method.name) \(param.name): required")
            }
        }
    }

    @Test func eachParamsTypeRangeAndChoicesAreTheDeclaredOnes() {
        for method in APIMethod.allCases {
            let documented = (Self.methods[method.name]?["params"]?.array ?? []).map(Self.resolve)
            for (param, doc) in zip(method.declaration.params, documented) {
                let schema = doc["schema"] ?? .null
                let what = "\(method.name) \(param.name)"
                let shape = Self.shape(schema)
                switch param.kind {
                case .number(let range, _):
                    #expect(shape.types == ["number"], "\(what): \(shape.types)")
                    Self.expectBounds(schema, range, what)
                case .integer(let range):
                    #expect(shape.types == ["integer"], "\(what): \(shape.types)")
                    Self.expectBounds(schema, range, what)
                case .boolean:
                    #expect(shape.types == ["boolean"], "\(what): \(shape.types)")
                case .string:
                    #expect(shape.types == ["string"], "\(what): \(shape.types)")
                case .choice(let choices):
                    #expect(shape.choices == choices, "\(what): \(shape.choices)")
                case .list:
                    #expect(shape.types == ["array"], "\(what): \(shape.types)")
                case .object(let name):
                    if let name { #expect(shape.refs == ["#/components/schemas/\(name)"], "\(what): \(shape.refs)") }
                    else { #expect(shape.types == ["object"], "\(what): \(shape.types)") }
                }
            }
        }
    }

    @Test func eachMethodsResultAndErrorsAreTheDeclaredOnes() {
        for method in APIMethod.allCases {
            let doc = Self.methods[method.name] ?? .null
            #expect(doc["result"]?["name"]?.string == method.declaration.result, "\(method.name)")
            let errors = (doc["errors"]?.array ?? []).map { $0["$ref"]?.string ?? "" }
            #expect(errors.sorted() == method.declaration.errors.map { "#/components/errors/\($0.rawValue)" }.sorted(), "\(method.name)")
        }
    }

    @Test func everyDeclaredErrorHasTheDocumentsCode() {
        let documented = Self.document["components"]?["errors"]?.object ?? [:]
        #expect(Set(documented.keys) == Set(APIError.allCases.map(\.rawValue)))
        for error in APIError.allCases {
            #expect(documented[error.rawValue]?["code"]?.double == Double(error.code), "\(error)")
        }
    }

    /// The lease, motion and administrator flags and the notifications are the document's `x-`
    /// extensions of each method; a notification named is one the document describes.
    @Test func eachMethodsLeaseMotionAdministratorAndNotificationsAreTheDeclaredOnes() {
        let notifications = Set((Self.document["x-notifications"]?.array ?? []).compactMap { $0["name"]?.string })
        for method in APIMethod.allCases {
            let doc = Self.methods[method.name] ?? .null
            let declared = method.declaration
            #expect((doc["x-needs-lease"]?.bool ?? false) == declared.needsLease, "\(method.name): x-needs-lease")
            #expect((doc["x-starts-motion"]?.bool ?? false) == declared.startsMotion, "\(method.name): x-starts-motion")
            #expect((doc["x-for-administrators"]?.bool ?? false) == declared.forAdministrators, "\(method.name): x-for-administrators")
            let named = (doc["x-may-notify"]?.array ?? []).compactMap(\.string)
            #expect(named == declared.notifications, "\(method.name): x-may-notify")
            #expect(Set(named).isSubset(of: notifications), "\(method.name) names a notification the document does not describe")
        }
    }

    /// A schema's JSON types (null left out: every optional param may be null), `$ref`s and string
    /// choices, through `anyOf`/`oneOf`.
    static func shape(_ schema: JSONValue) -> (types: Set<String>, refs: [String], choices: [String]) {
        var types = Set<String>()
        var refs: [String] = []
        var choices: [String] = []
        func walk(_ s: JSONValue) {
            if let t = s["type"]?.string { types.insert(t) }
            for t in s["type"]?.array ?? [] { if let t = t.string { types.insert(t) } }
            if let ref = s["$ref"]?.string { refs.append(ref) }
            for c in s["enum"]?.array ?? [] { if let c = c.string { choices.append(c) } }
            for alternative in (s["anyOf"]?.array ?? []) + (s["oneOf"]?.array ?? []) { walk(alternative) }
        }
        walk(schema)
        types.remove("null")
        return (types, refs, choices)
    }

    /// Where the document bounds a number, the bound is the declared range's.
    static func expectBounds(_ schema: JSONValue, _ range: ClosedRange<Double>, _ what: String) {
        if let low = schema["minimum"]?.double ?? schema["exclusiveMinimum"]?.double {
            #expect(low == range.lowerBound, "\(what): the document's lower bound \(low)")
        }
        if let high = schema["maximum"]?.double ?? schema["exclusiveMaximum"]?.double {
            #expect(high == range.upperBound, "\(what): the document's upper bound \(high)")
        }
    }
}
