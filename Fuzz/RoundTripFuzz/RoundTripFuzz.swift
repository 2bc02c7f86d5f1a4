@testable import DockProtocol
// libFuzzer target for the byte-level codecs: COBS and CRC-16 (PROTOCOL.md §1).
// Built by Fuzz/run.sh through SwiftPM (Package.swift, DOCKD_FUZZ=1) against DockProtocol.

func violation(_ what: String, _ file: StaticString = #file, _ line: UInt = #line) -> Never {
    fatalError("RoundTripFuzz invariant violated: \(what)", file: file, line: line)
}

/// Bitwise CRC-16/CCITT-FALSE, independent of the table in CRC16.swift.
func referenceCRC(_ bytes: [UInt8]) -> UInt16 {
    var crc: UInt16 = 0xFFFF
    for b in bytes {
        crc ^= UInt16(b) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
    }
    return crc
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRoundTrip(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = size == 0 ? [] : Array(UnsafeBufferPointer(start: data!, count: size))

    // COBS encode: no 0x00, bounded overhead, decodes back to the input.
    let encoded = COBS.encode(input)
    if encoded.contains(0) { violation("COBS output contains 0x00") }
    if encoded.count > input.count + input.count / 254 + 1 { violation("COBS output \(encoded.count) bytes for \(input.count)") }
    guard let decoded = COBS.decode(encoded) else { violation("COBS.decode refused COBS.encode output") }
    if decoded != input { violation("COBS round trip changed \(input) into \(decoded)") }

    // COBS decode of arbitrary bytes: whatever it accepts is stable under encode/decode, is never
    // longer than its input, and a slice with a non-zero start index decodes the same way.
    if let packet = COBS.decode(input) {
        if packet.count > input.count { violation("COBS.decode grew \(input.count) to \(packet.count) bytes") }
        if COBS.decode(COBS.encode(packet)) != packet { violation("decode/encode/decode unstable") }
    }
    if !input.isEmpty {
        let padded = [0x55] + input
        if COBS.decode(padded[1...]) != COBS.decode(input) { violation("COBS.decode depends on the slice's start index") }
    }

    // CRC: table-driven equals bitwise, for arrays and slices.
    let crc = CRC16.checksum(input)
    if crc != referenceCRC(input) { violation("CRC16 table \(crc) != bitwise \(referenceCRC(input))") }
    if !input.isEmpty && CRC16.checksum(input[1...]) != referenceCRC(Array(input[1...])) { violation("CRC16 on a slice") }
    return 0
}
