import DockIO
import NIOCore

/// The first stage of an API connection: splits the bytes a client sends into lines (without their
/// newline) and passes each on. A line over `maximumLength` is dropped as it arrives and reported as a
/// `LineTooLong` error in its place, in order; the connection goes on. When the client shuts its side
/// down, a last line without a newline is still a line (`printf REQUEST | socat …` sends none).
final class APILineFramingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// In place of a line that was too long, which was discarded.
    struct LineTooLong: Error, Equatable {
        let bytes: Int
        let limit: Int
    }

    private let maximumLength: Int
    private var decoder: LineFrameDecoder
    /// Bytes received and not yet split into lines: the start of a line.
    private var unsplit: ByteBuffer?

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
        decoder = LineFrameDecoder(maximumLength: maximumLength)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        var buffer: ByteBuffer
        if var held = unsplit {
            unsplit = nil  // uniquely referenced while it grows
            held.writeBuffer(&bytes)
            buffer = held
        } else {
            buffer = bytes
        }
        while let line = try? decoder.decode(buffer: &buffer) { pass(line, context: context) }
        keep(buffer)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            // (an empty buffer still lets the decoder report a line cut off over the limit)
            var buffer = unsplit ?? context.channel.allocator.buffer(capacity: 0)
            unsplit = nil
            while let line = try? decoder.decodeLast(buffer: &buffer, seenEOF: true) { pass(line, context: context) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func pass(_ line: ClientLine, context: ChannelHandlerContext) {
        switch line {
        case .line(let bytes): context.fireChannelRead(wrapInboundOut(bytes))
        case .oversize(let bytes): context.fireErrorCaught(LineTooLong(bytes: bytes, limit: maximumLength))
        }
    }

    private func keep(_ buffer: ByteBuffer) {
        guard buffer.readableBytes > 0 else { return }
        unsplit = buffer
        // Pipelined lines arrive read after read into one buffer: what was split off goes once in a while.
        if buffer.readerIndex > 65536 { unsplit!.discardReadBytes() }
    }
}
