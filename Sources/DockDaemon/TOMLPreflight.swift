/// What toml++ 3.4.0 (inside TOMLKit 0.6.0) asserts on instead of reporting a parse error: an abort
/// in debug builds, undefined behaviour (`__builtin_assume`) in release ones. Fuzz/ConfigFuzz.swift
/// found them (Fuzz/known/ConfigFuzz/): a control character (`[[\u{18}device]]`, KNOWN-2) and a
/// table header whose name starts with neither a key character nor a quote (`[[:52381"`, KNOWN-3;
/// toml++ fixed that in marzer/tomlplusplus#301, after the version TOMLKit ships); then a third,
/// a `}` where an array expects an element (`a = [}`, KNOWN-4). `problem(in:)` finds all three
/// first, with their line and column, so that the parser never sees them.
enum TOMLPreflight {
    struct Problem: Equatable {
        var line: Int
        /// 1-based, in Unicode scalars.
        var column: Int
        var what: String
    }

    static func problem(in text: String) -> Problem? {
        controlCharacter(in: text) ?? structureProblem(in: Array(text.unicodeScalars))
    }

    /// TOML allows no control character but tab and line ends (LF, CR LF).
    static func controlCharacter(in text: String) -> Problem? {
        var line = 1, column = 0
        var previous: Unicode.Scalar?
        func found(_ scalar: Unicode.Scalar) -> Problem {
            let code = String(scalar.value, radix: 16, uppercase: true)
            return Problem(line: line, column: column,
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

    /// Where an expression starts (not inside a value or a string), `[` or `[[` and blanks must be
    /// followed by a key (bare or quoted) or the `]` that toml++ itself refuses; and where an array
    /// expects an element (after `[` or `,`, blanks, line ends and comments aside) a `}` must not be.
    static func structureProblem(in s: [Unicode.Scalar]) -> Problem? {
        var i = 0, line = 1, lineStart = 0
        var expressionStart = true, inValue = false
        var open: [Unicode.Scalar] = []  // the value's unclosed `[` and `{`
        var elementStart = false
        func blank(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" }
        func newline(at k: Int) { line += 1; lineStart = k + 1 }
        func problem(at k: Int, _ what: String) -> Problem { Problem(line: line, column: k - lineStart + 1, what: what) }
        while i < s.count {
            let c = s[i]
            if c == "\n" {
                newline(at: i)
                if open.isEmpty { expressionStart = true; inValue = false }
                i += 1
                continue
            }
            if blank(c) || c == "\r" { i += 1; continue }
            if c == "#" {
                while i < s.count && s[i] != "\n" { i += 1 }
                continue
            }
            if elementStart && c == "}" { return problem(at: i, "expected a value in the array, saw '}'") }
            elementStart = false
            switch c {
            case "\"", "'":
                i = endOfString(s, from: i, newline: newline)
            case "[" where expressionStart:
                var k = i + 1
                while k < s.count && blank(s[k]) { k += 1 }
                if k == i + 1 && k < s.count && s[k] == "[" {
                    k += 1
                    while k < s.count && blank(s[k]) { k += 1 }
                }
                if k < s.count && !(isBareKey(s[k]) || s[k] == "\"" || s[k] == "'" || s[k] == "]") {
                    return problem(at: k, "a table header must start with a key")
                }
                i = k
            case "=" where !inValue:
                inValue = true; i += 1
            case "[", "{":
                if inValue { open.append(c); elementStart = c == "[" }
                i += 1
            case "]", "}":
                if inValue && !open.isEmpty { open.removeLast() }
                i += 1
            case "," where open.last == "[":
                elementStart = true; i += 1
            default:
                i += 1
            }
            expressionStart = false
        }
        return nil
    }

    static func isBareKey(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-"
    }

    /// The index after the string that starts at `start` (one-line strings end at the line's end
    /// if unterminated); multi-line ones report their newlines.
    static func endOfString(_ s: [Unicode.Scalar], from start: Int, newline: (Int) -> Void) -> Int {
        let quote = s[start]
        let multiLine = start + 2 < s.count && s[start + 1] == quote && s[start + 2] == quote
        var i = start + (multiLine ? 3 : 1)
        while i < s.count {
            let c = s[i]
            if c == "\\" && quote == "\"" { i += 2; continue }
            if c == "\n" { if !multiLine { return i }; newline(i) }
            if c == quote {
                if !multiLine { return i + 1 }
                if i + 2 < s.count && s[i + 1] == quote && s[i + 2] == quote {
                    var end = i + 3
                    while end < s.count && end < i + 5 && s[end] == quote { end += 1 }  // up to two quotes of content
                    return end
                }
            }
            i += 1
        }
        return i
    }
}

/// Where a key or a table is written, so that a message about it can name its line. toml++ keeps
/// source positions, but TOMLKit does not pass them on; this reads the (already parsed, so valid)
/// text again for the headers and keys alone.
extension TOMLPreflight {
    struct Place: Equatable {
        var line: Int
        /// 1-based, in Unicode scalars.
        var column: Int
    }

    /// `path` as the configuration reader names it: keys, with the index after an array of tables
    /// (["device", "1", "poll_hz"]: `poll_hz` in the second `[[device]]`). The place is the key that
    /// writes it (also a dotted one, or the key of the inline table it is in), else the header of the
    /// table it names; nil when the text does not show it.
    static func place(of path: [String], in text: String) -> Place? {
        let s = Array(text.unicodeScalars)
        var i = 0, line = 1, lineStart = 0
        var table: [String] = []
        var arrayCounts: [[String]: Int] = [:]  // [[name]] headers seen, by their key path
        func newline(at k: Int) { line += 1; lineStart = k + 1 }
        func blank(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" || c == "\r" }
        /// A dotted key from `k`: its parts and the index after it.
        func key(from start: Int) -> ([String], Int) {
            var k = start, parts: [String] = []
            while k < s.count {
                while k < s.count && blank(s[k]) { k += 1 }
                guard k < s.count else { break }
                if s[k] == "\"" || s[k] == "'" {
                    let end = endOfString(s, from: k, newline: { _ in })
                    parts.append(unquoted(s[k..<end]))
                    k = end
                } else {
                    let begin = k
                    while k < s.count && isBareKey(s[k]) { k += 1 }
                    guard k > begin else { break }
                    parts.append(String(String.UnicodeScalarView(s[begin..<k])))
                }
                while k < s.count && blank(s[k]) { k += 1 }
                guard k < s.count, s[k] == "." else { break }
                k += 1
            }
            return (parts, k)
        }
        /// Header keys with the latest index after each array of tables among their prefixes.
        func indexed(_ keys: [String]) -> [String] {
            var result: [String] = []
            for n in keys.indices {
                result.append(keys[n])
                if let count = arrayCounts[Array(keys[...n])] { result.append(String(count - 1)) }
            }
            return result
        }
        while i < s.count {
            let c = s[i]
            if c == "\n" { newline(at: i); i += 1; continue }
            if blank(c) { i += 1; continue }
            if c == "#" { while i < s.count && s[i] != "\n" { i += 1 }; continue }
            let column = i - lineStart + 1
            if c == "[" {
                let isArray = i + 1 < s.count && s[i + 1] == "["
                let (keys, end) = key(from: i + (isArray ? 2 : 1))
                if isArray { arrayCounts[keys, default: 0] += 1 }
                table = indexed(keys)
                if table == path { return Place(line: line, column: column) }
                i = end
            } else {
                let (keys, end) = key(from: i)
                let full = table + keys
                if full == path || full.starts(with: path) || path.starts(with: full) {
                    return Place(line: line, column: column)
                }
                i = end
            }
            i = endOfExpression(s, from: i, newline: newline)
        }
        return nil
    }

    private static func unquoted(_ quoted: ArraySlice<Unicode.Scalar>) -> String {
        var inner = quoted.dropFirst()
        if inner.last == quoted.first { inner = inner.dropLast() }
        return String(String.UnicodeScalarView(inner))
    }

    /// The index of the line end that ends the expression starting at `start` (a value may span
    /// lines inside brackets or a multi-line string).
    private static func endOfExpression(_ s: [Unicode.Scalar], from start: Int, newline: (Int) -> Void) -> Int {
        var i = start, depth = 0
        while i < s.count {
            switch s[i] {
            case "\"", "'": i = endOfString(s, from: i, newline: newline); continue
            case "#": while i < s.count && s[i] != "\n" { i += 1 }; continue
            case "[", "{": depth += 1
            case "]", "}": depth = max(0, depth - 1)
            case "\n":
                if depth == 0 { return i }
                newline(i)
            default: break
            }
            i += 1
        }
        return i
    }
}
