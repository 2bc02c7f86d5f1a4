#if canImport(Glibc)
import Glibc
#endif
@testable import DockDaemon
import DockJSON
import DockTracking
import NIOPosix
import StandEngine
import Testing

/// The stands' defaults on disk, written and read with the C library (no Foundation in dockd).
struct DefaultsStoreTests {
    func temporaryDirectory() -> String {
        var template = Array("/tmp/dockd-defaults-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    let writer = StateWriter(loop: MultiThreadedEventLoopGroup.singleton.next())
    let settings = Shared(EngineSettings())

    @Test func savedDefaultsAreReadBackAndReplaceTheFileWhole() throws {
        let store = DefaultsStore(directory: temporaryDirectory(), writer: writer)
        #expect(store.load().defaults == StandDefaults() && store.load().problem == nil)
        let chosen = StandDefaults(systemTracking: false, framing: .left)
        #expect(try store.set(in: settings) { _ in chosen }.wait() == chosen)
        #expect(store.load().defaults == chosen && store.load().problem == nil && settings.current.defaults == chosen)
        _ = try store.set(in: settings) { _ in StandDefaults() }.wait()
        #expect(store.load().defaults == StandDefaults())
        #expect(access(store.path + ".new", F_OK) != 0, "the temporary file is renamed, not left behind")
    }

    @Test func twoSetsInARowEachChooseOverTheOneBeforeIt() throws {
        let slow = StateWriterTests.SlowFirstWrite()
        let store = DefaultsStore(directory: temporaryDirectory(), writer: StateWriter(loop: writer.loop, replace: slow.replace))
        let trackingOff = store.set(in: settings) { inForce in
            var d = inForce
            d.systemTracking = false
            return d
        }
        let framingLeft = store.set(in: settings) { inForce in
            var d = inForce
            d.framing = .left
            return d
        }
        #expect(slow.waitUntilWriting())
        slow.open()  // the first write ends only now, after the second was asked
        _ = try trackingOff.wait()
        let both = StandDefaults(systemTracking: false, framing: .left)
        #expect(try framingLeft.wait() == both)
        #expect(store.load().defaults == both && settings.current.defaults == both)
    }

    @Test func aFileThatCannotBeWrittenOrReadIsReportedWithItsReason() throws {
        let missing = DefaultsStore(directory: temporaryDirectory() + "/no-parent/nowhere", writer: writer)
        #expect(throws: RPCError.internal("cannot write \(missing.path): No such file or directory (the state directory: --state-directory or [daemon] state_directory)")) {
            _ = try missing.set(in: settings) { _ in StandDefaults(systemTracking: false) }.wait()
        }
        #expect(settings.current.defaults == StandDefaults(), "not in force: the file does not hold them")
        let store = DefaultsStore(directory: temporaryDirectory(), writer: writer)
        #expect(mkdir(store.path, 0o700) == 0)  // a directory where the file should be
        #expect(store.load().problem == "\(store.path) not used: Is a directory")
        let big = DefaultsStore(directory: temporaryDirectory(), writer: writer)
        let fd = open(big.path, O_WRONLY | O_CREAT, 0o600)
        #expect(ftruncate(fd, off_t(DefaultsStore.largestFile + 1)) == 0 && close(fd) == 0)
        #expect(big.load().problem == "\(big.path) not used: larger than \(DefaultsStore.largestFile) bytes")
    }
}
