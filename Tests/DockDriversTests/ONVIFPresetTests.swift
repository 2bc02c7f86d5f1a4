import DockDrivers
import DockProtocol
import Testing

/// Presets in an ONVIF camera: SetPreset / RemovePreset on scripted replies, and what each answer
/// reports.
@Suite struct ONVIFPresetTests {
    let camera = ONVIFCameraDriverTests()

    func envelope(_ body: String) -> String {
        #"<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:tptz="http://www.onvif.org/ver20/ptz/wsdl" "#
            + #"xmlns:ter="http://www.onvif.org/ver10/error"><env:Body>\#(body)</env:Body></env:Envelope>"#
    }

    /// A ready driver whose first GetStatus is answered.
    func ready() -> ONVIFCameraDriver {
        var (driver, _) = camera.ready()
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.status), at: 1)
        return driver
    }

    @Test func aStoreIsSetPresetWithTheNameAndItsTokenComesBack() {
        var driver = ready()
        #expect(driver.cameraPresets == .tokens)
        let store = CameraPresetRequest.store(name: "stage", slot: nil)
        let sent = driver.cameraPreset(store, at: 1.01)
        #expect(camera.body(sent) == "<tptz:SetPreset><tptz:ProfileToken>Profile_1</tptz:ProfileToken><tptz:PresetName>stage</tptz:PresetName></tptz:SetPreset>")
        let answer = envelope("<tptz:SetPresetResponse><tptz:PresetToken>Preset7</tptz:PresetToken></tptz:SetPresetResponse>")
        #expect(driver.receive(camera.reply(answer), at: 1.02) == [.cameraPreset(store, .success(.token("Preset7")))])
        let again = CameraPresetRequest.store(name: "stage", slot: .token("Preset7"))
        #expect(camera.body(driver.cameraPreset(again, at: 1.03)).contains("<tptz:PresetName>stage</tptz:PresetName><tptz:PresetToken>Preset7</tptz:PresetToken>"))
    }

    @Test func aRemoveIsRemovePresetAndAFaultIsTheRefusal() {
        var driver = ready()
        let remove = CameraPresetRequest.remove(.token("Preset7"))
        #expect(camera.body(driver.cameraPreset(remove, at: 1.01))
                == "<tptz:RemovePreset><tptz:ProfileToken>Profile_1</tptz:ProfileToken><tptz:PresetToken>Preset7</tptz:PresetToken></tptz:RemovePreset>")
        let fault = envelope("<env:Fault><env:Code><env:Value>env:Sender</env:Value><env:Subcode><env:Value>ter:InvalidArgVal</env:Value>"
                             + "<env:Subcode><env:Value>ter:NoToken</env:Value></env:Subcode></env:Subcode></env:Code>"
                             + #"<env:Reason><env:Text xml:lang="en">no preset 'Preset7'</env:Text></env:Reason></env:Fault>"#)
        let refused = driver.receive(camera.reply(fault, status: 400), at: 1.02)
        guard case .cameraPreset(remove, .failure(let why))? = refused.first, refused.count == 1 else { Issue.record("\(refused)"); return }
        #expect(why.description.hasPrefix("RemovePreset: HTTP 400") && why.description.contains("no preset 'Preset7'"), "\(why)")
        let memory = CameraPresetRequest.remove(.memory(3))
        #expect(driver.cameraPreset(memory, at: 1.03).isEmpty)
        #expect(driver.tick(at: 1.04).reports == [.cameraPreset(memory, .failure(CameraPresetRefusal("an ONVIF camera keeps presets by token, not memory 3")))])
    }
}
