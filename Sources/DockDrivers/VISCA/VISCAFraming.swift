import DockProtocol

/// VISCA message framing: `8x … FF` from the controller (x = camera address 1–7, 8 = broadcast),
/// `z0 … FF` from the camera (z = address + 8). A message is 3 to 16 bytes and the terminator
/// 0xFF never appears inside it.
public enum VISCA {
    public static let terminator: UInt8 = 0xFF
    public static let maxMessage = 16

    /// A reply from a camera, classified.
    public enum Reply: Equatable, Sendable {
        /// Address-set reply (`88 30 0w FF`): w = the next free address in the daisy chain.
        case addressSet(next: UInt8)
        case ack(socket: UInt8)
        /// Completion; `data` is empty for commands and holds the answer for inquiries.
        case completion(socket: UInt8, data: [UInt8])
        case error(socket: UInt8, code: UInt8)
        /// Anything else that was well framed (network change `z0 38 FF`, broadcast IF_Clear echo…).
        case other([UInt8])
    }

    /// Classifies one framed reply.
    public static func classify(_ message: [UInt8]) -> Reply {
        guard message.count >= 3, message.last == terminator else { return .other(message) }
        if message[0] == 0x88 {
            if message.count == 4, message[1] == 0x30 { return .addressSet(next: message[2] & 0x0F) }
            return .other(message)
        }
        let kind = message[1] & 0xF0, socket = message[1] & 0x0F
        switch kind {
        case 0x40 where message.count == 3: return .ack(socket: socket)
        case 0x50: return .completion(socket: socket, data: Array(message[2..<(message.count - 1)]))
        case 0x60 where message.count == 4: return .error(socket: socket, code: message[2])
        default: return .other(message)
        }
    }

    public static func errorText(_ code: UInt8) -> String {
        switch code {
        case 0x01: "message length error"
        case 0x02: "syntax error"
        case 0x03: "command buffer full"
        case 0x04: "command cancelled"
        case 0x05: "no socket"
        case 0x41: "command not executable"
        default: "error 0x" + String(code, radix: 16)
        }
    }

    // MARK: Commands (x = address)

    public static func addressSet() -> [UInt8] { [0x88, 0x30, 0x01, 0xFF] }
    public static func ifClear(address: UInt8) -> [UInt8] { [0x80 | address, 0x01, 0x00, 0x01, 0xFF] }
    public static func positionInquiry(address: UInt8) -> [UInt8] { [0x80 | address, 0x09, 0x06, 0x12, 0xFF] }
    public static func home(address: UInt8) -> [UInt8] { [0x80 | address, 0x01, 0x06, 0x04, 0xFF] }
    public static func cancel(address: UInt8, socket: UInt8) -> [UInt8] { [0x80 | address, 0x20 | socket, 0xFF] }

    /// Pan-tiltDrive. `pan`/`tilt` direction: -1 left/down, +1 right/up, 0 stop (VISCA's 01 = left
    /// and up, 02 = right and down, 03 = stop).
    public static func drive(address: UInt8, panSpeed: UInt8, tiltSpeed: UInt8, pan: Int, tilt: Int) -> [UInt8] {
        let p: UInt8 = pan < 0 ? 0x01 : pan > 0 ? 0x02 : 0x03
        let t: UInt8 = tilt > 0 ? 0x01 : tilt < 0 ? 0x02 : 0x03
        return [0x80 | address, 0x01, 0x06, 0x01, max(1, panSpeed), max(1, tiltSpeed), p, t, 0xFF]
    }

    /// AbsolutePosition (`06 02`) or RelativePosition (`06 03`) with positions in camera units,
    /// written as `panNibbles`/`tiltNibbles` nibbles of two's complement. `tiltSpeed` nil writes
    /// Sony's single pan-tilt speed layout (`VV 00`).
    public static func move(address: UInt8, relative: Bool, panSpeed: UInt8, tiltSpeed: UInt8?,
                            pan: Int, tilt: Int, panNibbles: Int, tiltNibbles: Int) -> [UInt8] {
        [0x80 | address, 0x01, 0x06, relative ? 0x03 : 0x02, max(1, panSpeed), tiltSpeed.map { max(1, $0) } ?? 0]
            + nibbles(pan, count: panNibbles) + nibbles(tilt, count: tiltNibbles) + [0xFF]
    }

    /// CAM_ZoomPosInq: answered `y0 50 0p 0q 0r 0s FF`.
    public static func zoomInquiry(address: UInt8) -> [UInt8] { [0x80 | address, 0x09, 0x04, 0x47, 0xFF] }

    /// CAM_Zoom Direct to `position` (4 nibbles).
    public static func zoomDirect(address: UInt8, position: Int) -> [UInt8] {
        [0x80 | address, 0x01, 0x04, 0x47] + nibbles(position, count: 4) + [0xFF]
    }

    /// CAM_Zoom Tele (`direction` +1) or Wide (−1) at variable speed `speed` (0 slow … 7 fast),
    /// or Stop (`direction` 0): `8x 01 04 07 2p / 3p / 00 FF`.
    public static func zoomDrive(address: UInt8, direction: Int, speed: UInt8) -> [UInt8] {
        let p = min(7, speed)
        let code: UInt8 = direction > 0 ? 0x20 | p : direction < 0 ? 0x30 | p : 0x00
        return [0x80 | address, 0x01, 0x04, 0x07, code, 0xFF]
    }

    /// CAM_Memory Reset / Set / Recall (`8x 01 04 3F 0f pp FF`, f 0 / 1 / 2) of memory `number`:
    /// Sony's 0…F, the PTZOptics class's 00…FF.
    public enum MemoryFunction: UInt8, Sendable {
        case reset = 0, set = 1, recall = 2
    }

    public static func memory(address: UInt8, _ function: MemoryFunction, number: Int) -> [UInt8] {
        [0x80 | address, 0x01, 0x04, 0x3F, function.rawValue, UInt8(clamping: number), 0xFF]
    }

    /// The corner a Pan-tiltLimitSet / LimitClear names (VISCA's `W`).
    public enum LimitCorner: UInt8, Sendable {
        case downLeft = 0, upRight = 1
    }

    /// Pan-tiltLimitSet: the camera does not pan or tilt past (`pan`, `tilt`) toward `corner`.
    public static func limitSet(address: UInt8, corner: LimitCorner, pan: Int, tilt: Int, panNibbles: Int, tiltNibbles: Int) -> [UInt8] {
        [0x80 | address, 0x01, 0x06, 0x07, 0x00, corner.rawValue]
            + nibbles(pan, count: panNibbles) + nibbles(tilt, count: tiltNibbles) + [0xFF]
    }

    /// Pan-tiltLimitSet LimitClear: back to the mechanical range toward `corner` (the position
    /// fields hold 7F…F).
    public static func limitClear(address: UInt8, corner: LimitCorner, panNibbles: Int, tiltNibbles: Int) -> [UInt8] {
        let clear = { (count: Int) in [0x07] + [UInt8](repeating: 0x0F, count: count - 1) }
        return [0x80 | address, 0x01, 0x06, 0x07, 0x01, corner.rawValue] + clear(panNibbles) + clear(tiltNibbles) + [0xFF]
    }

    public static func nibbles(_ value: Int, count: Int) -> [UInt8] {
        let raw = UInt64(truncatingIfNeeded: value)
        return (0..<min(16, max(0, count))).reversed().map { UInt8((raw >> UInt64($0 * 4)) & 0x0F) }
    }

    /// Reads `count` nibbles of two's complement (one per byte, high nibble ignored).
    public static func signedValue(_ bytes: ArraySlice<UInt8>) -> Int {
        let bits = bytes.count * 4
        var raw = 0
        for b in bytes { raw = (raw << 4) | Int(b & 0x0F) }
        return raw >= 1 << (bits - 1) ? raw - (1 << bits) : raw
    }
}

/// Splits a serial byte stream into VISCA messages; bytes that are not part of one are garbage.
public struct VISCAStreamDecoder: Sendable {
    private var buffer: [UInt8] = []
    public init() {}

    public mutating func feed(_ bytes: [UInt8]) -> [Result<[UInt8], FrameError>] {
        var out: [Result<[UInt8], FrameError>] = []
        for b in bytes {
            if buffer.isEmpty && b & 0x80 == 0 { out.append(.failure(.malformed)); continue }
            if buffer.isEmpty && b == VISCA.terminator { out.append(.failure(.truncated)); continue }
            buffer.append(b)
            if b == VISCA.terminator {
                if buffer.count < 3 { out.append(.failure(.truncated)) } else { out.append(.success(buffer)) }
                buffer.removeAll(keepingCapacity: true)
            } else if buffer.count >= VISCA.maxMessage {
                out.append(.failure(.oversize))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        return out
    }
}

/// Sony's VISCA-over-IP header (UDP 52381): payload type (2 bytes), payload length (2 bytes),
/// sequence number (4 bytes), all big-endian, then the payload.
public enum VISCAOverIP {
    public static let port = 52381
    public enum PayloadType: UInt16, Sendable {
        case command = 0x0100, inquiry = 0x0110, reply = 0x0111, settingCommand = 0x0120
        case controlCommand = 0x0200, controlReply = 0x0201
    }

    public static func wrap(_ payload: [UInt8], type: UInt16, sequence: UInt32) -> [UInt8] {
        [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(payload.count >> 8), UInt8(payload.count & 0xFF),
         UInt8(sequence >> 24), UInt8((sequence >> 16) & 0xFF), UInt8((sequence >> 8) & 0xFF), UInt8(sequence & 0xFF)]
            + payload
    }

    /// Control command RESET: the camera's expected sequence number goes back to 0.
    public static func resetSequence(sequence: UInt32 = 0) -> [UInt8] {
        wrap([0x01], type: PayloadType.controlCommand.rawValue, sequence: sequence)
    }

    public struct Packet: Equatable, Sendable {
        public var type: UInt16
        public var sequence: UInt32
        public var payload: [UInt8]
    }

    /// Splits concatenated packets (one datagram normally holds one).
    public static func unwrap(_ bytes: [UInt8]) -> (packets: [Packet], garbage: Int) {
        var packets: [Packet] = [], i = 0
        while bytes.count - i >= 8 {
            let type = UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1])
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            let seq = UInt32(bytes[i + 4]) << 24 | UInt32(bytes[i + 5]) << 16 | UInt32(bytes[i + 6]) << 8 | UInt32(bytes[i + 7])
            guard length <= 16, bytes.count - i - 8 >= length else { return (packets, bytes.count - i) }
            packets.append(Packet(type: type, sequence: seq, payload: Array(bytes[(i + 8)..<(i + 8 + length)])))
            i += 8 + length
        }
        return (packets, bytes.count - i)
    }
}
