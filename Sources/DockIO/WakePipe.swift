#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Wakes a thread asleep in poll(2) from outside: a pipe it polls beside what it waits for.
/// `signal()` writes a byte and marks it signalled; the thread calls `close()` once it is done with
/// the pipe, and a signal after that writes nowhere — the descriptor number may be another file's
/// by then.
public final class WakePipe: Sendable {
    private let state: Mutex<(read: Int32, write: Int32, signalled: Bool, closed: Bool)>

    /// nil when no pipe could be made (out of descriptors).
    public init?() {
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        state = Mutex((fds[0], fds[1], false, false))
    }

    /// What the thread polls.
    public var descriptor: Int32 { state.withLock { $0.read } }

    public var isSignalled: Bool { state.withLock { $0.signalled } }

    public func signal() {
        state.withLock { state in
            state.signalled = true
            guard !state.closed else { return }
            var byte: UInt8 = 1
            _ = write(state.write, &byte, 1)
        }
    }

    /// By the thread, after its last poll.
    public func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            _ = Glibc.close(state.read)
            _ = Glibc.close(state.write)
        }
    }
}
