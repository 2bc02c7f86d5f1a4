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

    /// A new preset asked of a camera whose node takes two: the SetPreset goes at once, with no
    /// GetPresets before it (a round trip per save only to explain a refusal).
    func askedToStoreWhereTheNodeTakesTwo() -> (ONVIFCameraDriver, CameraPresetRequest) {
        let nodes = ONVIFEmulatorReplies.nodes.replacing("<tt:MaximumNumberOfPresets>16<", with: "<tt:MaximumNumberOfPresets>2<")
        var (driver, _) = camera.ready(nodes: nodes)
        _ = driver.receive(camera.reply(ONVIFEmulatorReplies.status), at: 1)
        let store = CameraPresetRequest.store(name: "stage", slot: nil)
        #expect(camera.action(driver.cameraPreset(store, at: 1.01)) == "/onvif/ptz_service tptz:SetPreset")
        return (driver, store)
    }

    var tooManyPresets: String {
        envelope("<env:Fault><env:Code><env:Value>env:Receiver</env:Value><env:Subcode><env:Value>ter:Action</env:Value>"
                 + "<env:Subcode><env:Value>ter:TooManyPresets</env:Value></env:Subcode></env:Subcode></env:Code>"
                 + #"<env:Reason><env:Text xml:lang="en">no room for another preset</env:Text></env:Reason></env:Fault>"#)
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
        // A new preset goes at once: the camera's presets are counted only if it refuses.
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

    /// A new preset the camera refuses where its node says how many it takes: the camera's presets
    /// are counted after the fault, and the refusal says the count and the limit beside the
    /// camera's reason.
    @Test func aNewPresetTheCameraRefusesIsExplainedByTheCountAskedAfterTheFault() {
        var (driver, store) = askedToStoreWhereTheNodeTakesTwo()
        #expect(driver.receive(camera.reply(tooManyPresets, status: 500), at: 1.03).isEmpty, "no outcome before the count")
        #expect(driver.nextDeadline == -.infinity, "the count goes at once")
        #expect(camera.body(driver.tick(at: 1.03).bytes) == "<tptz:GetPresets><tptz:ProfileToken>Profile_1</tptz:ProfileToken></tptz:GetPresets>")
        let refused = driver.receive(camera.reply(ONVIFEmulatorReplies.twoPresets), at: 1.04)
        guard case .cameraPreset(store, .failure(let why))? = refused.first, refused.count == 1 else { Issue.record("\(refused)"); return }
        #expect(why.description.hasPrefix("SetPreset: HTTP 500") && why.description.contains("no room for another preset")
                && why.description.hasSuffix("; the camera lists 2 presets, the most its PTZ node takes (MaximumNumberOfPresets 2): delete one first"),
                "\(why)")
    }

    /// The count asked after a fault fails too: the refusal is the camera's fault alone.
    @Test func aRefusalWhoseCountFailsIsTheFaultAlone() {
        var (driver, store) = askedToStoreWhereTheNodeTakesTwo()
        #expect(driver.receive(camera.reply(tooManyPresets, status: 500), at: 1.03).isEmpty)
        #expect(camera.action(driver.tick(at: 1.03).bytes) == "/onvif/ptz_service tptz:GetPresets")
        let refused = driver.receive(camera.reply("", status: 500), at: 1.04)
        guard case .cameraPreset(store, .failure(let why))? = refused.first, refused.count == 1 else { Issue.record("\(refused)"); return }
        #expect(why.description.hasPrefix("SetPreset: HTTP 500") && why.description.hasSuffix("no room for another preset"), "\(why)")
    }

    /// A new preset stored (a camera listing every slot, set or not, has room all the same): one
    /// SetPreset, its token back, no GetPresets.
    @Test func aNewPresetStoredCostsOneRequest() {
        var (driver, store) = askedToStoreWhereTheNodeTakesTwo()
        let answer = envelope("<tptz:SetPresetResponse><tptz:PresetToken>Preset2</tptz:PresetToken></tptz:SetPresetResponse>")
        #expect(driver.receive(camera.reply(answer), at: 1.03) == [.cameraPreset(store, .success(.token("Preset2")))])
        #expect(driver.nextDeadline != -.infinity, "nothing more to ask")
    }

    /// A node with MaximumNumberOfPresets 0 keeps no presets: dockd keeps them alone, as for a
    /// VISCA camera whose profile names no memories.
    @Test func aCameraWhoseNodeTakesNoPresetsIsAskedToStoreNone() {
        let nodes = ONVIFEmulatorReplies.nodes.replacing("<tt:MaximumNumberOfPresets>16<", with: "<tt:MaximumNumberOfPresets>0<")
        let (driver, reports) = camera.ready(nodes: nodes)
        #expect(driver.cameraPresets == nil)
        guard case .ready(let identity, _)? = reports.first else { Issue.record("\(reports)"); return }
        #expect(identity.hardware.contains("profile Profile_1; no presets, a home position; absolute"), "\(identity.hardware)")
    }
}
