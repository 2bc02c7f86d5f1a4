#if canImport(Glibc)
import Glibc
#endif
import NIOPosix
import Synchronization

/// Log lines sent by a thread of their own, in the order they were given: a sink that blocks (journald's
/// socket, full while journald is busy) never blocks the thread that logs — the event loop that runs
/// every stand and the API. The queue is bounded: a line given while it is full is dropped and
/// counted, and the count is sent, as a line of its own, where the lines were lost, once there is room.
final class LogLineQueue<Line: Sendable>: Sendable {
    /// Lines queued and being sent at most.
    let capacity: Int
    private let thread = NIOThreadPool(numberOfThreads: 1)
    private let send: @Sendable (Line) -> Void
    private let dropNote: @Sendable (_ dropped: Int) -> Line
    private let state = Mutex<(queued: Int, dropped: Int)>((0, 0))

    init(capacity: Int = 4096, send: @escaping @Sendable (Line) -> Void, dropNote: @escaping @Sendable (_ dropped: Int) -> Line) {
        self.capacity = capacity; self.send = send; self.dropNote = dropNote
        thread.start()
    }

    /// Queues the line, or counts it dropped when the queue is full; never waits for the sink.
    func enqueue(_ line: Line) {
        state.withLock { state in
            guard state.queued < capacity else { state.dropped += 1; return }
            submitDropCount(&state)
            submit(line, &state)
        }
    }

    /// The count of lines dropped since the last one queued, as a line of its own, if any were.
    private func submitDropCount(_ state: inout (queued: Int, dropped: Int)) {
        guard state.dropped > 0 else { return }
        submit(dropNote(state.dropped), &state)
        state.dropped = 0
    }

    /// Under the lock, so the thread takes lines in the order they were queued.
    private func submit(_ line: Line, _ state: inout (queued: Int, dropped: Int)) {
        state.queued += 1
        thread.submit { [send, self] _ in
            send(line)
            self.state.withLock { $0.queued -= 1 }
        }
    }

    /// Waits, at most `seconds`, until every queued line is sent (dockd before it exits), the count
    /// of lines dropped since the last one sent included.
    func flush(upTo seconds: Double) {
        state.withLock { submitDropCount(&$0) }
        let clock = DaemonClock()
        let deadline = clock.now() + seconds
        while state.withLock({ $0.queued }) > 0 && clock.now() < deadline { usleep(2_000) }
    }
}
