@testable import DockDrivers
import FuzzDriverChecks
import FuzzSupport
import DockProtocol
import Glibc

// libFuzzer target for what decodes a MAVLink gimbal's bytes (Sources/DockDrivers/MAVLink): the
// v1/v2 frame parser with CRC_EXTRA (MAVLinkDecoder), the payload readers of the messages the
// driver reads, and MAVLinkGimbalDriver.receive on top of them. Built by Fuzz/run.sh through
// SwiftPM (Package.swift, DOCKD_FUZZ=1) against DockDrivers, FuzzSupport and FuzzDriverChecks.
//
// Input: byte 0 picks the chunking (Chunking.swift); bytes 1... are what the gimbal sends.

func violation(_ what: String) -> Never {
    fatalError("MAVLinkFuzz invariant violated: \(what)")
}

/// CRC_EXTRA of the common dialect's messages the codec knows (the MAVLink XML, as pymavlink
/// 2.4.50 computes it), kept apart from MAVLink.ID so a wrong constant there shows up here.
let crcExtra: [UInt32: UInt8] = [0: 50, 76: 152, 77: 143, 283: 74, 284: 99, 285: 137]

/// Bitwise CRC-16/MCRF4XX (MAVLink's "X.25"), independent of MAVLink.crc.
func referenceCRC(_ bytes: some Sequence<UInt8>) -> UInt16 {
    var crc: UInt16 = 0xFFFF
    for byte in bytes {
        crc ^= UInt16(byte)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x8408 : crc >> 1 }
    }
    return crc
}

/// What the decoder must make of a whole stream, from the MAVLink framing rules: a frame starts at
/// 0xFD (v2, 10-byte header, 13 more bytes when signed) or 0xFE (v1, 6-byte header); frames of
/// known messages must carry the right CRC (else a crc error and a search from the next byte);
/// a run of bytes before a start byte is one malformed error.
enum Event: Equatable {
    case frame(Range<Int>, header: Int)
    case crc
    case malformed
}

func framingModel(_ stream: ArraySlice<UInt8>) -> (events: [Event], pending: Int) {
    var events: [Event] = []
    var i = stream.startIndex
    while i < stream.endIndex {
        let start = stream[i]
        guard start == 0xFD || start == 0xFE else {
            if events.last != .malformed { events.append(.malformed) }
            i += 1
            continue
        }
        let v2 = start == 0xFD
        let header = v2 ? 10 : 6
        guard stream.endIndex - i >= header else { break }
        let length = Int(stream[i + 1])
        let signature = v2 && stream[i + 2] & 1 != 0 ? 13 : 0
        let total = header + length + 2 + signature
        guard stream.endIndex - i >= total else { break }
        let id = v2 ? UInt32(stream[i + 7]) | UInt32(stream[i + 8]) << 8 | UInt32(stream[i + 9]) << 16 : UInt32(stream[i + 5])
        let crcAt = i + header + length
        if let extra = crcExtra[id],
           referenceCRC(stream[(i + 1)..<crcAt] + [extra]) != UInt16(stream[crcAt]) | UInt16(stream[crcAt + 1]) << 8 {
            events.append(.crc)
            i += 1
            continue
        }
        events.append(.frame(i..<(i + total), header: header))
        i += total
    }
    return (events, stream.endIndex - i)
}

/// The decoder's receive buffer, read through reflection.
func buffered(_ decoder: MAVLinkDecoder) -> [UInt8] {
    guard let buffer = Mirror(reflecting: decoder).descendant("buffer") as? [UInt8] else {
        violation("MAVLinkDecoder has no [UInt8] 'buffer' to inspect")
    }
    return buffer
}

/// The largest frame (signed v2, 255-byte payload) less one byte: what may wait for more input.
let maxPending = 10 + 255 + 2 + 13 - 1

/// MAVLink 2 drops trailing zero bytes of a payload (MAVLink.encode keeps at least one byte).
func truncated(_ payload: [UInt8]) -> [UInt8] {
    var body = payload
    while body.count > 1, body.last == 0 { body.removeLast() }
    return body
}

/// `payload` cut or zero-extended to a message's full length, as a reader sees it.
func fitted(_ payload: [UInt8], _ length: Int) -> [UInt8] {
    Array(payload.prefix(length)) + [UInt8](repeating: 0, count: max(0, length - payload.count))
}

/// A frame of a known message encodes again (as MAVLink 2) to a frame that decodes to the same
/// header and the truncated payload; an unsigned v2 frame without flags and with its payload
/// already truncated encodes to exactly the bytes it came from.
func checkReencode(_ frame: MAVLink.Frame, wire: ArraySlice<UInt8>) {
    guard let id = MAVLink.ID(rawValue: frame.messageID) else { return }
    let encoded = MAVLink.encode(id, payload: frame.payload, sequence: frame.sequence, systemID: frame.systemID,
                                 componentID: frame.componentID)
    var decoder = MAVLinkDecoder()
    var expected = frame
    expected.payload = truncated(frame.payload)
    let again = decoder.feed(encoded)
    guard again.count == 1, case .success(let decoded) = again[0], decoded == expected else {
        violation("\(frame) encodes to \(encoded), which decodes to \(again)")
    }
    let v2 = wire.first == MAVLink.stxV2
    if v2, wire[wire.startIndex + 2] == 0, wire[wire.startIndex + 3] == 0, frame.payload == expected.payload, Array(wire) != encoded {
        violation("\(Array(wire)) decodes to \(frame), which encodes to \(encoded)")
    }
}

/// The payload readers take any payload; the two messages we also write read back to the same bytes.
func checkPayload(_ frame: MAVLink.Frame) {
    let payload = frame.payload
    switch MAVLink.ID(rawValue: frame.messageID) {
    case .heartbeat:
        if MAVHeartbeat(payload: payload).payload != fitted(payload, 9) { violation("HEARTBEAT \(payload) does not read back") }
    case .gimbalDeviceSetAttitude:
        if MAVGimbalDeviceSetAttitude(payload: payload).payload != fitted(payload, 32) {
            violation("GIMBAL_DEVICE_SET_ATTITUDE \(payload) does not read back")
        }
    case .gimbalDeviceInformation:
        let info = MAVGimbalDeviceInformation(payload: payload)
        for name in [info.vendorName, info.modelName, info.customName]
        where name.unicodeScalars.count > 32 || name.unicodeScalars.contains("\0") {
            violation("GIMBAL_DEVICE_INFORMATION name \(name.debugDescription) from 32 bytes")
        }
    case .gimbalDeviceAttitudeStatus:
        _ = MAVGimbalDeviceAttitudeStatus(payload: payload)
    case .commandLong, .commandAck, nil:
        break
    }
}

/// Feeds the decoder in chunks and checks it against the model; returns the frames.
func checkDecoder(_ stream: ArraySlice<UInt8>, control: UInt8) -> Int {
    var decoder = MAVLinkDecoder()
    var outputs: [Result<MAVLink.Frame, FrameError>] = []
    forEachChunk(of: stream, control: control) { chunk in
        for output in decoder.feed(Array(chunk)) {
            // A run of garbage split across reads is one error per read: compare runs.
            if case .failure(.malformed) = output, case .failure(.malformed)? = outputs.last { continue }
            outputs.append(output)
        }
        if buffered(decoder).count > maxPending { violation("decoder buffers \(buffered(decoder).count) bytes") }
    }
    let (events, pending) = framingModel(stream)
    if buffered(decoder) != Array(stream.suffix(pending)) {
        violation("decoder keeps \(buffered(decoder)), the model the last \(pending) bytes")
    }
    guard outputs.count == events.count else { violation("decoder gives \(outputs), the model \(events)") }
    var frames = 0
    for (output, event) in zip(outputs, events) {
        switch (output, event) {
        case (.failure(.crc), .crc), (.failure(.malformed), .malformed):
            break
        case (.success(let frame), .frame(let range, let header)):
            frames += 1
            let wire = stream[range]
            let v2 = header == 10, at = range.lowerBound
            let expected = MAVLink.Frame(
                sequence: stream[at + (v2 ? 4 : 2)], systemID: stream[at + (v2 ? 5 : 3)], componentID: stream[at + (v2 ? 6 : 4)],
                messageID: v2 ? UInt32(stream[at + 7]) | UInt32(stream[at + 8]) << 8 | UInt32(stream[at + 9]) << 16 : UInt32(stream[at + 5]),
                payload: Array(stream[(at + header)..<(at + header + Int(stream[at + 1]))]))
            if frame != expected { violation("decoder gives \(frame) for \(Array(wire)), expected \(expected)") }
            checkReencode(frame, wire: wire)
            checkPayload(frame)
        default:
            violation("decoder gives \(output) where the model has \(event)")
        }
    }
    return frames
}

/// Whatever the driver sends is whole, valid MAVLink frames of messages it knows.
func checkSent(_ bytes: [UInt8]) {
    var decoder = MAVLinkDecoder()
    for output in decoder.feed(bytes) {
        guard case .success(let frame) = output, MAVLink.ID(rawValue: frame.messageID) != nil else {
            violation("driver sent \(bytes): \(output)")
        }
    }
    if !buffered(decoder).isEmpty { violation("driver sent an incomplete frame: \(bytes)") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMAVLink(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 1 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let control = input[0]
    let stream = input[1...]

    let frames = checkDecoder(stream, control: control)
    var driver = MAVLinkGimbalDriver()
    exercise(&driver, stream: stream, control: control, frames: frames, checkSent: checkSent)
    return 0
}
