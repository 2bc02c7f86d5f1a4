import DockDrivers
import DockIO
import Testing

/// `onvif://` addresses: what is taken, what is refused (a password above all), and where the
/// password is read from.
@Suite struct ONVIFAddressTests {
    @Test func theFormsTaken() {
        #expect(StandEndpoint(parsing: "onvif://admin@192.168.0.64") == .onvif(ONVIFAddress(user: "admin", host: "192.168.0.64", port: 80)))
        #expect(StandEndpoint(parsing: "onvif://cam.local:8080/") == .onvif(ONVIFAddress(user: nil, host: "cam.local", port: 8080)))
        #expect(StandEndpoint(parsing: "onvif://op@[fe80::1]:8000") == .onvif(ONVIFAddress(user: "op", host: "fe80::1", port: 8000)))
        #expect("\(StandEndpoint(parsing: "onvif://op@[fe80::1]:8000"))" == "onvif://op@[fe80::1]:8000")
        #expect(StandEndpoint(parsing: "onvif://admin@10.0.0.1").linkKind == .onvif)
        let profiled = StandEndpoint(parsing: "onvif://admin@10.0.0.1:8080/Profile_1")
        #expect(profiled == .onvif(ONVIFAddress(user: "admin", host: "10.0.0.1", port: 8080, profile: "Profile_1")))
        #expect("\(profiled)" == "onvif://admin@10.0.0.1:8080/Profile_1" && profiled.driverOptions == ["profile": .text("Profile_1")])
    }

    @Test(arguments: ["onvif://admin:secret@10.0.0.1", "onvif://10.0.0.1:0", "onvif://10.0.0.1:70000", "onvif://@10.0.0.1",
                      "onvif://", "onvif://10.0.0.1/a/b", "onvif://[fe80::1"])
    func theFormsRefused(_ text: String) {
        #expect(StandEndpoint(parsing: text).linkKind != .onvif)
    }

    @Test func thePasswordFileIsTheOneNamedElseSystemdsCredentialElseEtcs() {
        var address = ONVIFAddress(user: "admin", host: "10.0.0.1", port: 80)
        #expect(address.credentialsPath { _ in nil } == "/etc/dockd/onvif/10.0.0.1.cred")
        #expect(address.credentialsPath { $0 == "CREDENTIALS_DIRECTORY" ? "/run/credentials/dockd.service" : nil }
                == "/run/credentials/dockd.service/onvif-10.0.0.1")
        address.credentials = "/srv/cam.cred"
        #expect(address.credentialsPath { _ in "/run/credentials/dockd.service" } == "/srv/cam.cred")
    }
}
