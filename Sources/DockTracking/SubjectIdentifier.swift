/// A subject's identity for one session: a random (version 4) UUID, like DockKit's, plus a small
/// sequential number for logs and MOTChallenge output. Kept free of Foundation so the tracking core
/// stays dependency-free; `description` is the canonical UUID text.
public struct SubjectIdentifier: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64
    /// 1, 2, 3… in order of creation within the session.
    public let number: Int

    public init(high: UInt64, low: UInt64, number: Int) {
        self.high = high
        self.low = low
        self.number = number
    }

    static func random<G: RandomNumberGenerator>(number: Int, using generator: inout G) -> SubjectIdentifier {
        let versioned = (generator.next() & ~0xF000) | 0x4000  // version nibble = 4
        let variant = (generator.next() & ~(0b11 << 62)) | (0b10 << 62)  // RFC 4122 variant bits
        return SubjectIdentifier(high: versioned, low: variant, number: number)
    }

    public var description: String {
        let hex = hexDigits(high, count: 16) + hexDigits(low, count: 16)
        var text = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { text.append("-") }
            text.append(character)
        }
        return text
    }

    private func hexDigits(_ value: UInt64, count: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: count - digits.count) + digits
    }

    public static func < (lhs: SubjectIdentifier, rhs: SubjectIdentifier) -> Bool { lhs.number < rhs.number }
}
