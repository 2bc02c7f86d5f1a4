@testable import DockDaemon
import DockJSON
import Logging
import NIOCore
import NIOEmbedded
import Testing

/// Methods for the connection's stages to run: `echo` answers its params at once, `later` when the
/// test completes it (as a stand would), `note` only counts; anything else is not found.
private final class ScriptedMethods: APIRequestRunner {
    let loop: EmbeddedEventLoop
    var pending: [EventLoopPromise<JSONValue>] = []
    var calls = 0
    var gone: [Int] = []

    init(loop: EmbeddedEventLoop) { self.loop = loop }

    func call(_ name: String, _ p: Params, session: ClientSession) throws(RPCError) -> APIMethods.Answer {
        calls += 1
        switch name {
        case "echo", "note": return .value(.object(p.fields))
        case "later":
            let promise = loop.makePromise(of: JSONValue.self)
            pending.append(promise)
            return .later(promise.futureResult)
        default: throw RPCError.methodNotFound(name)
        }
    }

    func clientGone(_ id: Int) { gone.append(id) }
}

/// Counts the reads that get past the connection's stages to the socket.
private final class ReadCounter: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    var reads = 0
    func read(context: ChannelHandlerContext) {
        reads += 1
        context.read()
    }
}

/// One API connection's whole pipeline on an EmbeddedChannel: bytes in, reply bytes out, no socket.
private struct Connection {
    let channel = EmbeddedChannel()
    let methods: ScriptedMethods
    let counter = ReadCounter()
    let hub = EventHub()

    init() throws {
        methods = ScriptedMethods(loop: channel.embeddedEventLoop)
        try channel.pipeline.syncOperations.addHandler(counter)
        try APIConnection.addHandlers(to: channel.pipeline.syncOperations, id: 7, methods: methods, hub: hub,
                                      logger: Logger(label: "test"))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
    }

    func send(_ text: String) throws { try channel.writeInbound(ByteBuffer(string: text)) }

    /// Each write that reached the socket, as text.
    func writes() throws -> [String] {
        var out: [String] = []
        while let bytes = try channel.readOutbound(as: ByteBuffer.self) { out.append(String(buffer: bytes)) }
        return out
    }

    /// The reply lines written so far.
    func replies() throws -> [String] {
        try writes().joined().split(separator: "\n").map(String.init)
    }

    func closeInput() {
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
    }

    func setWritable(_ writable: Bool) {
        channel.isWritable = writable
        channel.pipeline.fireChannelWritabilityChanged()
    }
}

private func echo(_ id: Int, _ value: Int = 1) -> String {
    "{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"echo\",\"params\":{\"n\":\(value)}}\n"
}
private func echoed(_ id: Int, _ value: Int = 1) -> String {
    "{\"id\":\(id),\"jsonrpc\":\"2.0\",\"result\":{\"n\":\(value)}}"
}
private func later(_ id: Int) -> String { "{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"later\"}\n" }

@Suite("API connection stages")
struct APIConnectionTests {
    @Test("a request cut into one-byte reads is answered once it is whole")
    func requestAcrossPartialReads() throws {
        let c = try Connection()
        for byte in echo(1).utf8 {
            #expect(try c.replies().isEmpty)
            try c.channel.writeInbound(ByteBuffer(bytes: [byte]))
        }
        #expect(try c.replies() == [echoed(1)])
    }

    @Test("a line over the limit is answered with its size in its place, and the connection goes on")
    func overlongLine() throws {
        let c = try Connection()
        let long = String(repeating: "x", count: APIConnection.maxLineLength + 10)
        try c.send(echo(1) + long)
        try c.send("\n" + echo(2))
        let replies = try c.replies()
        #expect(replies.count == 3)
        #expect(replies.first == echoed(1))
        #expect(replies.dropFirst().first?.contains("\"code\":-32600") == true)
        #expect(replies.dropFirst().first?.contains("line of \(APIConnection.maxLineLength + 11) bytes exceeds the \(APIConnection.maxLineLength)-byte limit") == true)
        #expect(replies.last == echoed(2))
    }

    @Test("a line that is not JSON gets a parse error with a null id; a notification that is not valid gets nothing")
    func malformedJSON() throws {
        let c = try Connection()
        try c.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n" + "{\"jsonrpc\":\"1.0\",\"method\":\"echo\"}\n" + echo(2))
        let replies = try c.replies()
        #expect(replies.count == 2)
        #expect(replies.first?.contains("\"code\":-32700") == true)
        #expect(replies.first?.hasSuffix("\"id\":null,\"jsonrpc\":\"2.0\"}") == true)
        #expect(replies.last == echoed(2))
    }

    @Test("a batch (a JSON array) is refused as one invalid request")
    func batch() throws {
        let c = try Connection()
        try c.send("[" + echo(1).dropLast() + "," + echo(2).dropLast() + "]\n")
        let replies = try c.replies()
        #expect(replies.count == 1)
        #expect(replies.first?.contains("\"code\":-32600") == true)
        #expect(c.methods.calls == 0)
    }

    @Test("pipelined requests are answered in order, in one write per read")
    func pipelined() throws {
        let c = try Connection()
        try c.send((1...200).map { echo($0, $0) }.joined())
        let writes = try c.writes()
        #expect(writes.count == 1)
        #expect(writes.joined().split(separator: "\n").map(String.init) == (1...200).map { echoed($0, $0) })
    }

    @Test("the replies behind one a stand has not answered yet wait for it")
    func repliesInRequestOrder() throws {
        let c = try Connection()
        try c.send(later(1) + echo(2) + "{\"jsonrpc\":\"2.0\",\"method\":\"note\"}\n" + echo(3))
        #expect(try c.replies().isEmpty)
        c.methods.pending[0].succeed(.string("done"))
        #expect(try c.replies() == ["{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":\"done\"}", echoed(2), echoed(3)])
    }

    @Test("with maxInFlight requests waiting for a stand, reading stops and what arrives waits unrun")
    func inFlightLimit() throws {
        let c = try Connection()
        try c.send((1...APIConnection.maxInFlight).map(later).joined() + echo(999))
        #expect(c.methods.calls == APIConnection.maxInFlight)
        let reads = c.counter.reads
        c.channel.read()
        #expect(c.counter.reads == reads)
        // One answered: the request that waited runs, and its reply takes the freed place behind the others.
        c.methods.pending[0].succeed(.null)
        #expect(c.methods.calls == APIConnection.maxInFlight + 1)
        #expect(c.counter.reads == reads)
        c.methods.pending[1].succeed(.null)
        #expect(c.counter.reads == reads + 1)
        #expect(try c.replies() == ["{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":null}", "{\"id\":2,\"jsonrpc\":\"2.0\",\"result\":null}"])
    }

    @Test("a client that shuts its side down gets every reply, its last line without a newline too, then the connection closes")
    func halfClose() throws {
        let c = try Connection()
        try c.send(later(1) + String(echo(2).dropLast()))
        c.closeInput()
        #expect(try c.replies().isEmpty)
        #expect(c.channel.isActive)
        c.methods.pending[0].succeed(.null)
        #expect(try c.replies() == ["{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":null}", echoed(2)])
        #expect(!c.channel.isActive)
        #expect(c.methods.gone == [7])
    }

    @Test("while the socket takes nothing, requests wait unrun and reading stops; they run once it drains")
    func socketBackpressure() throws {
        let c = try Connection()
        c.setWritable(false)
        try c.send(echo(1))
        #expect(c.methods.calls == 0)
        let reads = c.counter.reads
        c.channel.read()
        #expect(c.counter.reads == reads)
        c.setWritable(true)
        #expect(c.methods.calls == 1)
        #expect(try c.replies() == [echoed(1)])
        #expect(c.counter.reads > reads)
    }

    @Test("a subscriber whose notifications pile up on a full socket is dropped")
    func notificationsOnAFullSocket() throws {
        let c = try Connection()
        let output = try c.channel.pipeline.syncOperations.handler(type: APIOutputHandler.self)
        output.deliver(ByteBuffer(string: "{\"method\":\"n\"}\n"))
        #expect(try c.writes() == ["{\"method\":\"n\"}\n"])
        c.setWritable(false)
        for _ in 0..<EventHub.queueLimit { output.deliver(ByteBuffer(string: "{\"method\":\"n\"}\n")) }
        c.channel.embeddedEventLoop.run()
        #expect(c.channel.isActive)
        output.deliver(ByteBuffer(string: "{\"method\":\"n\"}\n"))
        c.channel.embeddedEventLoop.run()
        #expect(!c.channel.isActive)
        #expect(c.hub.droppedSubscribers == 1)
        #expect(c.methods.gone == [7])
    }

    @Test("a client that disconnects gives up what it held")
    func disconnect() throws {
        let c = try Connection()
        try c.send(later(1))
        try c.channel.close().wait()
        #expect(c.methods.gone == [7])
        c.methods.pending[0].succeed(.null)
        #expect(try c.writes().isEmpty)
    }
}

@Suite("API connection stages, each alone")
struct APIStageTests {
    @Test("framing: lines across reads, and a long line reported as an error in its place")
    func framing() throws {
        let channel = EmbeddedChannel(handler: APILineFramingHandler(maximumLength: 8))
        try channel.writeInbound(ByteBuffer(string: "ab"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
        try channel.writeInbound(ByteBuffer(string: "c\ndef\n"))
        #expect(try channel.readInbound(as: ByteBuffer.self).map { String(buffer: $0) } == "abc")
        #expect(try channel.readInbound(as: ByteBuffer.self).map { String(buffer: $0) } == "def")
        #expect(throws: APILineFramingHandler.LineTooLong(bytes: 13, limit: 8)) {
            try channel.writeInbound(ByteBuffer(string: "0123456789ab\n"))
        }
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
    }

    @Test("parsing: requests and refusals, notifications' refusals dropped, a long line answered")
    func parsing() throws {
        let channel = EmbeddedChannel(handler: APIRequestParsingHandler())
        func next() throws -> String? {
            switch try channel.readInbound(as: ParsedRequest.self) {
            case .request(let r)?: "request \(r.method) \(r.id?.text ?? "-")"
            case .refused(let id, let error)?: "refused \(id.text) \(error.code)"
            case nil: nil
            }
        }
        try channel.writeInbound(ByteBuffer(string: "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"m\"}"))
        try channel.writeInbound(ByteBuffer(string: "{\"jsonrpc\":\"2.0\",\"method\":7}"))
        try channel.writeInbound(ByteBuffer(string: "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":7}"))
        channel.pipeline.fireErrorCaught(APILineFramingHandler.LineTooLong(bytes: 20, limit: 10))
        #expect(try next() == "request m \"a\"")
        #expect(try next() == "refused 3 -32600")
        #expect(try next() == "refused null -32600")
        #expect(try next() == nil)
    }
}
