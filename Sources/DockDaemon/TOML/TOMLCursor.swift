/// A mistake in a TOML text, at the place the parser found it.
struct TOMLSyntaxError: Error, Equatable {
    var place: TOMLPlace
    var what: String
}

/// The parser's position in the text's Unicode scalars, with its line and column.
struct TOMLCursor {
    let scalars: [Unicode.Scalar]
    private(set) var index = 0
    private(set) var line = 1
    private var lineStart = 0

    init(_ text: String) { scalars = Array(text.unicodeScalars) }

    var place: TOMLPlace { TOMLPlace(line: line, column: index - lineStart + 1) }
    var current: Unicode.Scalar? { peek(0) }

    func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    mutating func advance(_ count: Int = 1) {
        for _ in 0..<count where index < scalars.count {
            if scalars[index] == "\n" { line += 1; lineStart = index + 1 }
            index += 1
        }
    }

    /// At a line end: LF, or CR LF (a CR alone never gets this far: see TOMLParser.controlCharacter).
    var atNewline: Bool { current == "\n" || (current == "\r" && peek(1) == "\n") }

    mutating func skipNewline() { advance(current == "\r" ? 2 : 1) }

    mutating func skipBlanks() {
        while current == " " || current == "\t" { advance() }
    }

    /// Blanks, line ends and comments: what may come between an array's elements.
    mutating func skipBlanksNewlinesAndComments() {
        while true {
            skipBlanks()
            if current == "#" { skipComment() } else if atNewline { skipNewline() } else { return }
        }
    }

    mutating func skipComment() {
        while current != nil && !atNewline { advance() }
    }

    func error(_ what: String) -> TOMLSyntaxError { TOMLSyntaxError(place: place, what: what) }

    /// What the cursor is at, as a message quotes it: `'}'`, "the end of the line", "the end of the file".
    var seen: String {
        guard let c = current else { return "the end of the file" }
        if atNewline { return "the end of the line" }
        if c == " " { return "a space" }
        if c == "\t" { return "a tab" }
        return "'\(c)'"
    }
}
