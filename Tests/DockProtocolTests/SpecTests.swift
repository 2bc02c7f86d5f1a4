import Foundation
import Testing
import DockProtocol

/// PROTOCOL.md against the Swift codec: its byte dumps (§6.1) are the vectors, its version is the
/// one dockd speaks, its timing is `ProtocolTiming`.
@Suite("PROTOCOL.md")
struct SpecTests {
    static let spec: String = {
        let url = VectorFile.directory.deletingLastPathComponent().appendingPathComponent("PROTOCOL.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    struct Dump { var vector: String; var packet: [UInt8]; var wire: [UInt8] }

    /// Each dump: its vector's name, the bytes of its table rows (the packet), the wire bytes below.
    static func dumps() -> [Dump] {
        var result: [Dump] = []
        var current: Dump?
        var inWire = false
        guard let begin = spec.range(of: "<!-- byte dumps:"), let end = spec.range(of: "<!-- end of byte dumps -->") else { return [] }
        for line in spec[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("**"), let start = line.range(of: "(vector `"), let end = line.range(of: "`)", range: start.upperBound..<line.endIndex) {
                if let done = current { result.append(done) }
                current = Dump(vector: String(line[start.upperBound..<end.lowerBound]), packet: [], wire: [])
            } else if current != nil, line.hasPrefix("| "), line.contains("| `") {
                let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                current!.packet += hexBytes(cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")))
            } else if line == "```" {
                inWire.toggle()
            } else if inWire, current != nil {
                current!.wire = hexBytes(String(line))
            }
        }
        if let done = current { result.append(done) }
        return result
    }

    static func hexBytes(_ text: String) -> [UInt8] { text.split(separator: " ").map { UInt8($0, radix: 16)! } }

    @Test func theByteDumpsAreTheVectorsAndDecode() throws {
        let vectors = Dictionary(uniqueKeysWithValues: try VectorFile.messages().map { ($0.name, $0.bytes) })
        let dumps = Self.dumps()
        #expect(dumps.map(\.vector) == ["hello", "hello_reply", "feedback", "nack_version_mismatch"])
        for dump in dumps {
            #expect(dump.wire == vectors[dump.vector], "\(dump.vector): the wire bytes in PROTOCOL.md are its vector")
            #expect(COBS.encode(dump.packet) + [0] == dump.wire, "\(dump.vector): the table's bytes are the packet")
            var decoder = FrameDecoder()
            let results = decoder.feed(dump.wire)
            #expect(results.count == 1 && (try? results[0].get()) != nil, "\(dump.vector) decodes")
        }
    }

    @Test func theSpecIsTheVersionDockdSpeaks() {
        #expect(Self.spec.hasPrefix("# dockd stand wire protocol, version \(ProtocolVersion.text)\n"))
    }

    @Test func theTimesFitTogether() {
        #expect(ProtocolTiming.handshakeTimeout < ProtocolTiming.linkTimeout)
        #expect(ProtocolTiming.linkTimeout >= 4 * ProtocolTiming.standHeartbeatInterval)
        #expect(ProtocolTiming.helloReplyWithin < ProtocolTiming.helloInterval)
        #expect(ProtocolTiming.ackWithin < ProtocolTiming.resendAfter)
        #expect(ProtocolTiming.hostSilenceLimit(heartbeatTimeoutMs: 500) == 0.125)
        #expect(ProtocolTiming.clampedHeartbeatTimeoutMs(0) == 500)
        #expect(ProtocolTiming.clampedHeartbeatTimeoutMs(20) == 100)
        // The §3.1 table states the same numbers.
        for text in ["**250 ms**", "**1000 ms**", "**100 ms**", "every **150 ms**, **5** HELLOs, give up at **750 ms**", "**`T / 4`**"] {
            #expect(Self.spec.contains(text), "PROTOCOL.md §3.1 says \(text)")
        }
    }
}
