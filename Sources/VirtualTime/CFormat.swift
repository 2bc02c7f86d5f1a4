#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// printf's formatting without Foundation (String(format:) is Foundation's, and brings ICU into
    /// the one binary the package installs): each conversion is C's for its one argument, `%@` any
    /// value's description, `%%` a percent sign. An Int goes to `%d` and its kin as a long.
    public init(cFormat format: String, _ arguments: Any...) {
        var text = ""
        var remaining = arguments[...]
        var chars = format[...]
        while let percent = chars.firstIndex(of: "%") {
            text += chars[..<percent]
            var specification = "%"
            var index = chars.index(after: percent)
            while index < chars.endIndex, "-+ #0123456789.".contains(chars[index]) {
                specification.append(chars[index])
                index = chars.index(after: index)
            }
            guard index < chars.endIndex else { text += specification; chars = chars[index...]; break }
            let conversion = chars[index]
            chars = chars[chars.index(after: index)...]
            if conversion == "%" { text += "%"; continue }
            guard let argument = remaining.popFirst() else { text += specification + String(conversion); continue }
            switch (conversion, argument) {
            case ("@", _): text += "\(argument)"
            case (_, let value as Int) where "dixXuo".contains(conversion): text += Self.printf(specification + "l" + String(conversion), value)
            case (_, let value as CVarArg): text += Self.printf(specification + String(conversion), value)
            default: text += "\(argument)"
            }
        }
        text += chars
        self = text
    }

    private static func printf(_ specification: String, _ value: CVarArg) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let needed = Int(withVaList([value]) { vsnprintf(&buffer, buffer.count, specification, $0) })
        if needed >= buffer.count {
            buffer = [CChar](repeating: 0, count: needed + 1)
            _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, specification, $0) }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
