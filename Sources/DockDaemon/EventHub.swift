import DockJSON
import NIOCore
import StandEngine
import Synchronization

/// Fans notifications out to subscribed clients. Publishing is synchronous (the stand's loop never
/// waits for it) and costs nothing for a topic nobody subscribed to (one atomic load, before any
/// JSON is built). A published notification is encoded once; every subscriber gets the same bytes,
/// handed to its connection's event loop in one task per loop. A subscriber that stops reading is
/// dropped by its connection (APIOutputHandler), so a slow client never slows a stand's control loop.
final class EventHub: Sendable {
    /// Notifications a client may have waiting beyond what its socket holds: 2.5 s of 100 Hz motion.
    static let queueLimit = 256

    enum Topic: Int, CaseIterable, Sendable {
        case stands, motion, events, battery, tracking, logs

        var name: String {
            switch self {
            case .stands: "stands"
            case .motion: "motion"
            case .events: "events"
            case .battery: "battery"
            case .tracking: "tracking"
            case .logs: "logs"
            }
        }

        init?(name: String) {
            guard let topic = Topic.allCases.first(where: { $0.name == name }) else { return nil }
            self = topic
        }

        var bit: UInt8 { 1 << UInt8(rawValue) }
    }

    /// Where a client's notifications go: its connection's handler, on that connection's loop.
    struct Sink: Sendable {
        let loop: any EventLoop
        let handler: NIOLoopBound<APIOutputHandler>
    }

    private struct Subscriber {
        var topics: UInt8 = 0
        /// The rate the client chose for `motion.state`, per second.
        var motionRate = 10.0
        /// Token bucket: the average rate is kept exactly while one late frame and one early frame
        /// do not cost a notification (a fixed minimum gap lost 5–15 % of them to jitter).
        var motionTokens = 1.0
        var lastMotion = -Double.infinity
        let sink: Sink
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var dropped = 0
    }
    private let state = Mutex(State())
    /// The union of every client's topics, read without the lock on each publish.
    private let subscribed = Atomic<UInt8>(0)

    /// A connection that may subscribe.
    func register(client: Int, sink: Sink) {
        state.withLock { $0.subscribers[client] = Subscriber(sink: sink) }
    }

    func remove(client: Int) {
        state.withLock { state in
            guard state.subscribers.removeValue(forKey: client) != nil else { return }
            updateSubscribed(state)
        }
    }

    /// A client was disconnected for not reading its notifications.
    func dropped(client: Int) {
        state.withLock { state in
            guard state.subscribers.removeValue(forKey: client) != nil else { return }
            state.dropped += 1
            updateSubscribed(state)
        }
    }

    func subscribe(client: Int, topics: Set<Topic>, motionRate: Double?) {
        state.withLock { state in
            for topic in topics { state.subscribers[client]?.topics |= topic.bit }
            if let rate = motionRate { state.subscribers[client]?.motionRate = rate }
            updateSubscribed(state)
        }
    }

    func unsubscribe(client: Int, topics: Set<Topic>) {
        state.withLock { state in
            for topic in topics { state.subscribers[client]?.topics &= ~topic.bit }
            updateSubscribed(state)
        }
    }

    var clientCount: Int { state.withLock { $0.subscribers.count } }
    var droppedSubscribers: Int { state.withLock { $0.dropped } }

    func topics(of client: Int) -> [String] {
        let bits = state.withLock { $0.subscribers[client]?.topics ?? 0 }
        return Topic.allCases.filter { bits & $0.bit != 0 }.map(\.name).sorted()
    }

    /// Whether anyone listens to `topic` (a hint: a subscription may arrive right after).
    func wants(_ topic: Topic) -> Bool { subscribed.load(ordering: .relaxed) & topic.bit != 0 }

    private func updateSubscribed(_ state: State) {
        subscribed.store(state.subscribers.values.reduce(0) { $0 | $1.topics }, ordering: .relaxed)
    }

    /// Sends one notification to one client (a subscription's first snapshot).
    func send(client: Int, method: String, params: JSONValue) {
        guard let sink = state.withLock({ $0.subscribers[client]?.sink }) else { return }
        let line = Self.encode(method: method, params: params)
        Self.deliver(line, to: [sink.handler], on: sink.loop)
    }

    /// A stand's notification, to every client subscribed to its topic. Its params are built only
    /// when a subscriber takes it (not for a topic nobody subscribed to, nor for a `motion.state`
    /// every subscriber's rate skips).
    func publish(_ notification: StandNotification, stand: String, endpoint: String, time: Double) {
        let topic = notification.topic
        guard wants(topic) else { return }
        publish(topic: topic, method: notification.method, params: notification.params(stand: stand, endpoint: endpoint), time: time)
    }

    /// Sends `params` as a `method` notification to every client subscribed to `topic`, encoded once.
    func publish(topic: Topic, method: String, params: @autoclosure () -> JSONValue, time: Double) {
        // The receivers, grouped by their connections' event loops (a loop or two: a linear search).
        var groups: [(loop: any EventLoop, handlers: [NIOLoopBound<APIOutputHandler>])] = []
        let rateLimited = topic == .motion && method == "motion.state"
        state.withLock { state in
            for (client, s) in state.subscribers where s.topics & topic.bit != 0 {
                if rateLimited {
                    let tokens = min(2, s.motionTokens + (time - s.lastMotion) * s.motionRate)
                    state.subscribers[client]?.lastMotion = time
                    guard tokens >= 1 else { state.subscribers[client]?.motionTokens = tokens; continue }
                    state.subscribers[client]?.motionTokens = tokens - 1
                }
                if let g = groups.firstIndex(where: { $0.loop === s.sink.loop }) {
                    groups[g].handlers.append(s.sink.handler)
                } else {
                    groups.append((s.sink.loop, [s.sink.handler]))
                }
            }
        }
        guard !groups.isEmpty else { return }
        let line = Self.encode(method: method, params: params())
        for group in groups { Self.deliver(line, to: group.handlers, on: group.loop) }
    }

    private static func deliver(_ line: ByteBuffer, to handlers: [NIOLoopBound<APIOutputHandler>], on loop: any EventLoop) {
        if loop.inEventLoop {
            for h in handlers { h.value.deliver(line) }
        } else {
            loop.execute { for h in handlers { h.value.deliver(line) } }
        }
    }

    static func encode(method: String, params: JSONValue) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(256)
        buffer.writeStaticString("{\"jsonrpc\":\"2.0\",\"method\":")
        buffer.writeJSONString(method)
        buffer.writeStaticString(",\"params\":")
        buffer.writeJSON(params)
        buffer.writeStaticString("}\n")
        return buffer
    }
}
