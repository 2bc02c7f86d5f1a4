import Logging
import NIOCore

/// One API connection's pipeline, a handler per concern, from the socket inwards: the output (reads
/// paused while the socket is full, notifications), line framing, request parsing, and dispatch to
/// the methods (replies in request order, one write per read).
/// Everything runs on the channel's event loop: no task per client or per request.
enum APIConnection {
    /// The longest request line, in bytes; a longer one is answered with an error and dropped.
    static let maxLineLength = 1 << 20
    /// Requests of one connection that may wait for a stand at once.
    static let maxInFlight = 128

    static func addHandlers(to pipeline: ChannelPipeline.SynchronousOperations, id: Int, methods: any APIRequestRunner,
                            hub: EventHub, logger: Logger) throws {
        try pipeline.addHandler(APIOutputHandler(id: id, hub: hub, logger: logger))
        try pipeline.addHandler(APILineFramingHandler(maximumLength: maxLineLength))
        try pipeline.addHandler(APIRequestParsingHandler())
        try pipeline.addHandler(APIDispatchHandler(id: id, methods: methods, maxInFlight: maxInFlight, logger: logger))
    }
}
