@testable import DockDrivers
import FuzzDriverChecks
import FuzzSupport
import DockProtocol
import Glibc

// libFuzzer target for what decodes a VISCA camera's bytes (Sources/DockDrivers/VISCA): the serial
// framing (VISCAStreamDecoder), reply classification, the VISCA-over-IP header, position nibbles,
// and VISCADriver.receive on top of them. Built by Fuzz/run.sh through SwiftPM
// (Package.swift, DOCKD_FUZZ=1) against DockDrivers, FuzzSupport and FuzzDriverChecks.
//
// Input: byte 0 picks the chunking (Chunking.swift); byte 1 the driver's setup (bits 0-1 transport,
// bit 2 the profile, bits 3-5 the camera address); bytes 2... are what the camera sends.

func violation(_ what: String) -> Never {
    fatalError("VISCAFuzz invariant violated: \(what)")
}

/// The repository's profiles (Fuzz/run.sh points DOCKD_VISCA_PROFILES at profiles/visca): the
/// first has 4 pan nibbles, the second 5.
let profiles: [VISCAProfile] = {
    do {
        return [try VISCAProfile.load("generic-ptzoptics"), try VISCAProfile.load("sony-brc-h700")]
    } catch {
        fatalError("VISCAFuzz: \(error) (set DOCKD_VISCA_PROFILES to the repository's profiles/visca)")
    }
}()

/// What a VISCA byte stream holds, read from the framing rules in VISCAFraming.swift and nothing
/// else: a message starts at a byte 0x80...0xFE, ends at the next 0xFF and is 3 to 16 bytes long.
enum Framed: Equatable {
    case message(Range<Int>)
    case failure(FrameError)
}

func framingModel(_ stream: ArraySlice<UInt8>) -> [Framed] {
    var out: [Framed] = []
    var start: Int?
    for i in stream.indices {
        let byte = stream[i]
        guard let first = start else {
            if byte == VISCA.terminator { out.append(.failure(.truncated)) }  // a terminator alone
            else if byte & 0x80 == 0 { out.append(.failure(.malformed)) }     // cannot start a message
            else { start = i }
            continue
        }
        let length = i - first + 1
        if byte == VISCA.terminator {
            out.append(length < 3 ? .failure(.truncated) : .message(first..<(i + 1)))
            start = nil
        } else if length == VISCA.maxMessage {
            out.append(.failure(.oversize))
            start = nil
        }
    }
    return out
}

/// The decoder's receive buffer, read through reflection: it must stay below one message.
func buffered(_ decoder: VISCAStreamDecoder) -> [UInt8] {
    guard let buffer = Mirror(reflecting: decoder).descendant("buffer") as? [UInt8] else {
        violation("VISCAStreamDecoder has no [UInt8] 'buffer' to inspect")
    }
    return buffer
}

func checkStreamDecoder(_ stream: ArraySlice<UInt8>, control: UInt8) -> [[UInt8]] {
    var decoder = VISCAStreamDecoder()
    var outputs: [Result<[UInt8], FrameError>] = []
    forEachChunk(of: stream, control: control) { chunk in
        outputs += decoder.feed(Array(chunk))
        if buffered(decoder).count >= VISCA.maxMessage { violation("decoder buffers \(buffered(decoder).count) bytes") }
    }
    let model = framingModel(stream)
    let expected: [Result<[UInt8], FrameError>] = model.map {
        switch $0 {
        case .message(let range): .success(Array(stream[range]))
        case .failure(let error): .failure(error)
        }
    }
    if outputs != expected { violation("decoder gives \(outputs), the framing rules \(expected)") }
    return outputs.compactMap { try? $0.get() }
}

/// A classified reply, written back, is the message it came from.
func checkClassify(_ message: [UInt8]) {
    let header = message[0]
    let rebuilt: [UInt8]
    switch VISCA.classify(message) {
    case .addressSet(let next): rebuilt = [0x88, 0x30, message[2] & 0xF0 | next, 0xFF]
    case .ack(let socket): rebuilt = [header, 0x40 | socket, 0xFF]
    case .completion(let socket, let data): rebuilt = [header, 0x50 | socket] + data + [0xFF]
    case .error(let socket, let code): rebuilt = [header, 0x60 | socket, code, 0xFF]
    case .other(let bytes): rebuilt = bytes
    }
    if rebuilt != message { violation("classify(\(message)) = \(VISCA.classify(message)), which is \(rebuilt)") }
}

/// Every packet VISCAOverIP.unwrap finds wraps back to the bytes it came from; what is left over is
/// a header it must not trust (short, longer than a VISCA message, or longer than what is there).
func checkUnwrap(_ stream: ArraySlice<UInt8>) {
    let bytes = Array(stream)
    let (packets, garbage) = VISCAOverIP.unwrap(bytes)
    guard (0...bytes.count).contains(garbage) else { violation("unwrap: \(garbage) garbage bytes of \(bytes.count)") }
    let consumed = bytes.count - garbage
    let rewrapped = packets.flatMap { VISCAOverIP.wrap($0.payload, type: $0.type, sequence: $0.sequence) }
    if rewrapped != Array(bytes[..<consumed]) { violation("unwrapped packets \(packets) do not wrap back to \(bytes[..<consumed])") }
    for packet in packets where packet.payload.count > VISCA.maxMessage { violation("unwrap: a \(packet.payload.count)-byte payload") }
    if garbage > 0 {
        let rest = bytes[consumed...]
        if rest.count >= 8 {
            let length = Int(rest[consumed + 2]) << 8 | Int(rest[consumed + 3])
            if length <= VISCA.maxMessage && rest.count - 8 >= length { violation("unwrap left a whole packet as garbage: \(rest)") }
        }
    }
}

/// Positions are nibbles of two's complement: reading and writing them back is the identity.
func checkNibbles(_ stream: ArraySlice<UInt8>) {
    for count in 1...min(8, stream.count) {  // up to 8: VISCA.nibbles packs into 32 bits
        let digits = stream.prefix(count)
        let value = VISCA.signedValue(digits)
        let half = 1 << (4 * count - 1)
        if !(-half..<half).contains(value) { violation("\(count) nibbles read as \(value)") }
        if VISCA.nibbles(value, count: count) != digits.map({ $0 & 0x0F }) {
            violation("\(digits) read as \(value), written as \(VISCA.nibbles(value, count: count))")
        }
    }
}

/// Whatever the driver sends is whole VISCA messages (inside VISCA-over-IP packets on `.ip`).
func checkSent(_ bytes: [UInt8], transport: VISCADriver.Transport) {
    var messages = bytes
    if transport == .ip {
        let (packets, garbage) = VISCAOverIP.unwrap(bytes)
        if garbage != 0 { violation("driver sent a broken VISCA-over-IP packet: \(bytes)") }
        messages = packets.filter { $0.type != VISCAOverIP.PayloadType.controlCommand.rawValue }.flatMap(\.payload)
    }
    var decoder = VISCAStreamDecoder()
    for output in decoder.feed(messages) {
        if case .failure(let error) = output { violation("driver sent \(bytes): \(error)") }
    }
    if !buffered(decoder).isEmpty { violation("driver sent an unterminated message: \(bytes)") }
}

/// The frames VISCADriver must count: VISCA messages, plus control replies on `.ip`.
func framesIn(_ stream: ArraySlice<UInt8>, control: UInt8, transport: VISCADriver.Transport) -> Int {
    var decoder = VISCAStreamDecoder()
    var frames = 0
    forEachChunk(of: stream, control: control) { chunk in
        var payloads = [Array(chunk)]
        if transport == .ip {
            let packets = VISCAOverIP.unwrap(Array(chunk)).packets
            frames += packets.filter { $0.type == VISCAOverIP.PayloadType.controlReply.rawValue }.count
            payloads = packets.filter { $0.type != VISCAOverIP.PayloadType.controlReply.rawValue }.map(\.payload)
        }
        for payload in payloads {
            frames += decoder.feed(payload).filter { if case .success = $0 { true } else { false } }.count
        }
    }
    return frames
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVISCA(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 2 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let control = input[0], setup = input[1]
    let stream = input[2...]

    for message in checkStreamDecoder(stream, control: control) { checkClassify(message) }
    for length in 0...min(VISCA.maxMessage, stream.count) { _ = VISCA.classify(Array(stream.prefix(length))) }  // unframed input too
    checkUnwrap(stream)
    checkNibbles(stream)

    let transport: VISCADriver.Transport = [.serial, .ip, .raw, .tcp][Int(setup & 3)]
    var driver = VISCADriver(profile: profiles[Int(setup >> 2) & 1], address: 1 + (setup >> 3) % 7, transport: transport)
    exercise(&driver, stream: stream, control: control, frames: framesIn(stream, control: control, transport: transport)) {
        checkSent($0, transport: transport)
    }
    return 0
}
