/// Base64 (RFC 4648 §4, padded), for WS-Security's nonce and digest: the one in swift-nio is
/// internal (_NIOBase64) and the daemon's link stays Foundation-free.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        for start in stride(from: 0, to: bytes.count, by: 3) {
            let n = min(3, bytes.count - start)
            let group = UInt32(bytes[start]) << 16 | (n > 1 ? UInt32(bytes[start + 1]) << 8 : 0) | (n > 2 ? UInt32(bytes[start + 2]) : 0)
            for i in 0..<4 {
                out.append(i <= n ? alphabet[Int(group >> UInt32(18 - 6 * i) & 0x3F)] : UInt8(ascii: "="))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
