#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C, SIGTERM and SIGHUP for the commands that run until one comes (`watch`, `logs`, `--hold`).
/// They are blocked from the start and taken with sigtimedwait, so dockctl ends in order (the
/// connection closed, exit 0) however early one comes, and also when whoever started dockctl ignores
/// SIGINT: a background job of a script (`cmd &`, nohup) inherits SIGINT ignored, and Linux keeps a
/// blocked signal pending even then. Left at their defaults, an ignored SIGINT never ended `watch`.
struct StopSignals {
    private var signals = sigset_t()

    init() {
        sigemptyset(&signals)
        for s in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, s) }
        sigprocmask(SIG_BLOCK, &signals, nil)
    }

    /// Whether one has come since (it is taken); never waits.
    func arrived() -> Bool {
        var signals = signals
        var now = timespec()
        return sigtimedwait(&signals, nil, &now) >= 0
    }

    /// How long a command waits for dockd before looking for a signal again: how late Ctrl-C may act.
    static let checkInterval = 0.2
}
