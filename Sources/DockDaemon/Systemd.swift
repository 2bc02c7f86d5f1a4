import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The systemd side of a service: readiness, status lines, the watchdog and sockets passed in by
/// socket activation. Every call is a no-op when dockd was not started by systemd.
enum Systemd {
    static func notify(_ state: String) {
        _ = sd_notify(0, state)
    }

    static func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }
    static func status(_ text: String) { notify("STATUS=\(text)") }
    static func stopping() { notify("STOPPING=1") }
    static func reloading() { notify("RELOADING=1") }

    /// The watchdog interval systemd asked for, if any.
    static var watchdogInterval: Double? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return Double(usec) / 1e6
    }

    /// The listening socket systemd passed (LISTEN_FDS), preferring one named `api`.
    static func inheritedSocket() -> Int32? {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        guard count > 0 else { return nil }
        defer {
            for i in 0..<Int(count) { free(names?[i]) }
            free(names)
        }
        for i in 0..<Int(count) where names?[i].map({ String(cString: $0) }) == "api" {
            return SD_LISTEN_FDS_START + Int32(i)
        }
        return SD_LISTEN_FDS_START
    }
}
