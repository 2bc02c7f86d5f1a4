@testable import DockDaemon
import NIOConcurrencyHelpers
import Testing

/// Log lines leave on a thread of their own: a sink that blocks does not block the caller.
struct LogLineQueueTests {
    /// A sink whose first line waits until `open()` (up to a minute, then goes on and says so).
    final class BlockedSink: Sendable {
        let opened = ConditionLock(value: false)
        let openedInTime = NIOLockedValueBox<Bool?>(nil)
        let sent = NIOLockedValueBox<[String]>([])

        func send(_ line: String) {
            if sent.withLockedValue({ $0.isEmpty }) && openedInTime.withLockedValue({ $0 == nil }) {
                let inTime = opened.lock(whenValue: true, timeoutSeconds: 60)
                if inTime { opened.unlock() }
                openedInTime.withLockedValue { $0 = inTime }
            }
            sent.withLockedValue { $0.append(line) }
        }

        func open() {
            opened.lock()
            opened.unlock(withValue: true)
        }
    }

    @Test func aBlockedSinkDoesNotBlockTheCallerLinesKeepTheirOrderAndDropsAreCountedWhereTheyHappened() {
        let sink = BlockedSink()
        let queue = LogLineQueue<String>(capacity: 4, send: { sink.send($0) }, dropNote: { "dropped \($0)" })
        for i in 0..<10 { queue.enqueue("line \(i)") }  // the first blocks the sink: 4 queued, 6 dropped
        sink.open()
        queue.flush(upTo: 60)
        // The count goes out with the flush (dockd's last lines before it exits), not only before a next line.
        #expect(sink.sent.withLockedValue { $0 } == ["line 0", "line 1", "line 2", "line 3", "dropped 6"])
        queue.enqueue("line 10")
        queue.flush(upTo: 60)
        #expect(sink.openedInTime.withLockedValue { $0 } == true, "every line was given while the sink was blocked")
        #expect(sink.sent.withLockedValue { $0 } == ["line 0", "line 1", "line 2", "line 3", "dropped 6", "line 10"])
    }
}
