import NIOCore

/// The pipeline end of a host link: hands bytes and link changes to the engine. Created on the
/// engine's loop by the channel initializer, so it can hold the engine directly.
final class HostLinkHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let engine: SimulatedStandHost

    init(engine: SimulatedStandHost) { self.engine = engine }

    func channelActive(context: ChannelHandlerContext) {
        engine.attach(context.channel)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        engine.detach(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = Self.unwrapInboundIn(data)
        engine.receive(Array(buffer.readableBytesView), from: context.channel)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A broken link is a pulled cable: close it; the host reconnects as it would to hardware.
        Console.err("host link error: \(error); closing it")
        context.close(promise: nil)
    }
}
