/// The tables of a document while it is read. TOML 1.0 decides which table may be defined where by
/// how each came to be: a `[header]` defines its table once; a table only named on the way to
/// another (`a` in `[a.b]`) may get its own header later; dotted keys (`a.b = 1`) define tables that
/// no header may define again and that only dotted keys extend; an inline table or an array value
/// is whole as written. The tables refer to each other by index into one array (values, no
/// references) and become a TOMLTable once the document is read.
struct TOMLTableBuilder {
    private enum Origin { case named, header, dottedKeys, arrayElement, inline }

    private enum Slot {
        case value(TOMLNode)
        case table(Int)
        case arrayOfTables([Int], place: TOMLPlace)
    }

    private struct Table {
        var origin: Origin
        var place: TOMLPlace
        /// Dotted, from the root, for messages.
        var name: String
        var slots: [String: Slot] = [:]
    }

    private var tables = [Table(origin: .header, place: TOMLPlace(line: 1, column: 1), name: "")]
    static let root = 0

    /// The table of `[keys]`.
    mutating func defineTable(_ keys: [TOMLKeyPart], at place: TOMLPlace) throws(TOMLSyntaxError) -> Int {
        let header = "[\(TOMLKey.dotted(keys))]"
        let parent = try tableForHeader(keys.dropLast(), header: header, at: place)
        let key = keys[keys.count - 1]
        switch tables[parent].slots[key.name] {
        case nil:
            let table = newTable(.header, in: parent, key.name, at: place)
            tables[parent].slots[key.name] = .table(table)
            return table
        case .table(let table) where tables[table].origin == .named:
            tables[table].origin = .header
            tables[table].place = place
            return table
        case .table(let table) where tables[table].origin == .header:
            throw TOMLSyntaxError(place: key.place, what: "table \(header) is defined twice (first on line \(tables[table].place.line))")
        case let slot?:
            throw TOMLSyntaxError(place: key.place, what: "\(header) cannot define \(name(parent, key.name)): it is already \(describe(slot))")
        }
    }

    /// A new element of the array of tables `[[keys]]`.
    mutating func appendArrayElement(_ keys: [TOMLKeyPart], at place: TOMLPlace) throws(TOMLSyntaxError) -> Int {
        let header = "[[\(TOMLKey.dotted(keys))]]"
        let parent = try tableForHeader(keys.dropLast(), header: header, at: place)
        let key = keys[keys.count - 1]
        switch tables[parent].slots[key.name] {
        case nil:
            let element = newTable(.arrayElement, in: parent, key.name, at: place)
            tables[parent].slots[key.name] = .arrayOfTables([element], place: place)
            return element
        case .arrayOfTables(var elements, let first):
            // Taken out first, so that appending does not copy the array (n headers: n, not n², steps).
            tables[parent].slots[key.name] = nil
            let element = newTable(.arrayElement, in: parent, key.name, at: place)
            elements.append(element)
            tables[parent].slots[key.name] = .arrayOfTables(elements, place: first)
            return element
        case let slot?:
            throw TOMLSyntaxError(place: key.place, what: "\(header) cannot append to \(name(parent, key.name)): it is already \(describe(slot))")
        }
    }

    /// `keys = value` in `table`; the tables a dotted key names on the way are made, or extended
    /// when dotted keys made them.
    mutating func assign(_ keys: [TOMLKeyPart], _ value: TOMLValue, in start: Int, recordedAt place: TOMLPlace) throws(TOMLSyntaxError) {
        var table = start
        for key in keys.dropLast() {
            switch tables[table].slots[key.name] {
            case nil:
                let next = newTable(.dottedKeys, in: table, key.name, at: place)
                tables[table].slots[key.name] = .table(next)
                table = next
            case .table(let next) where [.named, .dottedKeys].contains(tables[next].origin):
                tables[next].origin = .dottedKeys
                table = next
            case let slot?:
                throw TOMLSyntaxError(place: key.place, what: "the dotted key \(TOMLKey.dotted(keys)) cannot add to \(name(table, key.name)): it is already \(describe(slot))")
            }
        }
        let key = keys[keys.count - 1]
        if let slot = tables[table].slots[key.name] {
            throw TOMLSyntaxError(place: key.place, what: "duplicate key \(name(table, key.name)) (first on line \(line(of: slot)))")
        }
        tables[table].slots[key.name] = .value(TOMLNode(value: value, place: place))
    }

    /// An inline table's own table, to be filled by `assign` and taken whole by `table(_:)`.
    mutating func newInlineTable(named name: String, at place: TOMLPlace) -> Int {
        tables.append(Table(origin: .inline, place: place, name: name))
        return tables.count - 1
    }

    func name(of table: Int) -> String { tables[table].name }

    /// The table at `index` with everything in it, as the document has it.
    func table(_ index: Int) -> TOMLTable {
        var result = TOMLTable()
        for (key, slot) in tables[index].slots {
            switch slot {
            case .value(let node):
                result.entries[key] = node
            case .table(let table):
                result.entries[key] = TOMLNode(value: .table(self.table(table)), place: tables[table].place)
            case .arrayOfTables(let elements, let place):
                let nodes = elements.map { TOMLNode(value: .table(table($0)), place: tables[$0].place) }
                result.entries[key] = TOMLNode(value: .array(nodes), place: place)
            }
        }
        return result
    }

    /// The table a header's keys but the last lead to: made when missing, the latest element of an
    /// array of tables.
    private mutating func tableForHeader(_ keys: ArraySlice<TOMLKeyPart>, header: String, at place: TOMLPlace) throws(TOMLSyntaxError) -> Int {
        var table = Self.root
        for key in keys {
            switch tables[table].slots[key.name] {
            case nil:
                let next = newTable(.named, in: table, key.name, at: place)
                tables[table].slots[key.name] = .table(next)
                table = next
            case .table(let next):
                table = next
            case .arrayOfTables(let elements, _):
                table = elements[elements.count - 1]
            case let slot?:
                throw TOMLSyntaxError(place: key.place, what: "\(header) cannot add to \(name(table, key.name)): it is already \(describe(slot))")
            }
        }
        return table
    }

    private mutating func newTable(_ origin: Origin, in parent: Int, _ key: String, at place: TOMLPlace) -> Int {
        tables.append(Table(origin: origin, place: place, name: name(parent, key)))
        return tables.count - 1
    }

    private func name(_ parent: Int, _ key: String) -> String {
        tables[parent].name.isEmpty ? TOMLKey.written(key) : tables[parent].name + "." + TOMLKey.written(key)
    }

    private func line(of slot: Slot) -> Int {
        switch slot {
        case .value(let node): node.place.line
        case .table(let table): tables[table].place.line
        case .arrayOfTables(_, let place): place.line
        }
    }

    private func describe(_ slot: Slot) -> String {
        let line = line(of: slot)
        switch slot {
        case .value(let node):
            switch node.value {
            case .table: return "an inline table (line \(line)), whole as written"
            case .array: return "an array (line \(line)), not an array of tables"
            default: return "a \(node.value.kind) (line \(line))"
            }
        case .table(let table):
            switch tables[table].origin {
            case .dottedKeys: return "a table defined by dotted keys (line \(line))"
            case .header: return "a table defined by its header (line \(line))"
            default: return "a table (line \(line))"
            }
        case .arrayOfTables: return "an array of tables (line \(line))"
        }
    }
}
