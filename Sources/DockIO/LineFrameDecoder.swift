import NIOCore

/// One newline-delimited line from a client, or the news that a line was too long and dropped.
public enum ClientLine: Sendable, Equatable {
    case line(ByteBuffer)
    case oversize(bytes: Int)
}

/// Splits a byte stream into lines of at most `maximumLength` bytes. A longer line is not buffered:
/// its bytes are counted and dropped up to its newline, then one `.oversize` is emitted, so a 10 MB
/// line costs no memory and the connection keeps working.
public struct LineFrameDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = ClientLine

    private let maximumLength: Int
    private var discarding = 0

    public init(maximumLength: Int) { self.maximumLength = maximumLength }

    public mutating func decode(buffer: inout ByteBuffer) throws -> ClientLine? {
        let view = buffer.readableBytesView
        if discarding > 0 || view.count > maximumLength && view.firstIndex(of: UInt8(ascii: "\n")) == nil {
            if let newline = view.firstIndex(of: UInt8(ascii: "\n")) {
                let dropped = discarding + (newline - view.startIndex) + 1
                buffer.moveReaderIndex(forwardBy: newline - view.startIndex + 1)
                discarding = 0
                return .oversize(bytes: dropped)
            }
            discarding += view.count
            buffer.moveReaderIndex(forwardBy: view.count)
            return nil
        }
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let length = newline - view.startIndex
        if length > maximumLength {
            buffer.moveReaderIndex(forwardBy: length + 1)
            return .oversize(bytes: length + 1)
        }
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        return .line(line)
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ClientLine? {
        try decode(buffer: &buffer)
    }
}
