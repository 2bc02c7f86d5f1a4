@testable import DockProtocol
import FuzzSupport
// libFuzzer target for the streaming FrameDecoder (PROTOCOL.md §1).
// Built by Fuzz/run.sh through SwiftPM (Package.swift, DOCKD_FUZZ=1) against DockProtocol and FuzzSupport.
//
// Input layout: byte 0 chooses how the rest is chunked and which feed API is used; bytes 1... are
// the wire stream. Every invariant violation calls `violation`, which traps (libFuzzer saves the input).

import Glibc

func violation(_ what: String, _ file: StaticString = #file, _ line: UInt = #line) -> Never {
    fatalError("FrameDecoderFuzz invariant violated: \(what)", file: file, line: line)
}

/// What the spec says the framing layer does with a stream, independent of FrameDecoder:
/// per output, the index of the byte that triggers it and either the buffered bytes or "oversize".
enum Expected {
    case oversize(at: Int)
    case buffered(at: Int, bytes: Range<Int>)
}

func framingModel(_ stream: ArraySlice<UInt8>) -> [Expected] {
    var out: [Expected] = []
    var start = stream.startIndex  // the buffer is always the run stream[start..<i]
    var discarding = false
    for i in stream.indices {
        let byte = stream[i]
        if discarding { if byte == 0 { discarding = false; start = i + 1 }; continue }
        if byte != 0 {
            if i - start == 258 {  // 258 = COBS(256-byte packet), PROTOCOL.md §1
                discarding = true; out.append(.oversize(at: i))
            }
            continue
        }
        if i > start { out.append(.buffered(at: i, bytes: start..<i)) }
        start = i + 1
    }
    return out
}

/// Independent COBS decoder (plain reading of PROTOCOL.md §1), used to check the error class.
/// Writes into a buffer reused across runs (the fuzzer is single-threaded).
nonisolated(unsafe) var scratch: [UInt8] = { var a = [UInt8](); a.reserveCapacity(512); return a }()

func referenceCOBSDecode(_ input: ArraySlice<UInt8>) -> Bool {
    scratch.removeAll(keepingCapacity: true)
    var i = input.startIndex
    while i < input.endIndex {
        let code = Int(input[i])
        if code == 0 || i + code > input.endIndex { return false }
        for j in (i + 1)..<(i + code) { scratch.append(input[j]) }
        i += code
        if code != 255 && i < input.endIndex { scratch.append(0) }
    }
    return true
}

/// Bitwise CRC-16/CCITT-FALSE, independent of the table in CRC16.swift.
func referenceCRC(_ bytes: ArraySlice<UInt8>) -> UInt16 {
    var crc: UInt16 = 0xFFFF
    for b in bytes {
        crc ^= UInt16(b) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
    }
    return crc
}

/// The error class the spec assigns to a buffered run, or nil when it reaches message decoding
/// (then the outcome is a frame, unknown_type or malformed).
func expectedFailure(_ buffered: ArraySlice<UInt8>) -> FrameError? {
    guard referenceCOBSDecode(buffered) else { return .cobs }
    let packet = scratch
    if packet.count < 6 { return .truncated }
    let crc = UInt16(packet[packet.count - 2]) | UInt16(packet[packet.count - 1]) << 8
    if referenceCRC(packet[0..<(packet.count - 2)]) != crc { return .crc }
    if MessageType(rawValue: packet[0]) == nil { return .unknownType }
    return nil
}

/// Same output; frames compare by their encoding when == fails (NaN != NaN).
func same(_ a: FrameDecoder.Output, _ b: FrameDecoder.Output) -> Bool {
    switch (a, b) {
    case (.success(let x), .success(let y)): return x == y || FrameEncoder.encode(x) == FrameEncoder.encode(y)
    case (.failure(let x), .failure(let y)): return x == y
    default: return false
    }
}

/// Feeds `stream` in the chunking chosen by `control`, recording which byte index each output came at.
func run(_ stream: ArraySlice<UInt8>, control: UInt8) -> (outputs: [FrameDecoder.Output], positions: [Int], decoder: FrameDecoder) {
    var decoder = FrameDecoder()
    var outputs: [FrameDecoder.Output] = []
    var positions: [Int] = []
    let useArrayAPI = control & 0x80 != 0 && control & 3 != 1
    forEachChunk(of: stream, control: control) { chunk in
        // Only a one-byte chunk fed through the closure API pins an output to its byte.
        let position = chunk.count == 1 && !useArrayAPI ? chunk.startIndex : -1
        if useArrayAPI {
            let got = decoder.feed(chunk)
            outputs += got
            positions += Array(repeating: -1, count: got.count)
        } else {
            decoder.feed(chunk) { outputs.append($0); positions.append(position) }
        }
    }
    return (outputs, positions, decoder)
}

/// Every decoded frame re-encodes to a valid wire frame, which decodes back to a frame that
/// re-encodes to the same bytes (bytes, not ==, because NaN != NaN).
///
/// KNOWN-1 (found here, fixed in the spec and both decoders): CAPABILITIES with more than 3 axes or
/// 4 batteries is malformed, so no decodable frame exceeds the 250-byte payload again.
func checkRoundTrip(_ frame: Frame) {
    var payload = ByteWriter()
    frame.message.encodePayload(into: &payload)
    if payload.bytes.count > FrameLimits.maxPayload {
        violation("decoded frame has a \(payload.bytes.count)-byte payload: FrameEncoder cannot encode it")
    }
    let wire = FrameEncoder.encode(frame)
    guard wire.count >= 2, wire.last == 0 else { violation("encoded frame does not end in one 0x00") }
    if wire.dropLast().contains(0) { violation("encoded frame contains 0x00 before its delimiter") }
    if wire.count > 259 { violation("encoded frame is \(wire.count) bytes, more than 259") }
    var decoder = FrameDecoder()
    let again = decoder.feed(wire)
    guard again.count == 1, case .success(let frame2) = again[0] else {
        violation("re-encoded frame \(wire) decodes to \(again)")
    }
    if frame2.seq != frame.seq || frame2.ackRequested != frame.ackRequested || frame2.message.type != frame.message.type {
        violation("header changed on round trip: \(frame) -> \(frame2)")
    }
    let wire2 = FrameEncoder.encode(frame2)
    if wire2 != wire { violation("round trip changed the bytes: \(wire) -> \(wire2)") }
    if decoder.counters.frames != 1 || decoder.counters.totalErrors != 0 || decoder.counters.bytes != wire.count {
        violation("counters after a clean frame: \(decoder.counters)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrameDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let control = input[0]
    let stream = input[1...]

    let (outputs, positions, decoder) = run(stream, control: control)

    // 1. Never more outputs than delimiters; the only output without its own delimiter is an
    //    oversize error whose run has not been closed yet (at most one, at the end).
    let delimiters = stream.lazy.filter { $0 == 0 }.count
    if outputs.count > delimiters + 1 { violation("\(outputs.count) outputs for \(delimiters) delimiters") }

    // 2. Exactly the outputs the spec's framing model predicts, in order, at the predicted bytes.
    let model = framingModel(stream)
    if model.count != outputs.count { violation("\(outputs.count) outputs, model expects \(model.count)") }
    if model.count > delimiters + 1 { violation("model itself exceeds delimiters + 1") }
    for (k, expected) in model.enumerated() {
        let got = outputs[k]
        switch expected {
        case .oversize(let at):
            guard case .failure(.oversize) = got else { violation("output \(k): expected oversize, got \(got)") }
            if positions[k] >= 0 && positions[k] != at { violation("oversize at \(positions[k]), expected \(at)") }
        case .buffered(let at, let bytes):
            if positions[k] >= 0 && positions[k] != at { violation("output at \(positions[k]), expected \(at)") }
            if bytes.count > 258 { violation("model buffered \(bytes.count) bytes") }
            let expectedError = expectedFailure(stream[bytes])
            switch (expectedError, got) {
            case (let e?, .failure(let g)) where e == g: break
            case (nil, .success): break
            case (nil, .failure(.malformed)): break
            default: violation("output \(k) for \(stream[bytes]): expected \(String(describing: expectedError)), got \(got)")
            }
        }
    }

    // 3. Counters agree with what was yielded.
    var failures = 0, frames = 0
    var byKind = [Int](repeating: 0, count: FrameError.allCases.count)
    for output in outputs {
        switch output {
        case .success(let frame): frames += 1; checkRoundTrip(frame)
        case .failure(let error): failures += 1; byKind[FrameError.allCases.firstIndex(of: error)!] += 1
        }
    }
    let counters = decoder.counters
    if counters.totalErrors != failures { violation("totalErrors \(counters.totalErrors) != \(failures) failures yielded") }
    for (k, kind) in FrameError.allCases.enumerated() where counters.errors[kind, default: 0] != byKind[k] {
        violation("errors[\(kind)] \(counters.errors[kind, default: 0]) != \(byKind[k]) yielded")
    }
    if counters.frames != frames { violation("counters.frames \(counters.frames) != \(frames) frames yielded") }
    if counters.bytes != stream.count { violation("counters.bytes \(counters.bytes) != \(stream.count)") }
    if counters.sequenceGaps < 0 { violation("negative sequence gaps") }

    // 4. Chunking does not matter: a whole-stream feed gives the same outputs (checked on a
    //    quarter of the inputs; step 2 already pins every error to the spec for all of them).
    if control & 3 != 0 && control & 0x60 == 0x60 {
        var whole = FrameDecoder()
        let reference = whole.feed(stream)
        if reference.count != outputs.count || !zip(reference, outputs).allSatisfy(same) { violation("outputs depend on chunking") }
        if whole.counters != counters { violation("counters depend on chunking: \(whole.counters) vs \(counters)") }
    }

    // 5. The events API (what a receiver NACKs from) yields the same outputs, and keeps a header
    //    exactly for frames whose CRC checked: an unknown type, or a known type with a bad payload.
    var detailed = FrameDecoder()
    let events = detailed.events(Array(stream))
    if events.count != outputs.count || !zip(events.map(\.result), outputs).allSatisfy(same) {
        violation("events() and feed() disagree")
    }
    for event in events {
        switch event {
        case .unusable(let header, .unknownType) where MessageType(rawValue: header.type) == nil: break
        case .unusable(let header, .malformed) where MessageType(rawValue: header.type) != nil: break
        case .unusable(let header, let error): violation("unusable \(error) with header type \(header.type)")
        case .broken(let error) where error == .unknownType || error == .malformed: violation("\(error) without its header")
        case .broken, .frame: break
        }
    }
    return 0
}
