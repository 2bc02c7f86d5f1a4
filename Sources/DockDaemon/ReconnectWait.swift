import DockIO
import Logging
import Synchronization

/// The wait before a stand's next reconnection, cut short when its device comes back: udev saying
/// so (a stand back after 2 s would otherwise wait for the 3.75 s try), or a watch of its missing
/// device node.
final class ReconnectWait: Sendable {
    private struct Wait: Sendable { var cutShort = false; var sleeper: Task<Void, any Error>? }
    private let wait = Mutex(Wait())

    /// Sleeps `seconds`, or less when `deviceReturned()` comes meanwhile; not at all when it came
    /// since the last attempt (once: the next wait is whole again), nor when `nodeWasMissing` (not
    /// usable before the attempt) and the node is usable now: it came back after the attempt failed
    /// for it. (A node there all along waits out the backoff: the attempt failed for another reason.)
    func sleep(seconds: Double, deviceNode: String?, nodeWasMissing: Bool, logger: Logger) async {
        if nodeWasMissing, let node = deviceNode, NodeWatch.usable(node) {
            logger.info("the device node is back: reconnecting now", metadata: ["device": "\(node)"])
            return
        }
        // A device node that is gone (or not yet ours to open): its return, usable, cuts the wait
        // short too, udev or not.
        let watch = deviceNode.flatMap { node in
            NodeWatch.usable(node) ? nil : NodeWatch.start(path: node) { [weak self] in
                logger.info("the device node is back: reconnecting now", metadata: ["device": "\(node)"])
                self?.deviceReturned()
            }
        }
        defer { watch?.stop() }
        let sleeper = Task { try await Task.sleep(for: .seconds(seconds)) }
        let returned = wait.withLock { wait -> Bool in
            if wait.cutShort {
                wait.cutShort = false
                return true
            }
            wait.sleeper = sleeper
            return false
        }
        if returned { sleeper.cancel() }
        _ = try? await withTaskCancellationHandler { try await sleeper.value } onCancel: { sleeper.cancel() }
        wait.withLock { $0.sleeper = nil }
    }

    /// The device is back: the wait ends now. Also kept when it comes before the old link has
    /// noticed its end (a quick replug); an open link clears it (`linkOpened`), so a replayed add
    /// (`udevadm trigger`) never cuts a later wait short.
    func deviceReturned() {
        wait.withLock { wait in
            if let sleeper = wait.sleeper { sleeper.cancel() } else { wait.cutShort = true }
        }
    }

    func linkOpened() { wait.withLock { $0.cutShort = false } }
}
