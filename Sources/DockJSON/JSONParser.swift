#if canImport(Glibc)
import Glibc
#endif

/// Strict JSON (RFC 8259) from bytes: no trailing commas, no comments, no leading zeros or `+`,
/// no NaN or Infinity, UTF-8 only, no unescaped control characters, no lone surrogates, and nothing
/// after the value but whitespace. Nesting deeper than `maxDepth` is refused (the parser recurses,
/// and a line of a million `[` must not exhaust the stack). A member name given twice in one object
/// is refused too: which one a reader keeps is undefined (RFC 8259 §4).
///
/// Pure and allocation-light: it reads an `UnsafeRawBufferPointer` (the line in NIO's buffer) and
/// allocates only the values it returns.
public struct JSONParser {
    public static let maxDepth = 64

    public enum Failure: Error, Equatable {
        /// Not JSON: what was wrong and at which byte.
        case syntax(String, at: Int)
        /// JSON, but an object names a member twice.
        case duplicateMember(String)
        case tooDeep
    }

    private let bytes: UnsafeRawBufferPointer
    var index = 0

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The whole text as one value.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes)
        let value = try parser.value(depth: 0)
        try parser.end()
        return value
    }

    /// Only whitespace may follow.
    public mutating func end() throws(Failure) {
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected text after the value") }
    }

    // MARK: - Values

    public mutating func value(depth: Int) throws(Failure) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw fail("unexpected end of the text") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try object(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try array(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number().value)
        default: throw fail("unexpected character")
        }
    }

    /// Skips one value, checking it, and returns the byte range of its text.
    mutating func skipValue(depth: Int) throws(Failure) -> Range<Int> {
        skipWhitespace()
        let start = index
        _ = try value(depth: depth)
        return start..<index
    }

    /// Checks one value's syntax without building it and without recursion (any depth, no
    /// duplicate check): how a request nested too deep is read past to find its id.
    mutating func skipIteratively() throws(Failure) {
        var open: [UInt8] = []  // the containers we are in: `{` or `[`
        while true {
            skipWhitespace()
            switch peek {
            case UInt8(ascii: "{"):
                index += 1
                skipWhitespace()
                if peek == UInt8(ascii: "}") { index += 1 } else { open.append(UInt8(ascii: "{")); _ = try memberName(); continue }
            case UInt8(ascii: "["):
                index += 1
                skipWhitespace()
                if peek == UInt8(ascii: "]") { index += 1 } else { open.append(UInt8(ascii: "[")); continue }
            default:
                _ = try value(depth: 0)
            }
            // After a value: close what ends here, then expect the next value or stop.
            while let container = open.last {
                skipWhitespace()
                guard let c = peek else { throw fail("unexpected end of the text") }
                index += 1
                if c == UInt8(ascii: ",") {
                    if container == UInt8(ascii: "{") { _ = try memberName() }
                    break
                }
                guard c == container + 2 else { throw fail("expected , or the end of the \(container == UInt8(ascii: "{") ? "object" : "array")", at: index - 1) }
                open.removeLast()
            }
            if open.isEmpty { return }
        }
    }

    /// After the opening brace: the members, each name once.
    mutating func object(depth: Int) throws(Failure) -> [String: JSONValue] {
        guard depth <= Self.maxDepth else { throw .tooDeep }
        var result: [String: JSONValue] = [:]
        if objectStarts() { return result }
        while true {
            let name = try memberName()
            let member = try value(depth: depth)
            guard result.updateValue(member, forKey: name) == nil else { throw .duplicateMember(name) }
            if try objectEnds() { return result }
        }
    }

    /// A member's name and its colon (the caller then reads the value).
    mutating func memberName() throws(Failure) -> String {
        skipWhitespace()
        guard peek == UInt8(ascii: "\"") else { throw fail("expected a member name in quotes") }
        let name = try string()
        skipWhitespace()
        guard peek == UInt8(ascii: ":") else { throw fail("expected : after a member name") }
        index += 1
        return name
    }

    /// A member's name and its colon, as the index of the name in `known` when it is one of them
    /// written without escapes (compared as bytes: no String is made), else the name as a String.
    mutating func memberName(known: [StaticString]) throws(Failure) -> (known: Int?, name: String?) {
        skipWhitespace()
        guard peek == UInt8(ascii: "\"") else { throw fail("expected a member name in quotes") }
        let start = index + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\") { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            let n = end - start
            for (k, name) in known.enumerated() where name.utf8CodeUnitCount == n
                && memcmp(bytes.baseAddress! + start, name.utf8Start, n) == 0 {
                index = end + 1
                skipWhitespace()
                guard peek == UInt8(ascii: ":") else { throw fail("expected : after a member name") }
                index += 1
                return (k, nil)
            }
        }
        return (nil, try memberName())
    }

    /// For a caller reading an object member by member: after a value, true at `}` (consumed),
    /// false at `,` (consumed; another member follows).
    mutating func objectEnds() throws(Failure) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw fail("unexpected end of the text in an object") }
        let c = bytes[index]
        index += 1
        if c == UInt8(ascii: "}") { return true }
        guard c == UInt8(ascii: ",") else { throw fail("expected , or } in an object", at: index - 1) }
        return false
    }

    /// At an opening brace: consumes it; true when the object is empty (its `}` consumed too).
    mutating func objectStarts() -> Bool {
        index += 1
        skipWhitespace()
        if peek == UInt8(ascii: "}") { index += 1; return true }
        return false
    }

    private mutating func array(depth: Int) throws(Failure) -> [JSONValue] {
        guard depth <= Self.maxDepth else { throw .tooDeep }
        index += 1
        var result: [JSONValue] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") { index += 1; return result }
        while true {
            result.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of the text in an array") }
            let c = bytes[index]
            index += 1
            if c == UInt8(ascii: "]") { return result }
            guard c == UInt8(ascii: ",") else { throw fail("expected , or ] in an array", at: index - 1) }
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let n = word.utf8CodeUnitCount
        guard bytes.count - index >= n else { throw fail("unexpected end of the text") }
        for k in 0..<n where bytes[index + k] != word.utf8Start[k] { throw fail("unexpected character", at: index + k) }
        index += n
    }

    // MARK: - Numbers

    /// A number as RFC 8259 writes it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    /// Out of double's range it reads as ±infinity or ±0 (the methods refuse what is not finite).
    mutating func number() throws(Failure) -> (value: Double, range: Range<Int>) {
        let start = index
        var negative = false
        if peek == UInt8(ascii: "-") { negative = true; index += 1 }
        guard let first = peek, isDigit(first) else { throw fail("a digit must follow -") }
        var integer: UInt64 = 0
        var digits = 0
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek, isDigit(next) { throw fail("a number does not start with 0 (leading zeros are not JSON)") }
        } else {
            while let c = peek, isDigit(c) {
                if digits < 18 { integer = integer &* 10 &+ UInt64(c &- UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
        }
        var simple = digits <= 15
        if peek == UInt8(ascii: ".") {
            simple = false
            index += 1
            guard let c = peek, isDigit(c) else { throw fail("a digit must follow the decimal point") }
            while let c = peek, isDigit(c) { index += 1 }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            simple = false
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let c = peek, isDigit(c) else { throw fail("a digit must follow the exponent") }
            while let c = peek, isDigit(c) { index += 1 }
        }
        let range = start..<index
        if simple {
            // Up to 15 digits: exact in a double.
            let magnitude = Double(integer)
            return (negative ? -magnitude : magnitude, range)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        // The grammar was checked above, so the standard library's (locale-free) reading succeeds.
        return (Double(text) ?? .nan, range)
    }

    // MARK: - Strings

    /// A string, the opening quote at `index`.
    mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                let text = try validUTF8(start..<index)
                index += 1
                return text
            }
            if c == UInt8(ascii: "\\") { break }
            guard c >= 0x20 else { throw fail("a control character must be escaped in a string") }
            index += 1
        }
        guard index < bytes.count else { throw fail("unterminated string", at: start - 1) }
        var unescaped = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                index += 1
                guard let text = String(validating: unescaped, as: UTF8.self) else { throw fail("a string is not valid UTF-8", at: start) }
                return text
            }
            guard c >= 0x20 else { throw fail("a control character must be escaped in a string") }
            if c != UInt8(ascii: "\\") { unescaped.append(c); index += 1; continue }
            index += 1
            guard let e = peek else { break }
            index += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(e)
            case UInt8(ascii: "b"): unescaped.append(0x08)
            case UInt8(ascii: "f"): unescaped.append(0x0C)
            case UInt8(ascii: "n"): unescaped.append(0x0A)
            case UInt8(ascii: "r"): unescaped.append(0x0D)
            case UInt8(ascii: "t"): unescaped.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw fail("a high surrogate must be followed by a low one")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("a high surrogate must be followed by a low one") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("a lone low surrogate")
                }
                guard let s = Unicode.Scalar(scalar) else { throw fail("not a Unicode scalar") }
                unescaped.append(contentsOf: UTF8.encode(s)!)
            default:
                throw fail("unknown escape", at: index - 1)
            }
        }
        throw fail("unterminated string", at: start - 1)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard bytes.count - index >= 4 else { throw fail("\\u needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: throw fail("\\u needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func validUTF8(_ range: Range<Int>) throws(Failure) -> String {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[range])
        // ASCII (nearly every name and value here) needs no validation.
        if !slice.contains(where: { $0 >= 0x80 }) { return String(decoding: slice, as: UTF8.self) }
        guard let text = String(validating: slice.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
            throw fail("a string is not valid UTF-8", at: range.lowerBound)
        }
        return text
    }

    // MARK: - Bytes

    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    private func fail(_ what: String, at position: Int? = nil) -> Failure { .syntax(what, at: position ?? index) }
}

extension UnsafeRawBufferPointer {
    /// The bytes as `UInt8`s, for APIs that take typed buffers.
    func assumingMemoryBound(to: UInt8.Type) -> UnsafeBufferPointer<UInt8> {
        guard let base = baseAddress else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count)
    }
}
