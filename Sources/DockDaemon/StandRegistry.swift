#if canImport(Glibc)
import Glibc
#endif
import DockDrivers
import DockIO
import Logging
import NIOCore
import StandEngine
import Synchronization

/// Every stand the daemon owns, looked up by its stable id (serial number).
final class StandRegistry: Sendable {
    private struct Entry: Sendable {
        let host: StandHost
        let task: Task<Void, Never>
        /// Attached because udev announced its device: released when udev says it is gone. A stand
        /// of dockd.conf or `stands.attach` is kept through an unplug (with its driver's options)
        /// and reconnects when its device is back.
        let releasedOnUnplug: Bool
    }
    private let entries = Mutex<[Entry]>([])
    private let makeHost: @Sendable (StandEndpoint, any StandDriver) -> StandHost

    init(makeHost: @escaping @Sendable (StandEndpoint, any StandDriver) -> StandHost) {
        self.makeHost = makeHost
    }

    /// Starts owning the stand at `endpoint`; false if it, or another link on its device node, is
    /// owned already.
    @discardableResult
    func add(endpoint: StandEndpoint, driver: any StandDriver, releasedOnUnplug: Bool = false) -> Bool {
        let node = endpoint.deviceNode.map(Self.resolved)
        return entries.withLock { entries in
            guard !entries.contains(where: { $0.host.endpoint == endpoint || (node != nil && $0.host.endpoint.deviceNode.map(Self.resolved) == node) })
            else { return false }
            let host = makeHost(endpoint, driver)
            entries.append(Entry(host: host, task: Task { await host.run() }, releasedOnUnplug: releasedOnUnplug))
            return true
        }
    }

    /// udev announced `deviceNode` (the kernel's name): the stand kept on it — configured by that name
    /// or by a udev link to it (/dev/serial/by-id/…, /dev/v4l/by-id/…) — reconnects now. False when
    /// none is kept there.
    func deviceReturned(_ deviceNode: String) -> Bool {
        let host = entries.withLock { $0.first(where: { $0.host.endpoint.deviceNode.map(Self.resolved) == deviceNode })?.host }
        host?.deviceReturned()
        return host != nil
    }

    /// The device node a path names, through udev's symlinks; the path itself while nothing is there.
    private static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// Stops the stand at `endpoint` and lets it go (a detach, or a reload that dropped it).
    @discardableResult
    func remove(endpoint: StandEndpoint, because reason: String) async -> Bool {
        await remove(because: reason) { $0.host.endpoint == endpoint }
    }

    /// The hotplugged stand on a device node udev says is gone, whatever its link (a tty at any baud,
    /// a video device). A kept stand stays: its link has failed and retries.
    func unplugged(deviceNode: String) async -> Bool {
        await remove(because: "its device was unplugged") { $0.releasedOnUnplug && $0.host.endpoint.deviceNode == deviceNode }
    }

    private func remove(because reason: String, where matches: (Entry) -> Bool) async -> Bool {
        let entry = entries.withLock { entries -> Entry? in
            guard let index = entries.firstIndex(where: matches) else { return nil }
            return entries.remove(at: index)
        }
        guard let entry else { return false }
        await entry.host.shutdown(because: reason)
        entry.task.cancel()
        await entry.task.value
        return true
    }

    var all: [StandHost] { entries.withLock { $0.map(\.host) } }

    /// The stand named `id`, or when none is named, the only connected one (then the first).
    func find(_ id: String?) throws(EngineError) -> StandHost {
        let hosts = all
        if let id {
            guard let host = hosts.first(where: { $0.standID == id }) else { throw .notConnected(stand: id) }
            return host
        }
        guard let host = hosts.first(where: { $0.linkState == .connected }) else { throw .notConnected(stand: nil) }
        return host
    }

    /// Tells every stand to stop its motors, at once and without waiting (SIGTERM: before the API and
    /// the daemon's tasks wind down, which took 0.35-0.55 s in the VM); `shutdown` then waits for it.
    func stopMotors() {
        for entry in entries.withLock({ $0 }) { entry.host.stopMotors() }
    }

    /// Stops every stand's motors (each waits for its STOP to be confirmed, bounded), then ends the hosts.
    func shutdown() async {
        let all = entries.withLock { $0 }
        await withTaskGroup(of: Void.self) { group in
            for entry in all { group.addTask { await entry.host.shutdown(because: "dockd is stopping") } }
        }
        for entry in all { entry.task.cancel() }
        for entry in all { await entry.task.value }
    }
}
