#if canImport(Glibc)
import Glibc
#endif

/// MD5 (RFC 1321), for HTTP Digest authentication only (RFC 7616's MD5, what ONVIF cameras offer);
/// no MD5 in reach builds without Foundation, and dockd's link stays Foundation-free. Not for
/// anything that needs collision resistance.
enum MD5 {
    private static let shifts: [UInt32] = [7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                           5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
                                           4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                           6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21]
    /// floor(2³² × |sin(i + 1)|), RFC 1321's table T.
    private static let constants: [UInt32] = (0..<64).map { UInt32(truncatingIfNeeded: Int64((abs(sin(Double($0 + 1))) * 4_294_967_296).rounded(.down))) }

    static func digest(_ message: [UInt8]) -> [UInt8] {
        var a0: UInt32 = 0x6745_2301, b0: UInt32 = 0xEFCD_AB89, c0: UInt32 = 0x98BA_DCFE, d0: UInt32 = 0x1032_5476
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) &* 8
        for i in 0..<8 { padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(8 * i))) }
        var m = [UInt32](repeating: 0, count: 16)
        for block in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let j = block + 4 * i
                m[i] = UInt32(padded[j]) | UInt32(padded[j + 1]) << 8 | UInt32(padded[j + 2]) << 16 | UInt32(padded[j + 3]) << 24
            }
            var (a, b, c, d) = (a0, b0, c0, d0)
            for i in 0..<64 {
                let (f, g): (UInt32, Int) = switch i {
                case 0..<16: ((b & c) | (~b & d), i)
                case 16..<32: ((d & b) | (~d & c), (5 * i + 1) % 16)
                case 32..<48: (b ^ c ^ d, (3 * i + 5) % 16)
                default: (c ^ (b | ~d), (7 * i) % 16)
                }
                let sum = a &+ f &+ constants[i] &+ m[g]
                (a, d, c) = (d, c, b)
                b = b &+ (sum << shifts[i] | sum >> (32 - shifts[i]))
            }
            a0 = a0 &+ a; b0 = b0 &+ b; c0 = c0 &+ c; d0 = d0 &+ d
        }
        return [a0, b0, c0, d0].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(8 * $0)) } }
    }

    static func hex(_ text: String) -> String {
        digest(Array(text.utf8)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
