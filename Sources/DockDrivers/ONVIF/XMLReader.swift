/// An XML element as the ONVIF driver reads it: its namespace and local name, attributes by local
/// name, children, and its character data (text and CDATA, entities resolved).
public struct XMLElement: Sendable, Equatable {
    public var namespace: String
    public var name: String
    public var attributes: [String: String]
    public var children: [XMLElement]
    public var text: String

    /// The first child with this local name.
    public func child(_ name: String) -> XMLElement? { children.first { $0.name == name } }
    public func children(_ name: String) -> [XMLElement] { children.filter { $0.name == name } }
    /// The first element with this local name at any depth below, breadth first.
    public func find(_ name: String) -> XMLElement? {
        var level = children
        while !level.isEmpty {
            if let hit = level.first(where: { $0.name == name }) { return hit }
            level = level.flatMap(\.children)
        }
        return nil
    }
    /// A child's text, trimmed.
    public func value(_ name: String) -> String? { child(name).map { $0.text.trimmed } }
}

/// A small strict reader for SOAP replies: well-formed XML 1.0 with namespaces, or an error. No
/// DTD (a DOCTYPE is refused, so no entity can expand: the billion-laughs and external-entity
/// attacks have nothing to work with), only the five predefined entities and character
/// references, bounded size and depth. What a camera sends is untrusted input.
public enum XMLReader {
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    public static let maximumBytes = 1 << 20
    public static let maximumDepth = 64

    public static func parse(_ bytes: [UInt8]) throws(Failure) -> XMLElement {
        guard bytes.count <= maximumBytes else { throw Failure(description: "the document is over \(maximumBytes) bytes") }
        var parser = Parser(bytes: bytes)
        return try parser.document()
    }

    private struct Open {
        var qualifiedName: [UInt8]
        var element: XMLElement
        var namespaces: [String: String]
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }  // a UTF-8 byte order mark
        }

        func fail(_ what: String) -> Failure { Failure(description: "\(what) at byte \(i)") }

        mutating func document() throws(Failure) -> XMLElement {
            try prolog()
            guard peek("<") else { throw fail("no root element") }
            let root = try element()
            try misc()
            guard i == bytes.count else { throw fail("content after the root element") }
            return root
        }

        /// The XML declaration, comments, processing instructions and white space before the root.
        mutating func prolog() throws(Failure) {
            if peek("<?xml") { try skip(past: "?>") }
            try misc()
            if peek("<!DOCTYPE") { throw fail("a DOCTYPE (DTDs and entity declarations are refused)") }
        }

        mutating func misc() throws(Failure) {
            while true {
                skipSpace()
                if peek("<!--") { try skip(past: "-->") } else if peek("<?") { try skip(past: "?>") } else { return }
            }
        }

        mutating func element() throws(Failure) -> XMLElement {
            var stack: [Open] = []
            let top: [String: String] = ["xml": "http://www.w3.org/XML/1998/namespace"]
            while true {
                if i >= bytes.count { throw fail(stack.isEmpty ? "no root element" : "the document ends inside <\(name(stack.last!.qualifiedName))>") }
                if peek("</") {
                    i += 2
                    let closing = try readName()
                    skipSpace()
                    try expect(">")
                    guard var done = stack.popLast(), done.qualifiedName == closing else { throw fail("</\(name(closing))> closes no open element") }
                    if stack.isEmpty { return done.element }
                    stack[stack.count - 1].element.children.append(done.element)
                } else if peek("<!--") {
                    try skip(past: "-->")
                } else if peek("<![CDATA[") {
                    guard !stack.isEmpty else { throw fail("CDATA outside the root") }
                    i += 9
                    let start = i
                    try skip(past: "]]>")
                    stack[stack.count - 1].element.text += String(decoding: bytes[start..<(i - 3)], as: UTF8.self)
                } else if peek("<!") {
                    throw fail("a declaration inside the document")
                } else if peek("<?") {
                    try skip(past: "?>")
                } else if peek("<") {
                    guard stack.count < maximumDepth else { throw fail("elements nested deeper than \(maximumDepth)") }
                    i += 1
                    let qualified = try readName()
                    var raw: [([UInt8], String)] = []
                    while true {
                        let spaced = skipSpace()
                        if peek("/>") || peek(">") { break }
                        guard spaced else { throw fail("no space before an attribute") }
                        let key = try readName()
                        skipSpace()
                        try expect("=")
                        skipSpace()
                        let value = try quoted()
                        guard !raw.contains(where: { $0.0 == key }) else { throw fail("attribute \(name(key)) given twice") }
                        raw.append((key, value))
                    }
                    var namespaces = stack.last?.namespaces ?? top
                    for (key, value) in raw {
                        if key == Array("xmlns".utf8) { namespaces[""] = value }
                        else if key.starts(with: Array("xmlns:".utf8)) { namespaces[name(Array(key.dropFirst(6)))] = value }
                    }
                    var attributes: [String: String] = [:]
                    for (key, value) in raw where key != Array("xmlns".utf8) && !key.starts(with: Array("xmlns:".utf8)) {
                        let (prefix, local) = split(key)
                        if let prefix, namespaces[prefix] == nil { throw fail("unbound prefix \(prefix)") }
                        attributes[local] = value
                    }
                    let (prefix, local) = split(qualified)
                    guard let namespace = namespaces[prefix ?? ""] ?? (prefix == nil ? "" : nil) else { throw fail("unbound prefix \(prefix!)") }
                    let element = XMLElement(namespace: namespace, name: local, attributes: attributes, children: [], text: "")
                    if peek("/>") {
                        i += 2
                        if stack.isEmpty { return element }
                        stack[stack.count - 1].element.children.append(element)
                    } else {
                        i += 1
                        stack.append(Open(qualifiedName: qualified, element: element, namespaces: namespaces))
                    }
                } else {
                    let text = try characters()
                    guard !stack.isEmpty else { throw fail("text outside the root") }
                    stack[stack.count - 1].element.text += text
                }
            }
        }

        /// Character data up to the next `<`, entities resolved.
        mutating func characters() throws(Failure) -> String {
            var out: [UInt8] = []
            while i < bytes.count, bytes[i] != UInt8(ascii: "<") {
                if bytes[i] == UInt8(ascii: "&") { out += try reference() } else {
                    if bytes[i] == UInt8(ascii: ">"), out.suffix(2) == [UInt8(ascii: "]"), UInt8(ascii: "]")] { throw fail("]]> in text") }
                    out.append(bytes[i]); i += 1
                }
            }
            return try utf8(out)
        }

        mutating func quoted() throws(Failure) -> String {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else { throw fail("an unquoted attribute value") }
            let quote = bytes[i]
            i += 1
            var out: [UInt8] = []
            while true {
                guard i < bytes.count else { throw fail("the document ends inside an attribute value") }
                let b = bytes[i]
                if b == quote { i += 1; return try utf8(out) }
                if b == UInt8(ascii: "<") { throw fail("< in an attribute value") }
                if b == UInt8(ascii: "&") { out += try reference() } else { out.append(b); i += 1 }
            }
        }

        /// `&lt;` `&gt;` `&amp;` `&apos;` `&quot;` `&#N;` `&#xN;`; any other name is an undeclared entity.
        mutating func reference() throws(Failure) -> [UInt8] {
            guard let end = bytes[i...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else { throw fail("an unterminated reference") }
            let body = String(decoding: bytes[(i + 1)..<end], as: UTF8.self)
            i = end + 1
            switch body {
            case "lt": return [UInt8(ascii: "<")]
            case "gt": return [UInt8(ascii: ">")]
            case "amp": return [UInt8(ascii: "&")]
            case "apos": return [UInt8(ascii: "'")]
            case "quot": return [UInt8(ascii: "\"")]
            default:
                let code: UInt32? = if body.hasPrefix("#x") { UInt32(body.dropFirst(2), radix: 16) }
                    else if body.hasPrefix("#") { UInt32(body.dropFirst(), radix: 10) } else { nil }
                guard let code else { throw fail("the entity &\(body); (only the predefined ones are read)") }
                guard let scalar = Unicode.Scalar(code), code == 0x9 || code == 0xA || code == 0xD || code >= 0x20 else { throw fail("the character reference &\(body);") }
                return Array(String(Character(scalar)).utf8)
            }
        }

        mutating func readName() throws(Failure) -> [UInt8] {
            let start = i
            while i < bytes.count, isNameByte(bytes[i], first: i == start) { i += 1 }
            guard i > start else { throw fail("a name expected") }
            return Array(bytes[start..<i])
        }

        func isNameByte(_ b: UInt8, first: Bool) -> Bool {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), UInt8(ascii: ":"), 0x80...: true
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."): !first
            default: false
            }
        }

        func split(_ qualified: [UInt8]) -> (prefix: String?, local: String) {
            guard let colon = qualified.firstIndex(of: UInt8(ascii: ":")) else { return (nil, name(qualified)) }
            return (name(Array(qualified[..<colon])), name(Array(qualified[(colon + 1)...])))
        }

        func name(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

        func utf8(_ bytes: [UInt8]) throws(Failure) -> String {
            guard let text = String(validating: bytes, as: UTF8.self) else { throw fail("text that is not UTF-8") }
            return text
        }

        func peek(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard i + count <= bytes.count else { return false }
            return literal.withUTF8Buffer { buffer in (0..<count).allSatisfy { bytes[i + $0] == buffer[$0] } }
        }

        mutating func expect(_ literal: StaticString) throws(Failure) {
            guard peek(literal) else { throw fail("\(literal) expected") }
            i += literal.utf8CodeUnitCount
        }

        mutating func skip(past literal: StaticString) throws(Failure) {
            while i < bytes.count {
                if peek(literal) { i += literal.utf8CodeUnitCount; return }
                i += 1
            }
            throw fail("the document ends before \(literal)")
        }

        @discardableResult
        mutating func skipSpace() -> Bool {
            let start = i
            while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
            return i > start
        }
    }
}

extension String {
    var trimmed: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
