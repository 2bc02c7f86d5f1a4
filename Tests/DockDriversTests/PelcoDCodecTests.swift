@testable import DockDrivers
import DockProtocol
import Testing

/// Pelco-D's bytes against the command tables of the Pelco D Protocol Manual (TF-0002) and the
/// cameras' manuals that reprint them: `FF addr cmd1 cmd2 data1 data2 sum`, the sum of bytes 2–6.
@Suite struct PelcoDCodecTests {
    @Test func eachCommandIsTheTablesBytes() {
        #expect(PelcoD.stop(address: 1).bytes == [0xFF, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01])
        #expect(PelcoD.drive(address: 1, pan: 0x20, tilt: 0).bytes == [0xFF, 0x01, 0x00, 0x02, 0x20, 0x00, 0x23], "right")
        #expect(PelcoD.drive(address: 1, pan: -0x20, tilt: 0).bytes == [0xFF, 0x01, 0x00, 0x04, 0x20, 0x00, 0x25], "left")
        #expect(PelcoD.drive(address: 1, pan: 0, tilt: 0x20).bytes == [0xFF, 0x01, 0x00, 0x08, 0x00, 0x20, 0x29], "up")
        #expect(PelcoD.drive(address: 1, pan: 0, tilt: -0x3F).bytes == [0xFF, 0x01, 0x00, 0x10, 0x00, 0x3F, 0x50], "down")
        #expect(PelcoD.drive(address: 1, pan: -0x10, tilt: -0x10).bytes == [0xFF, 0x01, 0x00, 0x14, 0x10, 0x10, 0x35], "down-left")
        #expect(PelcoD.drive(address: 2, pan: 0x10, tilt: 0x08).bytes == [0xFF, 0x02, 0x00, 0x0A, 0x10, 0x08, 0x24], "up-right")
        #expect(PelcoD.preset(.setPreset, number: 1, address: 1).bytes == [0xFF, 0x01, 0x00, 0x03, 0x00, 0x01, 0x05])
        #expect(PelcoD.preset(.clearPreset, number: 1, address: 1).bytes == [0xFF, 0x01, 0x00, 0x05, 0x00, 0x01, 0x07])
        #expect(PelcoD.preset(.goToPreset, number: 1, address: 1).bytes == [0xFF, 0x01, 0x00, 0x07, 0x00, 0x01, 0x09])
        #expect(PelcoD.query(.queryPan, address: 1).bytes == [0xFF, 0x01, 0x00, 0x51, 0x00, 0x00, 0x52])
        #expect(PelcoD.query(.queryTilt, address: 1).bytes == [0xFF, 0x01, 0x00, 0x53, 0x00, 0x00, 0x54])
    }

    @Test func theSumWrapsAndSpeedsStayWithinTheProtocols() {
        // 0xFF + 0x0A + 0x3F + 0x3F = 0x187: modulo 256.
        #expect(PelcoD.drive(address: 0xFF, pan: 0x3F, tilt: 0x3F).bytes == [0xFF, 0xFF, 0x00, 0x0A, 0x3F, 0x3F, 0x87])
        #expect(PelcoD.drive(address: 1, pan: 0x50, tilt: 0).bytes[4] == 0x3F, "never turbo (0x40) or beyond")
        #expect(PelcoD.checksum([0x01, 0x00, 0x59, 0x23, 0x28]) == 0xA5)
    }

    @Test func answersDecodeAcrossReadsAndAfterNoise() {
        var decoder = PelcoD.Decoder()
        let pan9000: [UInt8] = [0xFF, 0x01, 0x00, 0x59, 0x23, 0x28, 0xA5]  // 90.00°
        #expect(decoder.feed(Array(pan9000.prefix(3))).isEmpty, "half a message waits for the rest")
        #expect(decoder.feed(Array(pan9000.dropFirst(3))) == [.success(PelcoD.Message(address: 1, command2: 0x59, data1: 0x23, data2: 0x28))])
        let broken: [UInt8] = [0xFF, 0x01, 0x00, 0x5B, 0x00, 0x10, 0x00]  // a wrong sum
        let out = decoder.feed([0x12, 0x34] + broken + pan9000)
        #expect(out.first == .failure(.malformed))
        #expect(out.contains(.failure(.crc)))
        #expect(out.last == .success(PelcoD.Message(address: 1, command2: 0x59, data1: 0x23, data2: 0x28)), "found again after the noise")
        #expect(PelcoD.Message(address: 1, command2: 0x59, data1: 0x23, data2: 0x28).word == 9000)
    }
}
