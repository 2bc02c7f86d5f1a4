import DockDrivers
import DockProtocol
import Testing

/// Presets in a VISCA camera's memories (CAM_Memory), byte-exact in virtual time.
@Suite struct VISCAMemoryTests {
    let driverTests: VISCADriverTests

    init() throws { driverTests = try VISCADriverTests() }

    @Test func aStoreIsMemorySetItsCompletionReportsTheMemoryAndARemoveIsMemoryReset() {
        var (d, _) = driverTests.readyDriver()
        #expect(d.cameraPresets == .memories(0...89))
        let store = CameraPresetRequest.store(name: "stage", slot: .memory(12))
        #expect(d.cameraPreset(store, at: 0.08).hexText == "81 01 04 3f 01 0c ff")
        #expect(d.receive([0x90, 0x41, 0xFF], at: 0.085).isEmpty)
        #expect(d.receive([0x90, 0x51, 0xFF], at: 0.09) == [.cameraPreset(store, .success(.memory(12)))])
        let remove = CameraPresetRequest.remove(.memory(12))
        #expect(d.cameraPreset(remove, at: 0.1).hexText == "81 01 04 3f 00 0c ff")
        #expect(d.receive(VISCADriverTests.ackAndCompletion, at: 0.105) == [.cameraPreset(remove, .success(.memory(12)))])
    }

    @Test func aRefusalAndSilenceAreReportedAndAFullBufferSendsItAgain() {
        var (d, _) = driverTests.readyDriver()
        let store = CameraPresetRequest.store(name: "stage", slot: .memory(3))
        #expect(d.cameraPreset(store, at: 0.08).hexText == "81 01 04 3f 01 03 ff")
        #expect(d.receive([0x90, 0x60, 0x03, 0xFF], at: 0.085).isEmpty, "buffer full: sent again")
        #expect(d.tick(at: 0.3).bytes.hexText.hasPrefix("81 01 04 3f 01 03 ff"))
        #expect(d.receive([0x90, 0x61, 0x41, 0xFF], at: 0.31) == [.cameraPreset(store, .failure(CameraPresetRefusal("CAM_Memory: command not executable")))])
        _ = d.cameraPreset(store, at: 0.4)
        var reports: [DriverReport] = []
        var t = 0.4
        while t < 4 { t += 0.02; reports += d.tick(at: t).reports }
        #expect(reports.contains(.cameraPreset(store, .failure(CameraPresetRefusal("CAM_Memory: no answer")))))
    }

    @Test func aSlotOutsideTheProfilesMemoriesIsRefusedAndAProfileWithoutThemKeepsNone() {
        var (d, _) = driverTests.readyDriver()
        let outside = CameraPresetRequest.store(name: "x", slot: .memory(95))
        #expect(d.cameraPreset(outside, at: 0.08).isEmpty)
        #expect(d.tick(at: 0.09).reports.contains(.cameraPreset(outside, .failure(CameraPresetRefusal(
            "the profile generic-ptzoptics stores presets in memory 0…89 only, not memory 95")))))
        var profile = driverTests.profile
        profile.presetMemories = nil
        #expect(VISCADriver(profile: profile).cameraPresets == nil)
    }
}
