/// Little-endian writer for packet payloads.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { append(value) }
    mutating func u32(_ value: UInt32) { append(value) }
    mutating func u64(_ value: UInt64) { append(value) }
    mutating func f32(_ value: Float) { append(value.bitPattern) }

    /// `u8` length then UTF-8; text past `maxLength` bytes is cut at a character boundary.
    mutating func str(_ value: String, maxLength: Int) {
        var utf8 = Array(value.utf8)
        if utf8.count > maxLength {
            // Keep whole characters only: never cut inside a multi-byte sequence.
            var kept = 0
            for character in value {
                guard kept + character.utf8.count <= maxLength else { break }
                kept += character.utf8.count
            }
            utf8 = Array(utf8.prefix(kept))
        }
        u8(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    private mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}

/// Little-endian reader over a payload; every read fails with `PayloadError.short` past the end.
struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    mutating func u8() throws(PayloadError) -> UInt8 {
        guard index < bytes.endIndex else { throw .short }
        defer { index += 1 }
        return bytes[index]
    }
    mutating func u16() throws(PayloadError) -> UInt16 { try integer() }
    mutating func u32() throws(PayloadError) -> UInt32 { try integer() }
    mutating func u64() throws(PayloadError) -> UInt64 { try integer() }
    mutating func f32() throws(PayloadError) -> Float { Float(bitPattern: try integer()) }

    mutating func str() throws(PayloadError) -> String {
        let length = Int(try u8())
        guard bytes.endIndex - index >= length else { throw .short }
        defer { index += length }
        guard let text = String(validating: bytes[index..<(index + length)], as: UTF8.self) else { throw .badValue }
        return text
    }

    private mutating func integer<T: FixedWidthInteger>() throws(PayloadError) -> T {
        let size = MemoryLayout<T>.size
        guard bytes.endIndex - index >= size else { throw .short }
        var value: T = 0
        for offset in 0..<size { value |= T(bytes[index + offset]) << (8 * offset) }
        index += size
        return value
    }
}

enum PayloadError: Error {
    case short
    /// An enumerated field (axis, request, charge state) holds a value this version does not define.
    case badValue
}
