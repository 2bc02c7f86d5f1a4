#if canImport(Glibc)
import Glibc
#endif

/// Tells when a device node appears at a path (its name created in its directory: devtmpfs creates
/// the node as the kernel registers the device; udev's links follow), so a stand kept on a node
/// reconnects when its device is back instead of at its backoff's next try where no udev announces
/// it (hotplug off, a container without udev). One thread, asleep in poll(2) on inotify, for as
/// long as the watch lasts: a reconnection wait, at most 8 s.
public final class NodeWatch: Sendable {
    /// The thread's wake-up: signalled by `stop()`, closed by the thread when it ends.
    private let wake: WakePipe

    private init(wake: WakePipe) { self.wake = wake }

    /// Watches for `path` to appear and become usable (this process may open it: udev's rule has
    /// given it its group and mode); `appeared` runs once, on the watch's thread, when it does. nil
    /// when there is nothing to watch: the path is usable already (then `appeared` has run, on the
    /// caller's thread), or it cannot be watched (its directory is missing, no inotify: then the
    /// caller's backoff is all there is).
    public static func start(path: String, appeared: @escaping @Sendable () -> Void) -> NodeWatch? {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else { return nil }
        guard inotify_add_watch(inotify, directory, UInt32(IN_CREATE | IN_MOVED_TO | IN_ATTRIB)) >= 0, let wake = WakePipe() else {
            close(inotify)
            return nil
        }
        // Usable between the caller's look and the watch: no event will say so.
        if usable(path) {
            close(inotify)
            wake.close()
            appeared()
            return nil
        }
        let watch = NodeWatch(wake: wake)
        guard DetachedThread.start({ watch.serve(inotify: inotify, path: path, name: name, appeared: appeared) }) else {
            close(inotify)
            wake.close()
            return nil
        }
        return watch
    }

    /// Ends the watch (its thread wakes and exits); `appeared` does not run after the thread has seen this.
    public func stop() { wake.signal() }

    private func serve(inotify: Int32, path: String, name: String, appeared: @Sendable () -> Void) {
        defer {
            close(inotify)
            wake.close()
        }
        var fds = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return }
            if fds[1].revents != 0 { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { continue }
            // devtmpfs creates the node root's, 0600; udev's rule gives it its group and mode next:
            // only then can dockd (User=dockd) open it, and an open before would fail and double the
            // backoff. Its attribute change is the second event.
            if Self.names(in: buffer[..<count]).contains(name), Self.usable(path) { return appeared() }
        }
    }

    /// There, and this process may open it for reading and writing.
    public static func usable(_ path: String) -> Bool { access(path, R_OK | W_OK) == 0 }

    /// The file names of the inotify events in `bytes` (each a struct inotify_event: wd, mask,
    /// cookie, len, then `len` bytes of NUL-padded name).
    static func names(in bytes: ArraySlice<UInt8>) -> [String] {
        let header = MemoryLayout<inotify_event>.size
        return Array(bytes).withUnsafeBytes { raw in
            var names: [String] = []
            var offset = 0
            while offset + header <= raw.count {
                let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let name = raw[(offset + header)..<min(raw.count, offset + header + length)].prefix { $0 != 0 }
                names.append(String(decoding: name, as: UTF8.self))
                offset += header + length
            }
            return names
        }
    }
}
