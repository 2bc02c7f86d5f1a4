import DockIO
import NIOCore
import Testing

/// The API's line splitter, fed the way NIO feeds it: whatever arrived is appended and `decode` is
/// called until it returns nil.
private struct Feeder {
    var decoder: LineFrameDecoder
    var buffer = ByteBuffer()
    var out: [ClientLine] = []
    /// The most the buffer held after a feed: a long line must not pile up.
    var peak = 0

    init(maximumLength: Int) { decoder = LineFrameDecoder(maximumLength: maximumLength) }

    mutating func feed(_ bytes: [UInt8]) throws {
        buffer.writeBytes(bytes)
        while let line = try decoder.decode(buffer: &buffer) { out.append(line) }
        buffer.discardReadBytes()
        peak = max(peak, buffer.readableBytes)
    }

    var lines: [String] {
        out.map { if case .line(let b) = $0 { String(buffer: b) } else { "<oversize>" } }
    }
}

@Suite("LineFrameDecoder")
struct LineFrameDecoderTests {
    @Test("lines survive any chunking", arguments: [1, 2, 3, 7, 64])
    func chunking(size: Int) throws {
        let text = Array("{\"a\":1}\n\n{\"b\":[2,3]}\nlast\n".utf8)
        var f = Feeder(maximumLength: 100)
        for start in stride(from: 0, to: text.count, by: size) { try f.feed(Array(text[start..<min(text.count, start + size)])) }
        #expect(f.lines == ["{\"a\":1}", "", "{\"b\":[2,3]}", "last"])
        #expect(f.buffer.readableBytes == 0)
    }

    @Test func theLimitIsInclusive() throws {
        var f = Feeder(maximumLength: 8)
        try f.feed(Array("12345678\n123456789\nok\n".utf8))
        #expect(f.lines == ["12345678", "<oversize>", "ok"])
        #expect(f.out[1] == .oversize(bytes: 10))
    }

    @Test func aTenMegabyteLineIsCountedDroppedAndNeverBuffered() throws {
        let limit = 1 << 20
        var f = Feeder(maximumLength: limit)
        try f.feed(Array("before\n".utf8))
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 65536)
        for _ in 0..<160 { try f.feed(chunk) }  // 10 MiB, no newline yet
        try f.feed(Array("tail\nafter\n".utf8))
        #expect(f.lines == ["before", "<oversize>", "after"])
        #expect(f.out[1] == .oversize(bytes: 160 * 65536 + 5))
        #expect(f.peak <= limit + chunk.count, "held \(f.peak) bytes")
    }

    @Test func aLongLineUnderTheLimitArrivingInPiecesIsWhole() throws {
        var f = Feeder(maximumLength: 1 << 20)
        let body = [UInt8](repeating: UInt8(ascii: "y"), count: 900_000)
        for start in stride(from: 0, to: body.count, by: 4096) { try f.feed(Array(body[start..<min(body.count, start + 4096)])) }
        try f.feed([UInt8(ascii: "\n")])
        #expect(f.out.count == 1)
        if case .line(let line) = f.out.first { #expect(line.readableBytes == 900_000) } else { Issue.record("expected a line") }
    }

    @Test func atTheEndALastLineWithoutItsNewlineIsStillALine() throws {
        var f = Feeder(maximumLength: 8)
        try f.feed(Array("one\ntwo".utf8))
        #expect(f.lines == ["one"])
        #expect(try f.decoder.decodeLast(buffer: &f.buffer, seenEOF: true) == .line(ByteBuffer(string: "two")))
        #expect(try f.decoder.decodeLast(buffer: &f.buffer, seenEOF: true) == nil)
        var long = Feeder(maximumLength: 8)
        try long.feed(Array("123456789012".utf8))
        #expect(try long.decoder.decodeLast(buffer: &long.buffer, seenEOF: true) == .oversize(bytes: 12))
    }
}
