#if canImport(Glibc)
import Glibc
#endif
@testable import DockDaemon
import DockIO
import DockJSON
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// The state files are written off the event loop that runs the stands and the API, in order.
struct StateWriterTests {
    func temporaryDirectory() -> String {
        var template = Array("/tmp/dockd-state-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    /// A writer whose first write waits until `open()` (up to a minute, then writes anyway and
    /// says so): a write as slow as the test wants. 0: not yet writing, 1: writing, 2: opened.
    final class SlowFirstWrite: Sendable {
        let state = ConditionLock(value: 0)
        let openedInTime = NIOLockedValueBox<Bool?>(nil)
        let writes = NIOLockedValueBox(0)

        var replace: StateWriter.Replace {
            { path, bytes throws(WholeFile.Failure) in
                let first = self.writes.withLockedValue { writes in
                    writes += 1
                    return writes == 1
                }
                if first {
                    self.state.lock()
                    self.state.unlock(withValue: 1)
                    let opened = self.state.lock(whenValue: 2, timeoutSeconds: 60)
                    if opened { self.state.unlock() }
                    self.openedInTime.withLockedValue { $0 = opened }
                }
                try WholeFile.replace(path, with: bytes)
            }
        }

        func waitUntilWriting() -> Bool {
            guard state.lock(whenValue: 1, timeoutSeconds: 60) else { return false }
            state.unlock()
            return true
        }

        func open() {
            state.lock()
            state.unlock(withValue: 2)
        }
    }

    /// A preset store on a loop of its own whose first write waits for `slow.open()`.
    func withSlowStore(_ body: (_ loop: EventLoop, _ slow: SlowFirstWrite, _ directory: String, _ store: PresetStore) throws -> Void) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let slow = SlowFirstWrite()
        let directory = temporaryDirectory()
        try body(loop, slow, directory, PresetStore(directory: directory, writer: StateWriter(loop: loop, replace: slow.replace)))
    }

    @Test func theLoopServesWhileAPresetIsWrittenAndTheSaveEndsOnceTheFileHoldsIt() throws {
        try withSlowStore { loop, slow, directory, store in
            let stage = Preset(yaw: 0.5, pitch: -0.2, zoom: nil)
            let saved = loop.flatSubmit { store.save(stage, as: "stage", for: "s") }
            #expect(slow.waitUntilWriting())
            // Only a task on the loop lets the write end: it runs only if the write does not hold the loop.
            loop.execute { slow.open() }
            try saved.wait()
            #expect(slow.openedInTime.withLockedValue { $0 } == true, "the loop ran a task while the file was being written")
            #expect(store.presets(of: "s")["stage"] == stage)
            #expect(PresetStore(directory: directory, writer: StateWriter(loop: loop)).presets(of: "s")["stage"] == stage)
        }
    }

    @Test func twoSavesInARowLandInOrderAndAFailedOneLeavesNothingInTheNext() throws {
        try withSlowStore { loop, slow, directory, store in
            let first = Preset(yaw: 0.1, pitch: 0, zoom: nil), second = Preset(yaw: 0.2, pitch: 0, zoom: nil)
            let saves = loop.submit {
                [store.save(first, as: "p", for: "s"), store.save(second, as: "p", for: "s")]
            }
            #expect(slow.waitUntilWriting())
            slow.open()  // the first write ends only now, after the second was asked
            for save in try saves.wait() { try save.wait() }
            #expect(PresetStore(directory: directory, writer: StateWriter(loop: loop)).presets(of: "s")["p"] == second)

            // The directory's parent gone: a save fails with the API's error, and the next one (the
            // parent back: the save makes the directory, mode 0750) holds only itself.
            let gone = temporaryDirectory() + "/parent", directory = gone + "/nowhere"
            let failing = PresetStore(directory: directory, writer: StateWriter(loop: loop))
            #expect(throws: RPCError.internal("cannot write \(directory)/presets.json: No such file or directory (the state directory: --state-directory or [daemon] state_directory)")) {
                try failing.save(first, as: "lost", for: "s").wait()
            }
            #expect(mkdir(gone, 0o700) == 0)
            try failing.save(second, as: "kept", for: "s").wait()
            #expect(PresetStore(directory: directory, writer: StateWriter(loop: loop)).presets(of: "s") == ["home": .home, "kept": second])
            var made = stat()
            #expect(stat(directory, &made) == 0 && made.st_mode & 0o777 == 0o750)
        }
    }
}
