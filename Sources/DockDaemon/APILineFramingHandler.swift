import DockIO
import NIOCore

/// A line of a client's request stream, or the place of one that was too long and was discarded.
enum FramedLine {
    case line(ByteBuffer)
    case tooLong(bytes: Int, limit: Int)
}

/// The first stage of an API connection: splits the bytes a client sends into lines (without their
/// newline) and passes on the lines of one read together, in order, as one `[FramedLine]` (pipelined
/// requests cost the stages behind a loop step each, not a pipeline traversal each). A line over
/// `maximumLength` is dropped as it arrives and `.tooLong` takes its place; the connection goes on.
/// When the client shuts its side down, a last line without a newline is still a line
/// (`printf REQUEST | socat …` sends none).
final class APILineFramingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = [FramedLine]

    private let maximumLength: Int
    private var decoder: LineFrameDecoder
    /// Bytes received and not yet split into lines: the start of a line.
    private var unsplit: ByteBuffer?
    /// The lines of the read at hand; emptied, not freed, once passed on, so that its storage serves the next read.
    private var lines: [FramedLine] = []

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
        while let line = try? decoder.decode(buffer: &buffer) { append(line) }
        keep(buffer)
        pass(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            // (an empty buffer still lets the decoder report a line cut off over the limit)
            var buffer = unsplit ?? context.channel.allocator.buffer(capacity: 0)
            unsplit = nil
            while let line = try? decoder.decodeLast(buffer: &buffer, seenEOF: true) { append(line) }
            pass(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func append(_ line: ClientLine) {
        switch line {
        case .line(let bytes): lines.append(.line(bytes))
        case .oversize(let bytes): lines.append(.tooLong(bytes: bytes, limit: maximumLength))
        }
    }

    private func pass(context: ChannelHandlerContext) {
        guard !lines.isEmpty else { return }
        context.fireChannelRead(wrapInboundOut(lines))
        lines.removeAll(keepingCapacity: true)
    }

    private func keep(_ buffer: ByteBuffer) {
        guard buffer.readableBytes > 0 else { return }
        unsplit = buffer
        // Pipelined lines arrive read after read into one buffer: what was split off goes once in a while.
        if buffer.readerIndex > 65536 { unsplit!.discardReadBytes() }
    }
}
