import Foundation
import Testing
import DockProtocol

@Test func crcCheckValueMatchesTheCatalogue() {
    #expect(CRC16.checksum(Array("123456789".utf8)) == 0x29B1)
}

@Test(arguments: [0, 1, 2, 253, 254, 255, 256, 508, 509])
func cobsRoundTripsAnyLength(length: Int) {
    var random = SplitMix(seed: UInt64(length))
    for zeros in [0.0, 0.1, 1.0] {
        let input = (0..<length).map { _ in random.unit() < zeros ? 0 : UInt8.random(in: 1...255, using: &random) }
        let encoded = COBS.encode(input)
        #expect(!encoded.contains(0))
        #expect(encoded.count <= input.count + input.count / 254 + 1)
        #expect(COBS.decode(encoded) == input)
    }
}

@Test func cobsRefusesACodePastTheEnd() {
    #expect(COBS.decode([0x05, 0x01, 0x02]) == nil)
}

@Test func everyMessageVectorDecodesAndEncodesByteExactly() throws {
    let vectors = try VectorFile.messages()
    #expect(vectors.count >= 18)
    var typesSeen = Set<MessageType>()
    for vector in vectors {
        var decoder = FrameDecoder()
        let results = decoder.feed(vector.bytes)
        guard results.count == 1, case .success(let decoded) = results[0] else {
            Issue.record("\(vector.name): decoder yielded \(results)")
            continue
        }
        typesSeen.insert(decoded.message.type)
        // Compare through bytes: NaN efforts make == on frames false by design.
        #expect(FrameEncoder.encode(decoded) == vector.bytes, "\(vector.name): decode → encode")
        let fromJSON = try VectorFile.frame(vector.frame)
        #expect(FrameEncoder.encode(fromJSON) == vector.bytes, "\(vector.name): JSON → encode")
    }
    #expect(typesSeen == Set(MessageType.allCases), "vectors cover every message type")
}

@Test func everyStreamVectorYieldsItsExpectationInAnyChunking() throws {
    let names = Dictionary(uniqueKeysWithValues: try VectorFile.messages().map { ($0.name, $0.bytes) })
    var random = SplitMix(seed: 7)
    for stream in try VectorFile.streams() {
        let expected = stream.expect.map { item -> String in
            if let name = item["frame"] { return "frame:" + names[name]!.map { String($0, radix: 16) }.joined() }
            return "error:" + item["error"]!
        }
        var chunkings: [[Int]] = [[stream.bytes.count], Array(repeating: 1, count: stream.bytes.count)]
        for _ in 0..<10 {
            var sizes: [Int] = [], left = stream.bytes.count
            while left > 0 { let n = Int.random(in: 1...max(1, min(left, 40)), using: &random); sizes.append(n); left -= n }
            chunkings.append(sizes)
        }
        for sizes in chunkings {
            var decoder = FrameDecoder()
            var got: [String] = []
            var offset = 0
            for size in sizes where size > 0 {
                for result in decoder.feed(stream.bytes[offset..<(offset + size)]) {
                    switch result {
                    case .success(let frame): got.append("frame:" + FrameEncoder.encode(frame).map { String($0, radix: 16) }.joined())
                    case .failure(let error): got.append("error:" + error.rawValue)
                    }
                }
                offset += size
            }
            #expect(got == expected, "\(stream.name) in chunks \(sizes.prefix(5))…")
            #expect(decoder.counters.totalErrors == expected.filter { $0.hasPrefix("error") }.count)
        }
    }
}

@Test func randomMessagesRoundTrip() {
    var random = SplitMix(seed: 42)
    var sequencer = FrameSequencer()
    var decoder = FrameDecoder()
    var sent: [Frame] = []
    var wire: [UInt8] = []
    for _ in 0..<2000 {
        let frame = sequencer.frame(randomMessage(&random), ackRequested: random.unit() < 0.5)
        sent.append(frame)
        wire += FrameEncoder.encode(frame)
    }
    let frames = decoder.feed(wire).compactMap { try? $0.get() }
    #expect(frames == sent)
    #expect(decoder.counters.sequenceGaps == 0)
}

@Test func decoderSurvivesGarbageAndStaysBounded() {
    var random = SplitMix(seed: 99)
    let good = FrameEncoder.encode(Frame(seq: 1, message: .heartbeat(uptimeMs: 5)))
    for _ in 0..<300 {
        var decoder = FrameDecoder()
        let garbage = (0..<Int.random(in: 0...2000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        _ = decoder.feed(garbage)
        // A delimiter ends whatever the garbage left behind; the next frame must come through.
        let results = decoder.feed([0] + good)
        #expect(results.last.flatMap { try? $0.get() } == Frame(seq: 1, message: .heartbeat(uptimeMs: 5)))
    }
}

@Test func sequenceGapsAreCounted() {
    var decoder = FrameDecoder()
    for seq: UInt16 in [10, 11, 14, 15] {
        _ = decoder.feed(FrameEncoder.encode(Frame(seq: seq, message: .stop)))
    }
    #expect(decoder.counters.sequenceGaps == 2)
    #expect(decoder.counters.frames == 4)
}

@Test func longStringsAreCutOnACharacterBoundary() throws {
    let host = "a" + String(repeating: "é", count: 40) + "z"  // 82 bytes, cut to 31: the 16th é does not fit
    let bytes = FrameEncoder.encode(Frame(seq: 0, message: .hello(Hello(heartbeatTimeoutMs: 0, host: host))))
    var decoder = FrameDecoder()
    guard case .success(let frame) = decoder.feed(bytes).first, case .hello(let hello) = frame.message else {
        Issue.record("no hello"); return
    }
    #expect(hello.host == "a" + String(repeating: "é", count: 15))
}

/// Inputs FrameDecoderFuzz found (Fuzz/known/FrameDecoderFuzz/): each decodes without a frame that
/// cannot be encoded again.
@Test func knownFuzzFindingsStayFixed() throws {
    let directory = VectorFile.directory.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/known/FrameDecoderFuzz")
    let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    #expect(!files.isEmpty)
    for name in files {
        let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
        var decoder = FrameDecoder()
        for case .success(let frame) in decoder.feed(bytes) {
            // Would stop the process on the payload precondition if the decoder let it through.
            #expect(FrameEncoder.encode(frame).count <= 259, "\(name)")
        }
        #expect(decoder.counters.errors[.malformed, default: 0] >= 1, "\(name) is refused as malformed")
    }
}

@Test func aZoomAxisTravelsAsAxis3AfterRollAndAFifthAxisIsMalformed() throws {
    let zoom = AxisCapability(axis: .zoom, continuous: false, min: 1, max: 20, maxSpeed: 4, maxAccel: 16, countsPerRev: 0)
    let angles = [Axis.yaw, .pitch, .roll].map { AxisCapability(axis: $0, continuous: false, min: -1, max: 1, maxSpeed: 2, maxAccel: 8, countsPerRev: 4096) }
    let capabilities = Frame(seq: 1, message: .capabilities(Capabilities(feedbackHz: 100, imuHz: 0, features: [], buttons: [], customButtons: 0,
                                                                          axes: angles + [zoom], batteries: [])))
    var decoder = FrameDecoder()
    #expect(try decoder.feed(FrameEncoder.encode(capabilities)).map { try $0.get() } == [capabilities])

    let velocity = FrameEncoder.encode(Frame(seq: 2, message: .velocity([AxisValue(.zoom, 0.5), AxisValue(.yaw, 1)])))
    guard case .velocity(let values) = try decoder.feed(velocity).first?.get().message else { Issue.record("no velocity"); return }
    #expect(values.map(\.axis) == [.yaw, .zoom])
    #expect(AxisMask(rawValue: 0b1111_1000).axes == [.zoom], "bits above zoom are ignored")

    let five = Frame(seq: 3, message: .capabilities(Capabilities(feedbackHz: 100, imuHz: 0, features: [], buttons: [], customButtons: 0,
                                                                  axes: angles + [zoom, zoom], batteries: [])))
    let results = decoder.feed(FrameEncoder.encode(five))
    #expect(results.count == 1 && (try? results[0].get()) == nil, "five axes are malformed")
}

@Test func aRepeatedAxisGoesOnTheWireOnceWithItsFirstValue() throws {
    var decoder = FrameDecoder()
    let velocity = FrameEncoder.encode(Frame(seq: 1, message: .velocity([AxisValue(.pitch, 0.25), AxisValue(.yaw, 1),
                                                                          AxisValue(.pitch, -2), AxisValue(.yaw, 3)])))
    guard case .velocity(let values) = try decoder.feed(velocity).first?.get().message else { Issue.record("no velocity"); return }
    #expect(values == [AxisValue(.yaw, 1), AxisValue(.pitch, 0.25)])
}
