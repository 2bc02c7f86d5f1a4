import Logging

/// Fans notifications out to subscribed clients. Each subscriber has a bounded queue: one that stops
/// reading fills it and is dropped, so a slow client never slows a stand's control loop.
actor EventHub {
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
        let continuation: AsyncStream<JSONValue>.Continuation
        let onDrop: @Sendable () -> Void
    }

    static let topics: Set<String> = ["stands", "motion", "events", "battery", "tracking", "logs"]

    private var subscribers: [Int: Subscriber] = [:]
    private(set) var droppedSubscribers = 0
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    /// The client's notification stream; `onDrop` closes its connection when it falls behind.
    func register(client: Int, onDrop: @escaping @Sendable () -> Void) -> AsyncStream<JSONValue> {
        let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self, bufferingPolicy: .bufferingOldest(Self.queueLimit))
        subscribers[client] = Subscriber(topics: [], motionRate: 10, continuation: continuation, onDrop: onDrop)
        return stream
    }

    func subscribe(client: Int, topics: Set<String>, motionRate: Double?) {
        subscribers[client]?.topics.formUnion(topics)
        if let rate = motionRate { subscribers[client]?.motionRate = rate }
    }

    func unsubscribe(client: Int, topics: Set<String>) {
        subscribers[client]?.topics.subtract(topics)
    }

    var clientCount: Int { subscribers.count }

    func topics(of client: Int) -> Set<String> { subscribers[client]?.topics ?? [] }

    func remove(client: Int) {
        subscribers.removeValue(forKey: client)?.continuation.finish()
    }

    /// Sends one notification to one client (a subscription's first snapshot).
    func send(client: Int, method: String, params: JSONValue) {
        guard let s = subscribers[client] else { return }
        deliver(["jsonrpc": "2.0", "method": JSONValue(method), "params": params], to: client, s)
    }

    /// Sends `params` as a `method` notification to every client subscribed to `topic`.
    func publish(topic: String, method: String, params: JSONValue, time: Double) {
        for (client, s) in subscribers where s.topics.contains(topic) {
            if method == "motion.state" {
                let tokens = min(2, s.motionTokens + (time - s.lastMotion) * s.motionRate)
                subscribers[client]?.lastMotion = time
                guard tokens >= 1 else { subscribers[client]?.motionTokens = tokens; continue }
                subscribers[client]?.motionTokens = tokens - 1
            }
            deliver(["jsonrpc": "2.0", "method": JSONValue(method), "params": params], to: client, s)
        }
    }

    private func deliver(_ message: JSONValue, to client: Int, _ s: Subscriber) {
        if case .dropped = s.continuation.yield(message) {
            droppedSubscribers += 1
            logger.warning("client \(client) stopped reading its notifications; dropping it")
            subscribers.removeValue(forKey: client)
            s.continuation.finish()
            s.onDrop()
        }
    }
}
