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
    /// How many readable bytes are already known to hold no newline: each byte is searched once,
    /// however many reads a long line takes to arrive.
    private var searched = 0

    public init(maximumLength: Int) { self.maximumLength = maximumLength }

    public mutating func decode(buffer: inout ByteBuffer) throws -> ClientLine? {
        let view = buffer.readableBytesView
        let newline = view[(view.startIndex + min(searched, view.count))...].firstIndex(of: UInt8(ascii: "\n"))
        guard let newline else {
            searched = view.count
            if discarding > 0 || view.count > maximumLength {
                discarding += view.count
                buffer.moveReaderIndex(forwardBy: view.count)
                searched = 0
            }
            return nil
        }
        searched = 0
        let length = newline - view.startIndex
        if discarding > 0 || length > maximumLength {
            let dropped = discarding + length + 1
            buffer.moveReaderIndex(forwardBy: length + 1)
            discarding = 0
            return .oversize(bytes: dropped)
        }
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        return .line(line)
    }

    /// At the end of the input, a last line without its newline is still a line (`printf REQUEST |
    /// socat …` sends none): it is returned once every complete line has been.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ClientLine? {
        if let line = try decode(buffer: &buffer) { return line }
        guard seenEOF, buffer.readableBytes > 0 || discarding > 0 else { return nil }
        let length = buffer.readableBytes
        searched = 0
        if discarding > 0 || length > maximumLength {
            let dropped = discarding + length
            buffer.moveReaderIndex(forwardBy: length)
            discarding = 0
            return .oversize(bytes: dropped)
        }
        return .line(buffer.readSlice(length: length)!)
    }
}
