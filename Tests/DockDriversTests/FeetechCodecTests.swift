@testable import DockDrivers
import DockProtocol
import Testing

/// Feetech's bus servo packets, byte by byte, with checksums worked by hand from the vendor SDK's
/// rule (~(id + length + instruction/error + parameters) & 0xFF).
@Suite struct FeetechCodecTests {
    @Test func aReadOfPresentPositionAndSpeedIsItsInstructionPacket() {
        // 01 + 04 + 02 + 38 + 04 = 0x43 → ~0x43 = 0xBC.
        #expect(Feetech.read(id: 1, .presentPosition, count: 4) == [0xFF, 0xFF, 0x01, 0x04, 0x02, 0x38, 0x04, 0xBC])
    }

    @Test func aSyncWriteCarriesEachServosGoalPositionTimeAndSpeed() {
        let packet = Feetech.syncWrite(.goalPosition, [(1, Feetech.goal(position: 2048, speed: 500)), (2, Feetech.goal(position: 0x0123, speed: 1))])
        let body: [UInt8] = [0xFE, 18, 0x83, 0x2A, 6, 1, 0x00, 0x08, 0, 0, 0xF4, 0x01, 2, 0x23, 0x01, 0, 0, 0x01, 0x00]
        #expect(packet == [0xFF, 0xFF] + body + [~body.reduce(0, &+)])
        // The sum wraps: FE + 12 + 83 + … = 0x2E8 → E8 → ~ = 0x17.
        #expect(packet.last == 0x17)
    }

    @Test func speedsCarryTheirSignInBit15() {
        #expect(Feetech.signMagnitude(0x10, 0x00) == 16)
        #expect(Feetech.signMagnitude(0x10, 0x80) == -16)
        #expect(Feetech.signMagnitude(0xFF, 0x7F) == 32767)
    }

    @Test func statusPacketsAreFoundAfterNoiseAndAcrossReads() {
        var decoder = Feetech.Decoder()
        let status: [UInt8] = [0xFF, 0xFF, 0x02, 0x06, 0x20, 0x00, 0x08, 0x32, 0x80]
        let whole = status + [~status[2...].reduce(0, &+)]
        var results = decoder.feed([0x13, 0x37] + whole.prefix(5))
        results += decoder.feed(Array(whole.dropFirst(5)))
        #expect(results.count == 2)
        #expect(results.last == .success(Feetech.Status(id: 2, error: 0x20, parameters: [0x00, 0x08, 0x32, 0x80])))
        var broken = whole
        broken[broken.count - 1] &+= 1
        let failed = decoder.feed(broken + whole)
        #expect(failed.first == .failure(.crc))
        #expect(failed.last == .success(Feetech.Status(id: 2, error: 0x20, parameters: [0x00, 0x08, 0x32, 0x80])), "found again after a bad sum")
    }

    @Test func anErrorByteIsSaidInWords() {
        #expect(Feetech.errorText(0x20) == "overload")
        #expect(Feetech.errorText(0x05) == "input voltage, overheat")
        #expect(Feetech.errorText(0x40) == "error bits 0x40")
    }
}
