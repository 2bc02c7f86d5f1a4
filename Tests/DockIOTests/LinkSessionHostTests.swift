import DockDrivers
@testable import DockIO
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The host of a link session (dockd's stands, dock-driver-probe's runs) on a real pty.
@Suite struct LinkSessionHostTests {
    /// Wants its tick 2 s after the link opened, 4 s after once it has heard a byte (as a link's
    /// silence limit moves later with every read); then none.
    private struct LaterTick: LinkSession {
        struct Output: LinkSessionOutput {
            var writes: [[UInt8]] = []
            var closeLink: String?
            var ticked = false
        }
        var openedAt: Double?
        var heardAt: Double?
        var ticked = false

        var nextTick: Double? {
            guard !ticked, let openedAt else { return nil }
            return openedAt + (heardAt == nil ? 2 : 4)
        }

        mutating func handle(link event: LinkEvent, at now: Double) -> Output {
            switch event {
            case .opened: openedAt = now
            case .received: heardAt = heardAt ?? now
            case .tick:
                ticked = true
                return Output(ticked: true)
            case .closed: break
            }
            return Output()
        }
    }

    /// What the host did, in order.
    private final class Journal: LinkSessionShell, Sendable {
        typealias Session = LaterTick
        let entries = Mutex<[String]>([])
        func carryOut(_ output: LaterTick.Output, from host: LinkSessionHost<Journal>) {
            if output.ticked { entries.withLock { $0.append("tick") } }
        }
        func linkOpened() { entries.withLock { $0.append("opened") } }
        func timerWoke() { entries.withLock { $0.append("woke") } }
        var read: [String] { entries.withLock { $0 } }
    }

    /// Polls `condition` for up to 15 s (a loaded machine); the host itself is not polled.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1500 where !condition() { try? await Task.sleep(for: .milliseconds(10)) }
        return condition()
    }

    @Test func aTimerArmedForAnEarlierTickStaysWhenTheTickMovesLater() async throws {
        var master: CInt = -1, slave: CInt = -1
        try #require(openpty(&master, &slave, nil, nil, nil) == 0)
        defer { close(slave) }
        var name = [CChar](repeating: 0, count: 256)
        try #require(ttyname_r(slave, &name, name.count) == 0)
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)

        let clock = ContinuousClock(), origin = clock.now
        let journal = Journal()
        let host = LinkSessionHost(session: LaterTick(), shell: journal) {
            let d = clock.now - origin
            return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        }
        let link = try await host.open(.serial(path: path, baud: 115_200))
        #expect(await eventually { journal.read == ["opened"] })
        var byte: UInt8 = 0x55
        #expect(write(master, &byte, 1) == 1)
        #expect(await eventually { journal.read.contains("tick") })
        let (openedAt, heardAt) = try await host.read { ($0.openedAt ?? 0, $0.heardAt ?? .infinity) }
        try #require(heardAt < openedAt + 2, "the byte came after the first due time: nothing to judge")
        // The timer armed for the first due time woke the host then, and was armed again for the later one.
        #expect(journal.read == ["opened", "woke", "woke", "tick"])
        close(master)
        await link.untilClosed()
    }
}
