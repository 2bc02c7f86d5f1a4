import Foundation
import Logging
import NIOCore
import StandEngine
import Synchronization

/// Fans notifications out to subscribed clients. Publishing is synchronous (the stand's loop never
/// waits for it) and encodes each notification once; every subscriber gets the same bytes. Each
/// subscriber has a bounded queue: one that stops reading fills it and is dropped, so a slow client
/// never slows a stand's control loop.
final class EventHub: Sendable {
    /// Notifications waiting for one client: 2.5 s of 100 Hz motion.
    static let queueLimit = 256

    private struct Subscriber {
        var topics: Set<String>
        /// The rate the client chose for `motion.state`, per second.
        var motionRate: Double
        /// Token bucket: the average rate is kept exactly while one late frame and one early frame
        /// do not cost a notification (a fixed minimum gap lost 5–15 % of them to jitter).
        var motionTokens = 1.0
        var lastMotion: Double = -.infinity
        let continuation: AsyncStream<ByteBuffer>.Continuation
        let onDrop: @Sendable () -> Void
    }

    static let topics: Set<String> = ["stands", "motion", "events", "battery", "tracking", "logs"]

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var dropped = 0
    }
    private let state = Mutex(State())
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    /// The client's notification stream (encoded lines); `onDrop` closes its connection when it
    /// falls behind.
    func register(client: Int, onDrop: @escaping @Sendable () -> Void) -> AsyncStream<ByteBuffer> {
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(Self.queueLimit))
        state.withLock { $0.subscribers[client] = Subscriber(topics: [], motionRate: 10, continuation: continuation, onDrop: onDrop) }
        return stream
    }

    func subscribe(client: Int, topics: Set<String>, motionRate: Double?) {
        state.withLock { state in
            state.subscribers[client]?.topics.formUnion(topics)
            if let rate = motionRate { state.subscribers[client]?.motionRate = rate }
        }
    }

    func unsubscribe(client: Int, topics: Set<String>) {
        state.withLock { _ = $0.subscribers[client]?.topics.subtract(topics) }
    }

    var clientCount: Int { state.withLock { $0.subscribers.count } }
    var droppedSubscribers: Int { state.withLock { $0.dropped } }

    func topics(of client: Int) -> Set<String> { state.withLock { $0.subscribers[client]?.topics ?? [] } }

    func remove(client: Int) {
        state.withLock { $0.subscribers.removeValue(forKey: client) }?.continuation.finish()
    }

    /// Sends one notification to one client (a subscription's first snapshot).
    func send(client: Int, method: String, params: JSONValue) {
        let line = Self.encode(method: method, params: params)
        let drop = state.withLock { state -> Subscriber? in
            guard let s = state.subscribers[client] else { return nil }
            return Self.deliver(line, to: client, s, in: &state)
        }
        drop.map(dropped)
    }

    /// A stand's notification, to every client subscribed to its topic.
    func publish(_ notification: StandNotification, stand: String, endpoint: String, time: Double) {
        let (topic, method, params) = notification.json(stand: stand, endpoint: endpoint)
        publish(topic: topic, method: method, params: params, time: time)
    }

    /// Sends `params` as a `method` notification to every client subscribed to `topic`, encoded once.
    func publish(topic: String, method: String, params: JSONValue, time: Double) {
        var line: ByteBuffer?
        let drops = state.withLock { state -> [Subscriber] in
            var drops: [Subscriber] = []
            for (client, s) in state.subscribers where s.topics.contains(topic) {
                if method == "motion.state" {
                    let tokens = min(2, s.motionTokens + (time - s.lastMotion) * s.motionRate)
                    state.subscribers[client]?.lastMotion = time
                    guard tokens >= 1 else { state.subscribers[client]?.motionTokens = tokens; continue }
                    state.subscribers[client]?.motionTokens = tokens - 1
                }
                if line == nil { line = Self.encode(method: method, params: params) }
                if let dropped = Self.deliver(line!, to: client, s, in: &state) { drops.append(dropped) }
            }
            return drops
        }
        drops.forEach(dropped)
    }

    /// Queues the line for the client; a full queue drops the client (returned, to be told outside the lock).
    private static func deliver(_ line: ByteBuffer, to client: Int, _ s: Subscriber, in state: inout State) -> Subscriber? {
        guard case .dropped = s.continuation.yield(line) else { return nil }
        state.dropped += 1
        state.subscribers.removeValue(forKey: client)
        return s
    }

    private func dropped(_ s: Subscriber) {
        logger.warning("a client stopped reading its notifications; dropping it")
        s.continuation.finish()
        s.onDrop()
    }

    static func encode(method: String, params: JSONValue) -> ByteBuffer {
        APIServer.line(["jsonrpc": "2.0", "method": JSONValue(method), "params": params])
    }
}
