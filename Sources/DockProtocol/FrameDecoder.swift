/// Why a run of bytes did not become a frame (PROTOCOL.md §1, "Receiving").
public enum FrameError: String, Error, Sendable, CaseIterable {
    case oversize
    case cobs
    case truncated
    case crc
    case unknownType = "unknown_type"
    case malformed
}

/// Running totals a session reports (frames decoded, errors by kind, sequence gaps).
public struct DecoderCounters: Sendable, Equatable {
    public var frames = 0
    public var bytes = 0
    public var errors: [FrameError: Int] = [:]
    /// Frames the peer numbered but we never decoded, inferred from sequence gaps.
    public var sequenceGaps = 0

    public var totalErrors: Int { errors.values.reduce(0, +) }
    public init() {}

    /// The sum of two runs' counts (a stand's links before and after a reconnect).
    public func adding(_ other: DecoderCounters) -> DecoderCounters {
        var sum = self
        sum.frames += other.frames
        sum.bytes += other.bytes
        sum.sequenceGaps += other.sequenceGaps
        sum.errors.merge(other.errors, uniquingKeysWith: +)
        return sum
    }
}

/// The header of a frame that passed the CRC check but could not be used: its type is unknown to
/// this version or its payload is malformed. It is still a real frame from the peer, so a receiver
/// answers it with NACK (`unsupported` or `malformed`) when it asked for an ACK (PROTOCOL.md §3).
public struct FrameHeader: Sendable, Equatable {
    public var type: UInt8
    public var seq: UInt16
    public var ackRequested: Bool
    public init(type: UInt8, seq: UInt16, ackRequested: Bool) {
        self.type = type; self.seq = seq; self.ackRequested = ackRequested
    }
}

/// What the decoder yields for each delimited run of bytes.
public enum DecoderEvent: Sendable, Equatable {
    case frame(Frame)
    /// A frame with a valid CRC that could not be used (`unknownType` or `malformed`).
    case unusable(FrameHeader, FrameError)
    /// Bytes that were no frame at all (oversize, cobs, truncated, crc).
    case broken(FrameError)

    /// The same as a frame or an error, for receivers that need no header.
    public var result: Result<Frame, FrameError> {
        switch self {
        case .frame(let frame): .success(frame)
        case .unusable(_, let error), .broken(let error): .failure(error)
        }
    }
}

/// Streaming decoder: feed it bytes in any chunking; it yields frames and typed errors in order,
/// resynchronizes on the next 0x00 after anything broken, and never holds more than
/// `FrameLimits.maxEncodedPacket` bytes.
public struct FrameDecoder: Sendable {
    public typealias Output = Result<Frame, FrameError>

    private var buffer: [UInt8] = []
    /// After an oversize run, bytes are dropped up to and including the next delimiter.
    private var discarding = false
    private var lastSeq: UInt16?
    /// `frames` counts every frame that decoded: each is a sign of life from the peer ("heard").
    public private(set) var counters = DecoderCounters()

    public init() {
        buffer.reserveCapacity(FrameLimits.maxEncodedPacket)
    }

    public mutating func feed<C: Sequence>(_ bytes: C) -> [Output] where C.Element == UInt8 {
        var out: [Output] = []
        decode(bytes) { out.append($0.result) }
        return out
    }

    /// Calls `emit` for each frame or error as soon as its delimiter arrives; no array per call.
    public mutating func feed<C: Sequence>(_ bytes: C, emit: (Output) -> Void) where C.Element == UInt8 {
        decode(bytes) { emit($0.result) }
    }

    /// Every event, with the header of frames that could not be used, for receivers that answer them.
    /// An array, not any sequence: called from another module, a generic `decode` walked the bytes
    /// through witness tables, a call per byte (drivers call this at every FEEDBACK).
    public mutating func events(_ bytes: [UInt8]) -> [DecoderEvent] {
        var out: [DecoderEvent] = []
        decode(bytes) { out.append($0) }
        return out
    }

    public mutating func decode<C: Sequence>(_ bytes: C, emit: (DecoderEvent) -> Void) where C.Element == UInt8 {
        for byte in bytes {
            counters.bytes += 1
            if discarding {
                if byte == 0 { discarding = false }
                continue
            }
            if byte != 0 {
                if buffer.count == FrameLimits.maxEncodedPacket {
                    buffer.removeAll(keepingCapacity: true)
                    discarding = true
                    emit(.broken(count(.oversize)))
                } else {
                    buffer.append(byte)
                }
                continue
            }
            guard !buffer.isEmpty else { continue }
            emit(decodeBuffered())
            buffer.removeAll(keepingCapacity: true)
        }
    }

    private mutating func decodeBuffered() -> DecoderEvent {
        guard let packet = COBS.decode(buffer) else { return .broken(count(.cobs)) }
        guard packet.count >= FrameLimits.minPacket else { return .broken(count(.truncated)) }
        let body = packet[0..<(packet.count - 2)]
        let crc = UInt16(packet[packet.count - 2]) | UInt16(packet[packet.count - 1]) << 8
        guard CRC16.checksum(body) == crc else { return .broken(count(.crc)) }
        let seq = UInt16(packet[2]) | UInt16(packet[3]) << 8
        noteSequence(seq)
        let header = FrameHeader(type: packet[0], seq: seq, ackRequested: packet[1] & 1 != 0)
        guard let type = MessageType(rawValue: packet[0]) else { return .unusable(header, count(.unknownType)) }
        do {
            let message = try Message.decode(type: type, payload: packet[4..<(packet.count - 2)])
            counters.frames += 1
            return .frame(Frame(seq: seq, ackRequested: header.ackRequested, message: message))
        } catch {
            return .unusable(header, count(.malformed))
        }
    }

    private mutating func noteSequence(_ seq: UInt16) {
        if let last = lastSeq {
            let gap = Int(seq &- last &- 1)
            // A large jump backwards is a peer restart, not 65000 lost frames.
            if gap > 0 && gap < 1024 { counters.sequenceGaps += gap }
        }
        lastSeq = seq
    }

    private mutating func count(_ error: FrameError) -> FrameError {
        counters.errors[error, default: 0] += 1
        return error
    }
}
