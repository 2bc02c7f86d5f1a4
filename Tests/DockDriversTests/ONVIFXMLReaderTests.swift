import DockDrivers
import Testing

/// The strict XML reader on the emulator's real replies and on what a broken or hostile camera
/// might send: each refused with an error, never a crash, never an entity expanded.
@Suite struct ONVIFXMLReaderTests {
    func parse(_ text: String) throws(XMLReader.Failure) -> XMLElement { try XMLReader.parse(Array(text.utf8)) }

    @Test func itReadsTheEmulatorsRepliesWithTheirNamespaces() throws {
        let status = try ONVIFSOAP.body(of: parse(ONVIFEmulatorReplies.status)).get()
        #expect(status.namespace == ONVIFSOAP.ptz && status.name == "GetStatusResponse")
        let panTilt = try #require(status.find("Position")?.child("PanTilt"))
        #expect(panTilt.attributes["x"] == "0.250000" && panTilt.attributes["y"] == "-0.500000" && panTilt.namespace == ONVIFSOAP.schema)
        let profiles = try ONVIFSOAP.body(of: parse(ONVIFEmulatorReplies.profiles)).get()
        #expect(profiles.children("Profiles").map { $0.attributes["token"] } == ["Profile_1", "Profile_2"])
    }

    @Test func aFaultGivesItsSubcodeAndReason() throws {
        let result = ONVIFSOAP.body(of: try parse(ONVIFEmulatorReplies.notAuthorized))
        #expect(result == .failure(ONVIFFault(reason: "ter:NotAuthorized: Sender not authorized: wrong password digest")))
    }

    @Test func entitiesCDATAAndCharacterReferencesAreRead() throws {
        let e = try parse("<a x='1 &amp; 2'>&lt;&#65;&#x42;<![CDATA[<c>]]><!-- no --></a>")
        #expect(e.attributes["x"] == "1 & 2" && e.text == "<AB<c>")
    }

    @Test(arguments: [
        "<a>",                                               // truncated
        "<a><b></a></b>",                                    // crossed
        "<a></a><b/>",                                       // two roots
        "<a x=1/>",                                          // unquoted
        "<a x='1' x='2'/>",                                  // duplicate attribute
        "<p:a/>",                                            // unbound prefix
        "<a>&nbsp;</a>",                                     // an undeclared entity
        "<a>&#0;</a>",                                       // not a character
        "<?xml version=\"1.0\"?><!DOCTYPE a [<!ENTITY x \"xx\">]><a>&x;</a>",  // a DTD
        "<!DOCTYPE a SYSTEM \"file:///etc/passwd\"><a/>",    // an external entity
        "<a><!ENTITY x \"y\"></a>",                          // a declaration inside
        "\u{0}\u{13}7<<not xml>> {\"error\": true}",         // the emulator's 'malformed'
        "",
    ])
    func malformedDocumentsAreRefused(_ text: String) {
        #expect(throws: XMLReader.Failure.self) { try parse(text) }
    }

    @Test func theEmulatorsTruncatedReplyIsRefused() {
        let full = Array(ONVIFEmulatorReplies.status.utf8)
        for cut in stride(from: 1, to: full.count - 2, by: 97) {
            #expect(throws: XMLReader.Failure.self) { try XMLReader.parse(Array(full[..<cut])) }
        }
    }

    @Test func hugeOrDeepDocumentsAreRefusedWithoutRecursion() {
        #expect(throws: XMLReader.Failure.self) { try XMLReader.parse(Array("<a>".utf8) + [UInt8](repeating: 0x78, count: XMLReader.maximumBytes) + Array("</a>".utf8)) }
        #expect(throws: XMLReader.Failure.self) { try parse(String(repeating: "<a>", count: 100_000)) }
        #expect(throws: XMLReader.Failure.self) { try parse(String(repeating: "<a>", count: 65) + String(repeating: "</a>", count: 65)) }
    }
}
