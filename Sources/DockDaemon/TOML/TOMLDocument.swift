/// A parsed TOML document: tables of values, each value with the place in the text that wrote it,
/// so that a mistake found later (an unknown key, a value out of range) can name its line.
struct TOMLTable: Sendable, Equatable {
    var entries: [String: TOMLNode] = [:]

    subscript(key: String) -> TOMLNode? { entries[key] }

    /// The keys the table has, in no particular order.
    var keys: Dictionary<String, TOMLNode>.Keys { entries.keys }

    /// Where `path` is written: keys, with an array element's index after its array's key
    /// (["device", "1", "poll_hz"]: `poll_hz` in the second `[[device]]`); nil when the document
    /// has no such value.
    func place(of path: [String]) -> TOMLPlace? {
        guard let first = path.first, var node = entries[first] else { return nil }
        for part in path.dropFirst() {
            switch node.value {
            case .table(let table):
                guard let next = table[part] else { return nil }
                node = next
            case .array(let elements):
                guard let index = Int(part), elements.indices.contains(index) else { return nil }
                node = elements[index]
            default:
                return nil
            }
        }
        return node.place
    }
}

/// A value and where it is written.
struct TOMLNode: Sendable, Equatable {
    var value: TOMLValue
    /// The key that writes it (the first part of a dotted key; for what is inside an inline table or
    /// an array, the key of the outermost value), or the header of the table or array element.
    var place: TOMLPlace
}

struct TOMLPlace: Sendable, Equatable {
    var line: Int
    /// 1-based, in Unicode scalars.
    var column: Int
}

/// The kinds of value dockd.conf can hold: TOML's, without dates and times (no key takes one, and
/// the parser refuses them).
enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case float(Double)
    case boolean(Bool)
    case array([TOMLNode])
    case table(TOMLTable)

    var string: String? { if case .string(let s) = self { s } else { nil } }
    var integer: Int? { if case .integer(let i) = self { i } else { nil } }
    var float: Double? { if case .float(let x) = self { x } else { nil } }
    var boolean: Bool? { if case .boolean(let b) = self { b } else { nil } }
    var array: [TOMLNode]? { if case .array(let a) = self { a } else { nil } }
    var table: TOMLTable? { if case .table(let t) = self { t } else { nil } }

    /// What a message calls the kind ("must be a number, not string").
    var kind: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .float: "floating-point number"
        case .boolean: "bool"
        case .array: "array"
        case .table: "table"
        }
    }
}
