import DockDrivers
import Testing

/// WS-Discovery's datagrams as dockctl makes and reads them; what a LAN sends besides is
/// skipped or refused, never taken for a camera.
@Suite struct WSDiscoveryTests {
    static let id = "urn:uuid:1b4e28ba-2fa1-4d2b-a3f1-0c9a5e6f7d8e"

    static func probeMatches(relatesTo: String = id, match: String) -> [UInt8] {
        Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope" xmlns:w="http://schemas.xmlsoap.org/ws/2004/08/addressing" \
            xmlns:d="http://schemas.xmlsoap.org/ws/2005/04/discovery"><e:Header><w:RelatesTo>\(relatesTo)</w:RelatesTo></e:Header>\
            <e:Body><d:ProbeMatches>\(match)</d:ProbeMatches></e:Body></e:Envelope>
            """.utf8)
    }

    @Test func aProbeNamesOneTypeInItsNamespaceAndTheMessageID() throws {
        let probe = try XMLReader.parse(WSDiscovery.probe(for: .device, messageID: Self.id))
        let header = try #require(probe.child("Header"))
        #expect(header.value("MessageID") == Self.id)
        #expect(header.value("Action") == "http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe")
        let types = try #require(probe.child("Body")?.child("Probe")?.child("Types"))
        #expect(types.namespace == "http://schemas.xmlsoap.org/ws/2005/04/discovery" && types.text == "tds:Device")
        let nvt = String(decoding: WSDiscovery.probe(for: .networkVideoTransmitter, messageID: Self.id), as: UTF8.self)
        #expect(nvt.contains("xmlns:dn=\"http://www.onvif.org/ver10/network/wsdl\"") && nvt.contains("<d:Types>dn:NetworkVideoTransmitter</d:Types>"))
    }

    @Test func messageIDsAreVersion4UUIDs() {
        #expect(WSDiscovery.messageID(random: [UInt8](repeating: 0xFF, count: 16)) == "urn:uuid:ffffffff-ffff-4fff-bfff-ffffffffffff")
        #expect(WSDiscovery.messageID(random: [UInt8](repeating: 0, count: 16)) == "urn:uuid:00000000-0000-4000-8000-000000000000")
    }

    @Test func aMatchGivesItsScopesDecodedAndItsAttachAddress() throws {
        let found = try WSDiscovery.matches(in: Self.probeMatches(match: """
            <d:ProbeMatch><w:EndpointReference><w:Address>urn:uuid:cam</w:Address></w:EndpointReference>
            <d:Types>dn:NetworkVideoTransmitter</d:Types>
            <d:Scopes> onvif://www.onvif.org/type/PTZ
              onvif://www.onvif.org/name/Front%20Door onvif://www.onvif.org/hardware/C220 </d:Scopes>
            <d:XAddrs>https://10.0.0.9/onvif/device_service http://[fe80::1]:8000/onvif/device_service</d:XAddrs></d:ProbeMatch>
            """), answering: [Self.id])
        let match = try #require(found.first)
        #expect(found.count == 1 && match.endpoint == "urn:uuid:cam")
        #expect(match.name == "Front Door" && match.hardware == "C220" && match.advertisesPTZ)
        #expect(match.addresses.count == 2)
        // dockd speaks http: the https address is passed over for the IPv6 one, kept bracketed.
        let endpoint = try #require(match.httpEndpoint)
        #expect(endpoint.hostPort == "[fe80::1]:8000" && endpoint.standardPath)
    }

    @Test func aDeviceServiceElsewhereIsSaid() throws {
        let match = try #require(try WSDiscovery.matches(in: Self.probeMatches(match: """
            <d:ProbeMatch><w:EndpointReference><w:Address>urn:uuid:x</w:Address></w:EndpointReference>
            <d:XAddrs>http://10.0.0.7:8080/cgi/onvif</d:XAddrs></d:ProbeMatch>
            """), answering: [Self.id]).first)
        #expect(match.httpEndpoint?.hostPort == "10.0.0.7:8080" && match.httpEndpoint?.standardPath == false)
        #expect(!match.advertisesPTZ && match.name == nil)
    }

    @Test func answersToOtherProbesAndOtherMessagesAreNotDevices() throws {
        let other = Self.probeMatches(relatesTo: "urn:uuid:someone-else", match: """
            <d:ProbeMatch><w:EndpointReference><w:Address>urn:uuid:x</w:Address></w:EndpointReference></d:ProbeMatch>
            """)
        #expect(try WSDiscovery.matches(in: other, answering: [Self.id]).isEmpty)
        let hello = WSDiscovery.probe(for: .device, messageID: "urn:uuid:a-probe-someone-sent")
        #expect(try WSDiscovery.matches(in: hello, answering: [Self.id]).isEmpty)
    }

    @Test(arguments: ["not xml at all", "<a/>", "<e:Envelope xmlns:e='x'><e:Body/></e:Envelope>"])
    func garbageIsAnError(_ text: String) {
        #expect(throws: WSDiscovery.Failure.self) { try WSDiscovery.matches(in: Array(text.utf8), answering: [Self.id]) }
    }

    @Test func aMatchWithoutAnEndpointIsAnError() {
        let bad = Self.probeMatches(match: "<d:ProbeMatch><d:XAddrs>http://10.0.0.7/</d:XAddrs></d:ProbeMatch>")
        #expect(throws: WSDiscovery.Failure.self) { try WSDiscovery.matches(in: bad, answering: [Self.id]) }
    }
}
