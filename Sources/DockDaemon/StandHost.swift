import DockCore
import DockDrivers
import DockTracking
import DockIO
import DockProtocol
import Logging
import NIOCore
import StandEngine
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One stand, from the daemon's side: its engine run by a `LinkSessionHost` (DockIO, the host
/// dock-driver-probe runs its sessions in too) on one event loop together with its link, so the
/// control path runs on one thread with no hops (bytes in → engine → bytes out in the same call),
/// one timer for the engine's next tick, and the link read in batches while the stand is at rest
/// and nobody watches it (`StandShell`). What is the daemon's: the link reopened with backoff
/// (0.25 s doubling to 8 s, PROTOCOL.md §5) for as long as the stand is configured, and the clients'
/// commands and reads, on the engine's loop.
final class StandHost: Sendable {
    let endpoint: StandEndpoint
    var loop: any EventLoop { host.loop }
    private let host: LinkSessionHost<StandShell>
    private let lookup = StandLookup()
    private let reconnectWait = ReconnectWait()
    /// The engine was told `.shutdown` (`stopMotors`, `shutdown`).
    private let engineShutDown = Atomic<Bool>(false)
    private let clock: DaemonClock
    private let logger: Logger

    init(endpoint: StandEndpoint, driver: any StandDriver, settings: EngineSettings, loop: any EventLoop, hub: EventHub,
         clock: DaemonClock, liveness: Liveness, logger: Logger, linkStateChanged: @escaping @Sendable () -> Void = {}) {
        self.endpoint = endpoint
        self.clock = clock
        var logger = logger
        logger[metadataKey: "stand"] = "\(endpoint)"
        logger[metadataKey: "endpoint"] = "\(endpoint)"
        self.logger = logger
        let engine = StandEngine(driver: driver, settings: settings, fallbackName: "\(endpoint)")
        let shell = StandShell(endpointName: "\(endpoint)", lookup: lookup, hub: hub, clock: clock, liveness: liveness,
                               logger: logger, reconnectWait: reconnectWait, linkStateChanged: linkStateChanged)
        host = LinkSessionHost(session: engine, shell: shell, loop: loop, now: { clock.now() })
    }

    var standID: String? { lookup.standID }
    var linkState: LinkState { lookup.linkState }

    // MARK: - Link lifecycle

    /// Keeps the stand connected until the task is cancelled: open, serve until the link closes,
    /// and reopen after a backoff (a minute for a stand of another protocol version).
    func run() async {
        var backoff = ProtocolTiming.reconnectBackoff.lowerBound
        // The USB device the stand last completed a handshake on, which a reopened node must hold.
        var standDevice: String?
        while !Task.isCancelled {
            // Looked at before the attempt, for the wait after it: a node back between a failed
            // attempt and the wait's own look was seen by neither (a replug in the VM, attached
            // 2.3 s late, at the backoff's next try).
            var nodeWasMissing = endpoint.deviceNode.map { !NodeWatch.usable($0) } ?? false
            do {
                if let node = endpoint.deviceNode, let expected = standDevice, let found = USBIdentity.of(node: node), found != expected {
                    throw USBIdentity.Changed(node: node, expected: expected, found: found)
                }
                let handshakesBefore = await read { $0.counters.handshakes }
                let link = try await host.open(endpoint)
                nodeWasMissing = false  // (it opened: a wait after this link is the backoff's)
                // Read while the device is there; it becomes the stand's once it has answered as one.
                let openedDevice = endpoint.deviceNode.flatMap(USBIdentity.of(node:))
                await link.untilClosed()
                let handshakes = await read { $0.counters.handshakes }
                // Only a link that made a handshake starts the backoff afresh: a stand that once
                // connected and now fails its handshakes is asked less and less often, as one that
                // never did. So is a stand that keeps contradicting its handshake
                // (`DriverReport.reconnect`), though each of its links had one.
                if handshakes > handshakesBefore, await !read({ $0.closedToDecideAgain }) { backoff = ProtocolTiming.reconnectBackoff.lowerBound }
                if handshakes > handshakesBefore, let openedDevice { standDevice = openedDevice }
            } catch {
                let reason = "\(error)"
                loop.execute { self.host.handle { engine, _, now in engine.handle(.connectFailed(reason: reason), at: now) } }
            }
            if Task.isCancelled { break }
            let reason = await read { $0.lastError } ?? "link closed"
            var metadata: Logger.Metadata = ["reason": "\(reason)"]
            if let id = standID { metadata["stand"] = .string(id) }
            let delay = await read({ $0.incompatible }) ? ProtocolTiming.incompatibleRetry : backoff
            logger.info("reconnecting in \(delay) s", metadata: metadata)
            await reconnectWait.sleep(seconds: delay, deviceNode: endpoint.deviceNode, nodeWasMissing: nodeWasMissing, logger: logger)
            backoff = min(ProtocolTiming.reconnectBackoff.upperBound, backoff * 2)
        }
    }

    /// udev announced this stand's device node again: reconnect now rather than at the backoff's next
    /// try (`ReconnectWait`).
    func deviceReturned() { reconnectWait.deviceReturned() }

    // MARK: - Commands and reads

    /// Runs a client's command on the stand's loop (at once when called on it), after the bytes the
    /// stand has sent; the reply may come later (a STOP waits for its acknowledgement). The future
    /// fails with an `EngineError`.
    func submit(_ command: EngineCommand, from client: ClientRef, force: Bool = false) -> EventLoopFuture<CommandResult> {
        let promise = loop.makePromise(of: CommandResult.self)
        onLoop {
            self.host.readHeldBytes()
            self.host.handle { engine, shell, now in
                engine.handle(.command(command, from: client, force: force, token: shell.awaitReply(promise)), at: now)
            }
        }
        return promise.futureResult
    }

    func command(_ command: EngineCommand, from client: ClientRef, force: Bool = false) async throws(EngineError) -> CommandResult {
        do {
            return try await submit(command, from: client, force: force).get()
        } catch let error as EngineError {
            throw error
        } catch {
            throw .motionFailed("\(error)")
        }
    }

    /// The configuration was reloaded: the camera and lost-subject behaviour from now on. Returns
    /// once the engine has them, so that the reload's "configuration reloaded" (and systemd's
    /// READY=1 after it) mean in force: a client asking right after saw the old camera.
    func configure(camera: CameraModel, lostBehaviour: LostSubjectBehaviour, lostHold: Double) async {
        // The loop runs for as long as the daemon does, so the submit cannot fail.
        try? await loop.submit {
            self.host.handle { engine, _, now in
                engine.handle(.configure(camera: camera, lostBehaviour: lostBehaviour, lostHold: lostHold), at: now)
            }
        }.get()
    }

    /// An administrator's new defaults.
    func setDefaults(_ defaults: StandDefaults) {
        loop.execute { self.host.handle { engine, _, now in engine.handle(.defaults(defaults), at: now) } }
    }

    /// A client went away: what it held reverts.
    func clientGone(_ client: Int) {
        loop.execute { self.host.handle { engine, _, now in engine.handle(.clientGone(client), at: now) } }
    }

    /// Reads the engine's state on its loop (at once when called on it), after the bytes the
    /// stand has sent.
    func read<T: Sendable>(_ body: @escaping @Sendable (StandEngine) -> T) -> EventLoopFuture<T> {
        host.read(body)
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (StandEngine) -> T) async -> T {
        // The loop runs for as long as the daemon does (the singleton group is never shut down),
        // so the submit cannot fail.
        try! await read(body).get()
    }

    private func onLoop(_ body: @escaping @Sendable () -> Void) {
        if loop.inEventLoop { body() } else { loop.execute(body) }
    }

    /// The motors stop: the engine is shut down (once: `shutdown` does it too), on the stand's loop.
    func stopMotors() {
        onLoop { self.shutDownEngine() }
    }

    /// On the loop. A second `.shutdown` would stop the motors again: another STOP to the stand.
    private func shutDownEngine() {
        guard !engineShutDown.exchange(true, ordering: .relaxed) else { return }
        host.handle { engine, _, now in engine.handle(.shutdown, at: now) }
    }

    /// On daemon shutdown and detach: the motors stop, the host waits (at most `bound` seconds) for
    /// the stand to confirm the STOP, then closes the link as dockd's own doing, for `reason`.
    func shutdown(because reason: String, bound: Double = 0.5) async {
        let needed = try? await loop.submit {
            self.shutDownEngine()
            return self.host.inspect { $0.linkState == .connected }
        }.get()
        if needed == true {
            let deadline = clock.now() + bound
            while clock.now() < deadline, await read({ !$0.stopConfirmed }) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            if await read({ !$0.stopConfirmed }) { logger.warning("the stand did not confirm the STOP within \(bound) s") }
        }
        // Closed here with its reason: cancelling the host's task closes the channel without one,
        // which reads as the stand's end of file.
        try? await loop.submit { self.host.closeLink(because: "dockd closed the link: \(reason)") }.get()
    }

    /// Blocks this stand's event loop for `seconds`: the watchdog's test stall.
    func stallForTesting(seconds: Double) {
        loop.execute { usleep(UInt32(min(seconds, 60) * 1e6)) }
    }
}
