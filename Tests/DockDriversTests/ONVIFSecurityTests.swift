@testable import DockDrivers
import Testing

/// SHA-1, Base64 and the WS-Security UsernameToken against published vectors and an independent
/// implementation (Python's hashlib and base64 for the digest).
@Suite struct ONVIFSecurityTests {
    func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    @Test func sha1MatchesTheFIPS180Vectors() {
        #expect(hex(SHA1.digest([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(SHA1.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func base64MatchesRFC4648() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors { #expect(Base64.encode(Array(plain.utf8)) == encoded) }
    }

    @Test func thePasswordDigestIsBase64OfSHA1OfNonceCreatedAndPassword() {
        let token = ONVIFSOAP.usernameToken(user: "ad<min", password: "s3cret", nonce: Array(0..<16), created: "2026-11-25T21:47:01Z")
        #expect(token.contains(">6tlvOtTFaVC64s/L4r148Hyw8Ec=</wsse:Password>"))
        #expect(token.contains(">AAECAwQFBgcICQoLDA0ODw==</wsse:Nonce>"))
        #expect(token.contains("<wsse:Username>ad&lt;min</wsse:Username>") && !token.contains("s3cret"))
    }

    @Test func createdIsUTCToTheSecondAndReadsBack() {
        #expect(ONVIFSOAP.created(1_795_643_221.7) == "2026-11-25T21:47:01Z")
        #expect(ONVIFSOAP.created(951_868_799) == "2000-02-29T23:59:59Z")
        #expect(ONVIFSOAP.created(0) == "1970-01-01T00:00:00Z")
        #expect(ONVIFSOAP.unixSeconds(year: 2026, month: 11, day: 25, hour: 21, minute: 47, second: 1) == 1_795_643_221)
        #expect(ONVIFSOAP.unixSeconds(year: 2000, month: 2, day: 29, hour: 23, minute: 59, second: 59) == 951_868_799)
    }

    @Test func requestsAreEnvelopedWithTheirNamespacesAndNumbersWithoutExponents() throws {
        let envelope = ONVIFSOAP.envelope(body: Array(ONVIFRequests.continuousMove("P<1", x: -0.000001, y: 1, timeout: 1).utf8), security: nil)
        let text = String(decoding: envelope, as: UTF8.self)
        #expect(text.contains("<tptz:ProfileToken>P&lt;1</tptz:ProfileToken>"))
        #expect(text.contains("x=\"-0.000001\" y=\"1.000000\"") && text.contains("<tptz:Timeout>PT1S</tptz:Timeout>"))
        // What is sent reads back as SOAP 1.2 with the request in the PTZ namespace.
        let body = try ONVIFSOAP.body(of: XMLReader.parse(envelope)).get()
        #expect(body.namespace == ONVIFSOAP.ptz && body.name == "ContinuousMove")
    }
}
