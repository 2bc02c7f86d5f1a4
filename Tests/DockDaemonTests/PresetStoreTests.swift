#if canImport(Glibc)
import Glibc
#endif
@testable import DockDaemon
import DockDrivers
import DockJSON
import NIOPosix
import Testing

/// The stands' presets on disk: what one dockd saves, the next one reads.
struct PresetStoreTests {
    func temporaryDirectory() -> String {
        var template = Array("/tmp/dockd-presets-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    let writer = StateWriter(loop: MultiThreadedEventLoopGroup.singleton.next())

    @Test func savedPresetsAreReadBackByTheNextStoreAndHomeIsBuiltIn() throws {
        let directory = temporaryDirectory()
        let store = PresetStore(directory: directory, writer: writer)
        #expect(store.presets(of: "SIM-0001") == ["home": .home] && store.problem == nil)
        let stage = Preset(yaw: 0.5000000298023224, pitch: -0.2, zoom: nil)
        try store.save(stage, as: "stage", for: "SIM-0001").wait()
        try store.save(Preset(yaw: 1, pitch: nil, zoom: nil), as: "home", for: "ptz-1").wait()
        let next = PresetStore(directory: directory, writer: writer)
        #expect(next.presets(of: "SIM-0001") == ["home": .home, "stage": stage], "every bit of the angle kept")
        #expect(next.isSaved("home", of: "ptz-1") && !next.isSaved("home", of: "SIM-0001"))
        _ = try next.delete("home", for: "ptz-1").wait()
        #expect(PresetStore(directory: directory, writer: writer).presets(of: "ptz-1") == ["home": .home])
        #expect(throws: RPCError.invalidParameter("stand ptz-1: home is the built-in home pose (nothing saved to delete)", field: "name")) {
            _ = try next.delete("home", for: "ptz-1").wait()
        }
    }

    @Test func cameraSlotsAreKeptInTheFileAndAFileWithABadOneIsNotUsed() throws {
        let directory = temporaryDirectory()
        let store = PresetStore(directory: directory, writer: writer)
        try store.save(Preset(yaw: 0.1, pitch: 0, zoom: 2, camera: .memory(7)), as: "stage", for: "ptz-1").wait()
        try store.save(Preset(yaw: 0.2, pitch: 0, zoom: nil, camera: .token("Preset3")), as: "desk", for: "onvif-1").wait()
        let next = PresetStore(directory: directory, writer: writer)
        #expect(next.presets(of: "ptz-1")["stage"]?.camera == .memory(7))
        #expect(next.presets(of: "onvif-1")["desk"]?.camera == .token("Preset3"))
        let bad: [JSONValue] = [["memory": JSONValue(256)], ["memory": JSONValue(1.5)], ["token": JSONValue("")],
                                ["memory": JSONValue(1), "token": JSONValue("a")], JSONValue(3)]
        for camera in bad {
            let value: JSONValue = ["stands": ["s": ["p": ["yaw": JSONValue(0), "pitch": JSONValue(0), "camera": camera]]]]
            #expect(throws: RPCError.self, "\(camera)") { try PresetStore.decode(value) }
        }
    }

    @Test func aNameKeepsItsMemoryAndANewOneTakesTheLowestFreeOneNotHeldByASaveUnderWay() throws {
        let store = PresetStore(directory: temporaryDirectory(), writer: writer)
        try store.save(Preset(yaw: 0, pitch: 0, zoom: nil, camera: .memory(0)), as: "a", for: "s").wait()
        try store.save(Preset(yaw: 0, pitch: 0, zoom: nil, camera: .memory(2)), as: "b", for: "s").wait()
        #expect(store.reserveMemory(for: "b", of: "s", in: 0...3) == 2, "its own")
        store.release(memory: 2, of: "s")
        #expect(store.reserveMemory(for: "c", of: "s", in: 0...3) == 1)
        #expect(store.reserveMemory(for: "d", of: "s", in: 0...3) == 3, "1 is held by c's save")
        #expect(store.reserveMemory(for: "e", of: "s", in: 0...3) == nil, "none free")
        store.release(memory: 1, of: "s")
        #expect(store.reserveMemory(for: "e", of: "s", in: 0...3) == 1)
        #expect(store.reserveMemory(for: "a", of: "s", in: 1...3) == nil, "a's memory 0 is outside the range: a new one, none free")
        #expect(store.reserveMemory(for: "a", of: "other", in: 0...3) == 0, "per stand")
    }

    @Test func aDeletedPresetsMemoryIsHeldUntilTheCameraHasResetIt() throws {
        // A save of another name must not Set the memory a delete is about to Reset: the Reset
        // could reach the camera after the Set and wipe the new preset. The memory is the
        // delete's until its Reset is answered (`release`), and the save takes another.
        let store = PresetStore(directory: temporaryDirectory(), writer: writer)
        try store.save(Preset(yaw: 0, pitch: 0, zoom: nil, camera: .memory(0)), as: "a", for: "s").wait()
        _ = try store.delete("a", for: "s").wait()
        #expect(store.reserveMemory(for: "b", of: "s", in: 0...3) == 1, "0 is being reset")
        store.release(memory: 0, of: "s")
        #expect(store.reserveMemory(for: "c", of: "s", in: 0...3) == 0, "reset: free again")
        try store.save(Preset(yaw: 0, pitch: 0, zoom: nil, camera: .memory(2)), as: "d", for: "s").wait()
        #expect(store.reserveMemory(for: "d", of: "s", in: 0...3) == 2, "d's save holds 2…")
        _ = try store.delete("d", for: "s").wait()
        store.release(memory: 2, of: "s")
        #expect(store.reserveMemory(for: "e", of: "s", in: 0...3) == 3, "…and so does d's delete, until both are answered")
        store.release(memory: 2, of: "s")
        #expect(store.reserveMemory(for: "f", of: "s", in: 0...3) == 2)
    }

    @Test func aStandKeepsAtMostAHundredPresets() throws {
        let store = PresetStore(directory: temporaryDirectory(), writer: writer)
        for i in 0..<PresetStore.maxPerStand { try store.save(.home, as: "p\(i)", for: "s").wait() }
        #expect(throws: RPCError.self) { try store.save(.home, as: "one-more", for: "s").wait() }
        try store.save(Preset(yaw: 1, pitch: 1, zoom: nil), as: "p0", for: "s").wait()  // replacing one is not one more
    }

    @Test func aFileThatCannotBeUsedIsMovedAsideNotOverwritten() throws {
        let directory = temporaryDirectory()
        let path = directory + "/presets.json"
        let bad = #"{"stands": {"s": {"../etc": {"yaw": 1}}}}"#
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        #expect(write(fd, bad, bad.utf8.count) == bad.utf8.count && close(fd) == 0)
        let store = PresetStore(directory: directory, writer: writer)
        #expect(store.problem?.contains("moved to \(path).unreadable") == true)
        #expect(access(path + ".unreadable", F_OK) == 0 && access(path, F_OK) != 0)
    }

    @Test(arguments: ["stage", "Desk_2", "a", String(repeating: "x", count: 32)])
    func goodNames(_ name: String) throws {
        try PresetName.check(name, field: "name")
    }

    @Test(arguments: ["", "-rf", "_x", "a b", "a/b", "../x", "é", "a.b", String(repeating: "x", count: 33)])
    func badNamesAreRefusedWithTheField(_ name: String) {
        #expect(throws: RPCError.invalidParams("name must be 1…32 letters, digits, '-' or '_', starting with a letter or digit", field: "name")) {
            try PresetName.check(name, field: "name")
        }
    }
}
