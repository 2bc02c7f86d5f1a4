#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// SIGINT/SIGTERM as events instead of sudden death, so the socket file and the symlink are removed.
enum ExitSignals {
    /// Blocks SIGINT and SIGTERM in the calling thread, and so in every thread it starts later. Call
    /// it first, before any thread exists: libdispatch reads the signals through a signalfd, which
    /// only sees a signal that every thread blocks. A thread that did not block it took the signal
    /// and ignored it (SIG_IGN below), and dock-sim missed about one SIGTERM in 50.
    static func blockInEveryThread() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Keep the returned sources alive for as long as the handler should run.
    static func install(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)  // the default action would kill us before the source sees it
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }
}
