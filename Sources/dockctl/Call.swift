import ArgumentParser
import DockAPI
import DockClient
import DockJSON

/// `dockctl call METHOD NAME=VALUE…`: any method of the API, its params read as the method declares
/// them (DockAPI), so a method dockd gains is callable here with no code of dockctl's own.
struct Call: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Call any API method with NAME=VALUE params, typed as the method declares them; prints the result as JSON.",
        discussion: """
            Numbers and true/false are taken as such, lists and objects as JSON (ids='["a"]'), \
            anything else as a string. --stand names the stand of a method that takes one. \
            Methods: \(APIMethod.allCases.map(\.name).joined(separator: ", ")).
            """)
    @OptionGroup var connection: Connection
    @Argument(help: "The method, e.g. motion.orient.") var method: String
    @Argument(help: "Params, NAME=VALUE (yaw=0.3 relative=true).") var params: [String] = []

    func validate() throws {
        _ = try request()
    }

    func run() throws {
        try dockctl.run {
            let (method, params) = try request()
            var p = params
            if let stand = connection.stand, method.declaration.param("stand") != nil { p["stand"] = .string(stand) }
            let client = try connection.client()
            Output.json(try client.call(method, p))
        }
    }

    /// The method and its params, each checked to be declared and of its kind.
    func request() throws -> (APIMethod, [String: JSONValue]) {
        guard let method = APIMethod.named(method) else {
            throw ValidationError("no method \(self.method); methods are \(APIMethod.allCases.map(\.name).joined(separator: ", "))")
        }
        let declared = method.declaration
        var values: [String: JSONValue] = [:]
        for text in params {
            guard let equals = text.firstIndex(of: "=") else { throw ValidationError("\(text): give NAME=VALUE") }
            let name = String(text[..<equals]), value = String(text[text.index(after: equals)...])
            guard let param = declared.param(name) else {
                let names = declared.params.map(\.name)
                throw ValidationError("\(method.name) takes no \(name); it takes \(names.isEmpty ? "no params" : names.joined(separator: ", "))")
            }
            values[name] = try Self.value(value, as: param)
        }
        return (method, values)
    }

    static func value(_ text: String, as param: APIParam) throws -> JSONValue {
        switch param.kind {
        case .number, .integer:
            guard let n = Double(text) else { throw ValidationError("\(param.name) is a number, not \(text)") }
            return JSONValue(n)
        case .boolean:
            guard let b = Bool(text) else { throw ValidationError("\(param.name) is true or false, not \(text)") }
            return .bool(b)
        case .string, .choice:
            return .string(text)
        case .list, .object:
            let parsed = Array(text.utf8).withUnsafeBytes { raw in
                Result { () throws(JSONParser.Failure) in try JSONParser.parse(raw) }
            }
            guard case .success(let value) = parsed else { throw ValidationError("\(param.name) is JSON, e.g. \(param.kind == .list ? "[…]" : "{…}")") }
            return value
        }
    }
}
