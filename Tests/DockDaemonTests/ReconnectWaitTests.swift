@testable import DockDaemon
import Foundation
import Logging
import Testing

/// The wait between reconnection attempts of a stand kept on a device node.
@Suite struct ReconnectWaitTests {
    let logger = Logger(label: "test")

    /// A node missing at the attempt and back by the wait (a replug between the failed open and the
    /// wait's start): no wait. Before, the wait looked only then, found it there, watched nothing
    /// and slept its whole backoff (in the VM a replugged camera attached 2.3 s late).
    @Test func aNodeBackBetweenTheFailedAttemptAndTheWaitEndsItAtOnce() async throws {
        let node = FileManager.default.temporaryDirectory.appendingPathComponent("reconnect-wait-\(getpid())").path
        #expect(FileManager.default.createFile(atPath: node, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: node) }
        let start = ContinuousClock.now
        await ReconnectWait().sleep(seconds: 60, deviceNode: node, nodeWasMissing: true, logger: logger)
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    /// A node there all along: the attempt failed for another reason, and the backoff is waited out.
    @Test func aNodeThereAllAlongWaitsOutTheBackoff() async throws {
        let node = FileManager.default.temporaryDirectory.appendingPathComponent("reconnect-wait-there-\(getpid())").path
        #expect(FileManager.default.createFile(atPath: node, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: node) }
        let start = ContinuousClock.now
        await ReconnectWait().sleep(seconds: 0.3, deviceNode: node, nodeWasMissing: false, logger: logger)
        #expect(ContinuousClock.now - start >= .seconds(0.3))
    }
}
