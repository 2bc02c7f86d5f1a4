@testable import DockDaemon
import NIOPosix
import Testing

/// The settings a reload and `defaults.set` both change, from different threads.
struct SharedTests {
    @Test func changesFromTwoThreadsAtOnceAreAllKept() async throws {
        let shared = Shared((first: 0, second: 0))
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        let changes = 100_000
        async let first: Void = pool.runIfActive { for _ in 0..<changes { shared.update { $0.first += 1 } } }
        async let second: Void = pool.runIfActive { for _ in 0..<changes { shared.update { $0.second += 1 } } }
        _ = try await (first, second)
        try await pool.shutdownGracefully()
        #expect(shared.current == (first: changes, second: changes), "a change made between another's read and its write is lost")
    }
}
