import DockJSON
import NIOCore

/// A request line, read: a request to run, or the error that answers it.
enum ParsedRequest {
    case request(JSONRPCRequest)
    case refused(id: RequestID, error: RPCError)
}

/// The second stage of an API connection: each line becomes a JSON-RPC request or the error that
/// answers it (DockJSON's strict parser); the requests of one read go on together, in order. A line
/// the framing stage found too long is answered in its place. A notification that cannot be run is
/// dropped: JSON-RPC answers none.
final class APIRequestParsingHandler: ChannelInboundHandler {
    typealias InboundIn = [FramedLine]
    typealias InboundOut = [ParsedRequest]

    /// The requests of the read at hand; emptied, not freed, once passed on.
    private var requests: [ParsedRequest] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        for line in unwrapInboundIn(data) {
            switch line {
            case .line(let bytes):
                switch bytes.withUnsafeReadableBytes({ JSONRPCRequest.parse($0) }) {
                case .success(let request):
                    requests.append(.request(request))
                case .failure(let failure):
                    guard !failure.isNotification else { continue }
                    requests.append(.refused(id: failure.id ?? .null, error: failure.error))
                }
            case .tooLong(let bytes, let limit):
                requests.append(.refused(id: .null, error: .lineTooLong(bytes, limit: limit)))
            }
        }
        guard !requests.isEmpty else { return }
        context.fireChannelRead(wrapInboundOut(requests))
        requests.removeAll(keepingCapacity: true)
    }
}
