/// One part of a key as written (`a."b c".d` has three), with its place for messages.
struct TOMLKeyPart: Equatable {
    var name: String
    var place: TOMLPlace
}

/// Keys as messages write them: as TOML would, so that a key with a space, a quote or a line end in
/// it reads as one key on one line.
enum TOMLKey {
    static func isBare(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-"
    }

    /// Bare when it can be, else in quotes with TOML's escapes.
    static func written(_ key: String) -> String {
        if !key.isEmpty && key.unicodeScalars.allSatisfy(isBare) { return key }
        var escaped = ""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "\"\(escaped)\""
    }

    static func dotted(_ keys: [TOMLKeyPart]) -> String { keys.map { written($0.name) }.joined(separator: ".") }
}
