/// A decoded frame: header fields and the message (PROTOCOL.md §1).
public struct Frame: Equatable, Sendable {
    public var seq: UInt16
    public var ackRequested: Bool
    public var message: Message

    public init(seq: UInt16, ackRequested: Bool = false, message: Message) {
        self.seq = seq; self.ackRequested = ackRequested; self.message = message
    }
}

public enum FrameLimits {
    public static let maxPayload = 250
    /// type + flags + seq + payload + crc.
    public static let maxPacket = 4 + maxPayload + 2
    public static let minPacket = 6
    /// Longest COBS output for a maximal packet; a run this long with no delimiter is oversize.
    public static let maxEncodedPacket = maxPacket + (maxPacket + 253) / 254
}

public enum FrameEncoder {
    /// The frame as it goes on the wire: COBS(packet) and the 0x00 delimiter.
    public static func encode(_ frame: Frame) -> [UInt8] {
        var w = ByteWriter()
        w.u8(frame.message.type.rawValue)
        w.u8(frame.ackRequested ? 1 : 0)
        w.u16(frame.seq)
        frame.message.encodePayload(into: &w)
        var packet = w.bytes
        precondition(packet.count <= FrameLimits.maxPacket - 2, "payload over \(FrameLimits.maxPayload) bytes")
        let crc = CRC16.checksum(packet)
        packet.append(UInt8(crc & 0xFF))
        packet.append(UInt8(crc >> 8))
        var out = COBS.encode(packet)
        out.append(0)
        return out
    }
}

/// Counts frames and a sender's sequence numbers, so a session can number what it sends.
public struct FrameSequencer: Sendable {
    private var next: UInt16 = 0
    public init() {}
    public mutating func frame(_ message: Message, ackRequested: Bool = false) -> Frame {
        defer { next &+= 1 }
        return Frame(seq: next, ackRequested: ackRequested, message: message)
    }
}
