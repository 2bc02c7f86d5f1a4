import DockJSON
import NIOCore

/// A request line, read: a request to run, or the error that answers it. (Indirect: one pointer,
/// which NIO passes between handlers without boxing it again.)
indirect enum ParsedRequest {
    case request(JSONRPCRequest)
    case refused(id: RequestID, error: RPCError)
}

/// The second stage of an API connection: each line becomes a JSON-RPC request or the error that
/// answers it (DockJSON's strict parser). A line the framing stage found too long is answered in its
/// place among the requests. A notification that cannot be run is dropped: JSON-RPC answers none.
final class APIRequestParsingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ParsedRequest

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        switch line.withUnsafeReadableBytes({ JSONRPCRequest.parse($0) }) {
        case .success(let request):
            context.fireChannelRead(wrapInboundOut(.request(request)))
        case .failure(let failure):
            guard !failure.isNotification else { return }
            context.fireChannelRead(wrapInboundOut(.refused(id: failure.id ?? .null, error: failure.error)))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let tooLong = error as? APILineFramingHandler.LineTooLong else { return context.fireErrorCaught(error) }
        context.fireChannelRead(wrapInboundOut(.refused(id: .null, error: .lineTooLong(tooLong.bytes, limit: tooLong.limit))))
    }
}
