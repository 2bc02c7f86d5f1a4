import NIOCore
import Synchronization

/// Asynchronous operations run one at a time, in the order they were asked: each starts once the
/// one before it has ended, done or failed (a failure is its caller's, not the next one's).
final class OneAtATime: Sendable {
    /// The last operation asked: the next one starts after it.
    private let last: Mutex<EventLoopFuture<Void>>

    init(loop: any EventLoop) {
        last = Mutex(loop.makeSucceededVoidFuture())
    }

    func run<T: Sendable>(_ operation: @escaping @Sendable () -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        last.withLock { last in
            let result = last.flatMap(operation)
            last = result.map { _ in }.recover { _ in }
            return result
        }
    }
}
