#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// SIGINT/SIGTERM as events instead of sudden death, so the socket file and the symlink are removed.
enum ExitSignals {
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
