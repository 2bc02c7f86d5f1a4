@testable import DockIO
import Foundation
import Synchronization
import Testing

/// The watch of a missing device node, on a real directory through real inotify.
@Suite struct NodeWatchTests {
    private func directory() -> String {
        let path = NSTemporaryDirectory() + "nodewatch-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Polls `condition` for up to 10 s (a loaded machine); the watch itself is not polled.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1000 where !condition() { try? await Task.sleep(for: .milliseconds(10)) }
        return condition()
    }

    @Test func aNodeCreatedInItsDirectoryIsTold() async throws {
        let dir = directory()
        let seen = Atomic<Int>(0)
        let watch = try #require(NodeWatch.start(path: "\(dir)/ttyUSB0") { seen.add(1, ordering: .relaxed) })
        defer { watch.stop() }
        FileManager.default.createFile(atPath: "\(dir)/ttyUSB1", contents: nil)  // another name: not it
        FileManager.default.createFile(atPath: "\(dir)/ttyUSB0", contents: nil)
        #expect(await eventually { seen.load(ordering: .relaxed) == 1 })
    }

    @Test func aNodeThereAlreadyIsToldAtOnce() {
        let dir = directory()
        FileManager.default.createFile(atPath: "\(dir)/video0", contents: nil)
        let seen = Atomic<Int>(0)
        #expect(NodeWatch.start(path: "\(dir)/video0") { seen.add(1, ordering: .relaxed) } == nil)
        #expect(seen.load(ordering: .relaxed) == 1)
    }

    @Test func aStoppedWatchTellsNothing() async throws {
        let dir = directory()
        let seen = Atomic<Int>(0)
        let watch = try #require(NodeWatch.start(path: "\(dir)/ttyACM0") { seen.add(1, ordering: .relaxed) })
        watch.stop()
        watch.stop()  // twice: the second finds the thread ended or ending, and writes nowhere
        // The wake-up is ready before the file's event: the thread takes it and ends.
        FileManager.default.createFile(atPath: "\(dir)/ttyACM0", contents: nil)
        try await Task.sleep(for: .milliseconds(100))
        #expect(seen.load(ordering: .relaxed) == 0)
    }

    @Test func aMissingDirectoryCannotBeWatched() {
        #expect(NodeWatch.start(path: "/nonexistent-\(UUID().uuidString)/ttyUSB0") {} == nil)
    }

    @Test func eventNamesAreReadPastTheirPadding() {
        func event(_ name: String, padded: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 12) + withUnsafeBytes(of: UInt32(padded).littleEndian, Array.init)
            bytes += Array(name.utf8) + [UInt8](repeating: 0, count: padded - name.utf8.count)
            return bytes
        }
        let bytes = event("ttyUSB0", padded: 16) + event("by-id", padded: 16) + event("", padded: 0)
        #expect(NodeWatch.names(in: bytes[...]) == ["ttyUSB0", "by-id", ""])
    }
}
