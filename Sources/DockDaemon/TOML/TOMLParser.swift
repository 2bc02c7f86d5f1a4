/// A strict TOML 1.0 parser for dockd.conf, without Foundation. Hand-written because the package
/// mirror has no TOML parser that does without Foundation (TOMLKit, the one it has, wraps the C++
/// toml++ and links Foundation and its ICU data into dockd: issue 26). It reads all of TOML but
/// dates and times, which no key of dockd.conf takes and which it refuses by name; anything else it
/// does not take is refused with its line and column, never guessed at.
///
/// Bounded: arrays and inline tables nest at most `maxNesting` deep and a key has at most
/// `maxKeyParts` parts, so no text can exhaust the stack; time and memory are linear in the text.
struct TOMLParser {
    static let maxNesting = 32
    static let maxKeyParts = 32

    var cursor: TOMLCursor
    private var tables = TOMLTableBuilder()
    /// Where the value being read is recorded: the key of the expression it is in.
    private var recordedPlace = TOMLPlace(line: 1, column: 1)
    /// The dotted name of the value being read, for messages about what an inline table holds.
    private var valueName = ""
    private var nesting = 0

    static func parse(_ text: String) throws(TOMLSyntaxError) -> TOMLTable {
        if let problem = controlCharacter(in: text) { throw problem }
        var parser = TOMLParser(cursor: TOMLCursor(text))
        try parser.document()
        return parser.tables.table(TOMLTableBuilder.root)
    }

    /// TOML allows no control character but tab and line ends (LF, CR LF), not even in comments and
    /// strings: checked first, so the parser never meets one.
    static func controlCharacter(in text: String) -> TOMLSyntaxError? {
        var line = 1, column = 0
        var previous: Unicode.Scalar?
        func found(_ scalar: Unicode.Scalar) -> TOMLSyntaxError {
            let code = String(scalar.value, radix: 16, uppercase: true)
            return TOMLSyntaxError(place: TOMLPlace(line: line, column: column),
                                   what: "control character U+\(String(repeating: "0", count: 4 - code.count) + code) is not allowed in TOML")
        }
        for scalar in text.unicodeScalars {
            if previous == "\r" && scalar != "\n" { return found("\r") }
            previous = scalar
            if scalar == "\n" { line += 1; column = 0; continue }
            column += 1
            if (scalar.value < 0x20 || scalar.value == 0x7F) && scalar != "\t" && scalar != "\r" { return found(scalar) }
        }
        return previous == "\r" ? found("\r") : nil
    }

    /// Expressions, one a line: a key/value, a `[table]` or `[[array]]` header, or nothing; each may
    /// end in a comment.
    private mutating func document() throws(TOMLSyntaxError) {
        var table = TOMLTableBuilder.root
        while true {
            cursor.skipBlanks()
            guard let c = cursor.current else { return }
            if c == "[" {
                table = try header()
                try lineEnd(after: "the table header")
            } else if TOMLKey.isBare(c) || c == "\"" || c == "'" {
                try keyValue(in: table)
                try lineEnd(after: "the value")
            } else if c == "#" || cursor.atNewline {
                try lineEnd(after: "")
            } else {
                throw cursor.error("expected a key, a [table] header or a comment, saw \(cursor.seen)")
            }
        }
    }

    private mutating func lineEnd(after what: String) throws(TOMLSyntaxError) {
        cursor.skipBlanks()
        if cursor.current == "#" { cursor.skipComment() }
        if cursor.current == nil { return }
        guard cursor.atNewline else {
            throw cursor.error("expected the end of the line after \(what), saw \(cursor.seen)")
        }
        cursor.skipNewline()
    }

    /// `[a.b]` or `[[a.b]]`: the table that the key/values below it go into.
    private mutating func header() throws(TOMLSyntaxError) -> Int {
        let place = cursor.place
        cursor.advance()
        let isArray = cursor.current == "["
        if isArray { cursor.advance() }
        cursor.skipBlanks()
        guard let c = cursor.current, TOMLKey.isBare(c) || c == "\"" || c == "'" else {
            throw cursor.error("a table header must start with a key")
        }
        let keys = try key()
        guard cursor.current == "]" else {
            throw cursor.error("expected \(isArray ? "']]'" : "']'") to end the table header, saw \(cursor.seen)")
        }
        cursor.advance()
        if isArray {
            guard cursor.current == "]" else { throw cursor.error("expected ']]' to end the table header, saw \(cursor.seen)") }
            cursor.advance()
            return try tables.appendArrayElement(keys, at: place)
        }
        return try tables.defineTable(keys, at: place)
    }

    /// A key, dotted or not, and the blanks after it.
    private mutating func key() throws(TOMLSyntaxError) -> [TOMLKeyPart] {
        var parts: [TOMLKeyPart] = []
        while true {
            cursor.skipBlanks()
            let place = cursor.place
            switch cursor.current {
            case "\""?:
                if cursor.peek(1) == "\"" && cursor.peek(2) == "\"" { throw cursor.error("a key cannot be a multi-line string") }
                parts.append(TOMLKeyPart(name: try basicString(), place: place))
            case "'"?:
                if cursor.peek(1) == "'" && cursor.peek(2) == "'" { throw cursor.error("a key cannot be a multi-line string") }
                parts.append(TOMLKeyPart(name: try literalString(), place: place))
            case let c? where TOMLKey.isBare(c):
                var name = ""
                while let c = cursor.current, TOMLKey.isBare(c) { name.unicodeScalars.append(c); cursor.advance() }
                parts.append(TOMLKeyPart(name: name, place: place))
            default:
                throw cursor.error("expected a key after '.', saw \(cursor.seen)")
            }
            guard parts.count <= Self.maxKeyParts else { throw TOMLSyntaxError(place: place, what: "a key of more than \(Self.maxKeyParts) parts") }
            cursor.skipBlanks()
            guard cursor.current == "." else { return parts }
            cursor.advance()
        }
    }

    /// `key = value` into `table`.
    private mutating func keyValue(in table: Int) throws(TOMLSyntaxError) {
        recordedPlace = cursor.place
        let keys = try key()
        guard cursor.current == "=" else { throw cursor.error("expected '=' after the key \(TOMLKey.dotted(keys)), saw \(cursor.seen)") }
        cursor.advance()
        cursor.skipBlanks()
        valueName = Self.joined(tables.name(of: table), TOMLKey.dotted(keys))
        let value = try value(expected: "after '='")
        try tables.assign(keys, value, in: table, recordedAt: recordedPlace)
    }

    private static func joined(_ parent: String, _ key: String) -> String { parent.isEmpty ? key : parent + "." + key }

    /// A value; `expected` says where it was expected when there is none ("after '='").
    private mutating func value(expected: String) throws(TOMLSyntaxError) -> TOMLValue {
        switch cursor.current {
        case "\""?:
            return .string(cursor.peek(1) == "\"" && cursor.peek(2) == "\"" ? try multiLineBasicString() : try basicString())
        case "'"?:
            return .string(cursor.peek(1) == "'" && cursor.peek(2) == "'" ? try multiLineLiteralString() : try literalString())
        case "["?:
            return try nested { (parser) throws(TOMLSyntaxError) in try parser.array() }
        case "{"?:
            return try nested { (parser) throws(TOMLSyntaxError) in try parser.inlineTable() }
        case let c? where Self.isWordScalar(c):
            return try word()
        default:
            throw cursor.error("expected a value \(expected), saw \(cursor.seen)")
        }
    }

    private mutating func nested(_ read: (inout TOMLParser) throws(TOMLSyntaxError) -> TOMLValue) throws(TOMLSyntaxError) -> TOMLValue {
        guard nesting < Self.maxNesting else { throw cursor.error("arrays and inline tables nested more than \(Self.maxNesting) deep") }
        nesting += 1
        defer { nesting -= 1 }
        return try read(&self)
    }

    /// `[a, b, …]`: any values, over several lines, with comments and a trailing comma.
    private mutating func array() throws(TOMLSyntaxError) -> TOMLValue {
        let opened = cursor.place
        cursor.advance()
        var elements: [TOMLNode] = []
        while true {
            cursor.skipBlanksNewlinesAndComments()
            if cursor.current == "]" { cursor.advance(); return .array(elements) }
            if cursor.current == nil { throw cursor.error("the array opened on line \(opened.line) is not closed") }
            elements.append(TOMLNode(value: try value(expected: "in the array"), place: recordedPlace))
            cursor.skipBlanksNewlinesAndComments()
            if cursor.current == "," { cursor.advance(); continue }
            if cursor.current == "]" { cursor.advance(); return .array(elements) }
            if cursor.current == nil { throw cursor.error("the array opened on line \(opened.line) is not closed") }
            throw cursor.error("expected ',' or ']' after an element of the array, saw \(cursor.seen)")
        }
    }

    /// `{ a = 1, b.c = 2 }`: on one line, no trailing comma (TOML 1.0).
    private mutating func inlineTable() throws(TOMLSyntaxError) -> TOMLValue {
        let name = valueName
        defer { valueName = name }
        let table = tables.newInlineTable(named: name, at: recordedPlace)
        cursor.advance()
        cursor.skipBlanks()
        if cursor.current == "}" { cursor.advance(); return .table(tables.table(table)) }
        while true {
            cursor.skipBlanks()
            guard let c = cursor.current, TOMLKey.isBare(c) || c == "\"" || c == "'" else {
                throw cursor.error("expected a key in the inline table, saw \(cursor.seen)\(cursor.atNewline ? " (an inline table is written on one line)" : "")")
            }
            let keys = try key()
            guard cursor.current == "=" else { throw cursor.error("expected '=' after the key \(TOMLKey.dotted(keys)), saw \(cursor.seen)") }
            cursor.advance()
            cursor.skipBlanks()
            valueName = Self.joined(name, TOMLKey.dotted(keys))
            let value = try value(expected: "after '='")
            try tables.assign(keys, value, in: table, recordedAt: recordedPlace)
            cursor.skipBlanks()
            if cursor.current == "}" { cursor.advance(); return .table(tables.table(table)) }
            guard cursor.current == "," else {
                throw cursor.error("expected ',' or '}' in the inline table, saw \(cursor.seen)\(cursor.atNewline ? " (an inline table is written on one line)" : "")")
            }
            cursor.advance()
            cursor.skipBlanks()
            if cursor.current == "}" { throw cursor.error("an inline table takes no comma after its last value") }
        }
    }
}
