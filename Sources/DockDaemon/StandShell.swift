import DockIO
import Logging
import NIOCore
import StandEngine
import Synchronization

/// The daemon's side of one stand's link session host: what the engine's outputs do beyond their
/// writes (log lines, notifications, replies to the commands awaiting them, the id and link state
/// lookups read), the watchdog's beats, and when the host may read the link in batches — at rest,
/// with nobody subscribed to what each FEEDBACK tells (`motion`, `events`) and no reply awaited.
final class StandShell: LinkSessionShell {
    typealias Session = StandEngine
    let endpointName: String
    let lookup: StandLookup
    let hub: EventHub
    let clock: DaemonClock
    let liveness: Liveness
    let livenessName: String
    let logger: Logger
    let reconnectWait: ReconnectWait
    /// Called (on the loop) when the link's state changes: the daemon's STATUS= line follows it.
    let linkStateChanged: @Sendable () -> Void
    private var nextToken = 0
    private var waiting: [Int: EventLoopPromise<CommandResult>] = [:]
    /// When the control loop last beat for the watchdog.
    private var lastBeat = -Double.infinity

    init(endpointName: String, lookup: StandLookup, hub: EventHub, clock: DaemonClock, liveness: Liveness,
         logger: Logger, reconnectWait: ReconnectWait, linkStateChanged: @escaping @Sendable () -> Void) {
        self.endpointName = endpointName
        self.lookup = lookup
        self.hub = hub
        self.clock = clock
        self.liveness = liveness
        livenessName = "the control loop of \(endpointName)"
        self.logger = logger
        self.reconnectWait = reconnectWait
        self.linkStateChanged = linkStateChanged
    }

    /// The token of a command whose reply `promise` awaits.
    func awaitReply(_ promise: EventLoopPromise<CommandResult>) -> Int {
        let token = nextToken
        nextToken += 1
        waiting[token] = promise
        return token
    }

    func carryOut(_ out: EngineOutput, from host: LinkSessionHost<StandShell>) {
        let (id, linkState) = host.inspect { ($0.standID, $0.linkState) }
        if lookup.update(id: id, state: linkState) { linkStateChanged() }
        // A stand streaming FEEDBACK while dockd commands it may not wake the host's timer for as
        // long as that lasts (its due time moves later with every event): each output handled while
        // the link is open is the loop's beat too. Not after the close: the link is no longer watched.
        if linkState == .handshaking || linkState == .connected { beat() }
        for log in out.logs {
            // `stand` is the stand's id once it said who it is (journald: DOCKD_STAND), else its endpoint.
            var metadata = log.metadata.mapValues { Logger.MetadataValue.string($0) }
            if let id { metadata["stand"] = .string(id) }
            logger.log(level: log.level.swiftLog, "\(log.message)", metadata: metadata)
        }
        if !out.notifications.isEmpty {
            let now = clock.now()
            for notification in out.notifications { hub.publish(notification, stand: id ?? "", endpoint: endpointName, time: now) }
        }
        for (token, result) in out.replies {
            guard let promise = waiting.removeValue(forKey: token) else { continue }
            switch result {
            case .success(let value): promise.succeed(value)
            case .failure(let error): promise.fail(error)
            }
        }
    }

    func linkOpened() {
        reconnectWait.linkOpened()
        beat()
    }

    func linkClosed() {
        liveness.forget(livenessName)
        lastBeat = -.infinity  // the next link's opening beats at once
    }

    /// The control loop beats here too: with the link silent, the timer fires at least at every
    /// heartbeat to the stand and at the link's silence limit.
    func timerWoke() { beat() }

    /// At most ten times a second (the watchdog's limit is half its interval, seconds): not a lock
    /// taken for each of a hundred FEEDBACKs a second.
    private func beat() {
        let now = clock.now()
        guard now - lastBeat >= 0.1 else { return }
        lastBeat = now
        liveness.beat(livenessName, at: now)
    }

    func mayReadInBatches(_ engine: inout StandEngine) -> Bool {
        waiting.isEmpty && !hub.wants(.motion) && !hub.wants(.events)
            && engine.linkState == .connected && engine.motionActivity == .idle
    }
}

/// What lookups read without going to the stand's loop: its id and link state.
final class StandLookup: Sendable {
    struct Summary: Sendable { var id: String?; var state: LinkState }
    private let summary = Mutex(Summary(id: nil, state: .disconnected))

    var standID: String? { summary.withLock { $0.id } }
    var linkState: LinkState { summary.withLock { $0.state } }

    /// Whether this changed them.
    func update(id: String?, state: LinkState) -> Bool {
        summary.withLock { summary in
            guard summary.id != id || summary.state != state else { return false }
            summary = Summary(id: id, state: state)
            return true
        }
    }
}

extension EngineLog.Level {
    var swiftLog: Logger.Level {
        switch self {
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        case .critical: .critical
        }
    }
}
