/// TOML's strings (basic and literal, one line or several, with their escapes), numbers (integers
/// in four bases, floats, inf and nan) and booleans. Dates and times are refused by name.
extension TOMLParser {
    // MARK: strings

    /// `"…"` with escapes, on one line.
    mutating func basicString() throws(TOMLSyntaxError) -> String {
        let opened = cursor.place
        cursor.advance()
        var text = ""
        while true {
            guard let c = cursor.current, !cursor.atNewline else {
                throw TOMLSyntaxError(place: opened, what: "the string is not closed on its line (a \" is missing)")
            }
            if c == "\"" { cursor.advance(); return text }
            if c == "\\" { text.unicodeScalars.append(try escape()); continue }
            text.unicodeScalars.append(c)
            cursor.advance()
        }
    }

    /// `'…'` as written, on one line.
    mutating func literalString() throws(TOMLSyntaxError) -> String {
        let opened = cursor.place
        cursor.advance()
        var text = ""
        while true {
            guard let c = cursor.current, !cursor.atNewline else {
                throw TOMLSyntaxError(place: opened, what: "the string is not closed on its line (a ' is missing)")
            }
            if c == "'" { cursor.advance(); return text }
            text.unicodeScalars.append(c)
            cursor.advance()
        }
    }

    /// `"""…"""`: escapes, line ends kept (but one right after the opening quotes), a backslash at
    /// the end of a line joins it to the next line's first non-blank.
    mutating func multiLineBasicString() throws(TOMLSyntaxError) -> String {
        try multiLineString(quote: "\"") { (parser, text) throws(TOMLSyntaxError) in
            var k = 1
            while parser.cursor.peek(k) == " " || parser.cursor.peek(k) == "\t" { k += 1 }
            if parser.cursor.peek(k) == "\n" || (parser.cursor.peek(k) == "\r" && parser.cursor.peek(k + 1) == "\n") {
                parser.cursor.advance(k)
                while parser.cursor.current == " " || parser.cursor.current == "\t" || parser.cursor.atNewline { parser.cursor.advance() }
            } else {
                text.unicodeScalars.append(try parser.escape())
            }
        }
    }

    /// `'''…'''` as written (but a line end right after the opening quotes).
    mutating func multiLineLiteralString() throws(TOMLSyntaxError) -> String {
        try multiLineString(quote: "'", backslash: nil)
    }

    private mutating func multiLineString(quote: Unicode.Scalar,
                                          backslash: ((inout TOMLParser, inout String) throws(TOMLSyntaxError) -> Void)?) throws(TOMLSyntaxError) -> String {
        let opened = cursor.place
        cursor.advance(3)
        if cursor.atNewline { cursor.skipNewline() }
        var text = ""
        while true {
            guard let c = cursor.current else {
                throw TOMLSyntaxError(place: opened, what: "the multi-line string is not closed (\(String(repeating: String(quote), count: 3)) is missing)")
            }
            if c == quote {
                var run = 1
                while cursor.peek(run) == quote { run += 1 }
                // Up to two quotes may end the text right before the closing three.
                let kept = run >= 3 ? min(run - 3, 2) : run
                text += String(repeating: String(quote), count: kept)
                cursor.advance(run >= 3 ? kept + 3 : run)
                if run >= 3 { return text }
                continue
            }
            if c == "\\", let backslash {
                try backslash(&self, &text)
                continue
            }
            text.unicodeScalars.append(c)
            cursor.advance()
        }
    }

    /// The scalar a backslash escape stands for: \b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX.
    private mutating func escape() throws(TOMLSyntaxError) -> Unicode.Scalar {
        let place = cursor.place
        cursor.advance()
        let simple: [Unicode.Scalar: Unicode.Scalar] = ["b": "\u{8}", "t": "\t", "n": "\n", "f": "\u{C}", "r": "\r", "\"": "\"", "\\": "\\"]
        guard let c = cursor.current, !cursor.atNewline else {
            throw TOMLSyntaxError(place: place, what: "a backslash must escape something (\\\\ is a backslash)")
        }
        if let scalar = simple[c] { cursor.advance(); return scalar }
        guard c == "u" || c == "U" else {
            throw TOMLSyntaxError(place: place, what: "invalid escape \\\(c) (TOML's are \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX)")
        }
        let digits = c == "u" ? 4 : 8
        cursor.advance()
        var hex = ""
        for _ in 0..<digits {
            guard let d = cursor.current, d.properties.isASCIIHexDigit else {
                throw TOMLSyntaxError(place: place, what: "\\\(c) takes \(digits) hexadecimal digits")
            }
            hex.unicodeScalars.append(d)
            cursor.advance()
        }
        guard let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else {
            throw TOMLSyntaxError(place: place, what: "\\\(c)\(hex) is not a Unicode scalar value")
        }
        return scalar
    }

    // MARK: booleans, numbers (and dates, refused)

    /// What a bare value is made of: booleans, numbers, and (refused) dates and times.
    static func isWordScalar(_ c: Unicode.Scalar) -> Bool {
        TOMLKey.isBare(c) || c == "+" || c == "." || c == ":"
    }

    mutating func word() throws(TOMLSyntaxError) -> TOMLValue {
        let place = cursor.place
        var scalars: [Unicode.Scalar] = []
        while let c = cursor.current, Self.isWordScalar(c) { scalars.append(c); cursor.advance() }
        let text = String(String.UnicodeScalarView(scalars))
        if text == "true" { return .boolean(true) }
        if text == "false" { return .boolean(false) }
        func isDigit(_ k: Int) -> Bool { k < scalars.count && ("0"..."9").contains(scalars[k]) }
        if (isDigit(0) && isDigit(1) && isDigit(2) && isDigit(3) && scalars.count > 4 && scalars[4] == "-")
            || (isDigit(0) && isDigit(1) && scalars.count > 2 && scalars[2] == ":") {
            throw TOMLSyntaxError(place: place, what: "dates and times are not supported (no key of dockd.conf takes one): \(text)")
        }
        switch Self.number(scalars[...]) {
        case .success(let value): return value
        case .failure(let problem): throw TOMLSyntaxError(place: place, what: problem.what)
        }
    }

    struct NumberProblem: Error { var what: String }

    /// TOML's integers (decimal with an optional sign; 0x, 0o, 0b without) and floats (a fraction,
    /// an exponent or both; inf and nan), each with underscores only between digits.
    static func number(_ s: ArraySlice<Unicode.Scalar>) -> Result<TOMLValue, NumberProblem> {
        let text = String(String.UnicodeScalarView(s))
        let notANumber = NumberProblem(what: s.first.map { ("0"..."9").contains($0) || $0 == "+" || $0 == "-" || $0 == "." } == true
                                       ? "'\(text)' is not a TOML number"
                                       : "'\(text)' is not a TOML value (a string is written in quotes)")
        var rest = s
        var sign = ""
        if let first = rest.first, first == "+" || first == "-" { sign = first == "-" ? "-" : ""; rest = rest.dropFirst() }
        let body = String(String.UnicodeScalarView(rest))
        if body == "inf" { return .success(.float(sign == "-" ? -.infinity : .infinity)) }
        if body == "nan" { return .success(.float(.nan)) }

        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where body.hasPrefix(prefix) {
            guard s.count == rest.count else { return .failure(NumberProblem(what: "'\(text)': a \(prefix) integer takes no sign")) }
            guard let digits = digits(rest.dropFirst(2), radix: radix) else { return .failure(notANumber) }
            guard let value = Int(digits, radix: radix) else { return .failure(NumberProblem(what: "'\(text)' is out of the range of a 64-bit integer")) }
            return .success(.integer(value))
        }

        func run(_ from: ArraySlice<Unicode.Scalar>) -> ArraySlice<Unicode.Scalar> {
            from.prefix { ("0"..."9").contains($0) || $0 == "_" }
        }
        let whole = run(rest)
        guard let wholeDigits = digits(whole, radix: 10) else { return .failure(notANumber) }
        if wholeDigits.count > 1 && wholeDigits.hasPrefix("0") {
            return .failure(NumberProblem(what: "'\(text)': a TOML number has no leading zeros (an octal one is written 0o…)"))
        }
        rest = rest.dropFirst(whole.count)
        var fraction: String?, exponent: String?
        if rest.first == "." {
            let part = run(rest.dropFirst())
            guard let d = digits(part, radix: 10) else { return .failure(notANumber) }
            fraction = d
            rest = rest.dropFirst(1 + part.count)
        }
        if rest.first == "e" || rest.first == "E" {
            rest = rest.dropFirst()
            var exponentSign = ""
            if let first = rest.first, first == "+" || first == "-" { exponentSign = String(first); rest = rest.dropFirst() }
            let part = run(rest)
            guard let d = digits(part, radix: 10) else { return .failure(notANumber) }
            exponent = exponentSign + d
            rest = rest.dropFirst(part.count)
        }
        guard rest.isEmpty else { return .failure(notANumber) }
        if fraction == nil && exponent == nil {
            guard let value = Int(sign + wholeDigits) else { return .failure(NumberProblem(what: "'\(text)' is out of the range of a 64-bit integer")) }
            return .success(.integer(value))
        }
        guard let value = Double(sign + wholeDigits + "." + (fraction ?? "0") + "e" + (exponent ?? "0")) else { return .failure(notANumber) }
        return .success(.float(value))
    }

    /// The digits of `s` without its underscores, when it has at least one digit of `radix` and
    /// each underscore stands between two digits.
    private static func digits(_ s: ArraySlice<Unicode.Scalar>, radix: Int) -> String? {
        var result = ""
        var previousWasDigit = false
        for c in s {
            if c == "_" {
                guard previousWasDigit else { return nil }
                previousWasDigit = false
                continue
            }
            guard c.properties.isASCIIHexDigit, let value = Int(String(c), radix: 16), value < radix else { return nil }
            result.unicodeScalars.append(c)
            previousWasDigit = true
        }
        return previousWasDigit ? result : nil
    }
}
