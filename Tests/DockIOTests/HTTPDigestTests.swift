@testable import DockIO
import Testing

/// MD5 on RFC 1321's test suite and HTTP Digest on RFC 2617's worked example (§3.5).
@Suite struct HTTPDigestTests {
    @Test func md5MatchesRFC1321() {
        #expect(MD5.hex("") == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(MD5.hex("abc") == "900150983cd24fb0d6963f7d28e17f72")
        #expect(MD5.hex("message digest") == "f96b697d7cb7938d525a2f31aaf161d0")
        #expect(MD5.hex("abcdefghijklmnopqrstuvwxyz") == "c3fcd3d76192e4007dfb496cca67e13b")
        #expect(MD5.hex(String(repeating: "1234567890", count: 8)) == "57edf4a22be3c955ac49da2e2107b67a")
    }

    @Test func theRFC2617ExampleAuthorizes() throws {
        let header = #"Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        let challenge = try #require(HTTPDigest.challenge(header))
        #expect(challenge == .init(realm: "testrealm@host.com", nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque: "5ccc069c403ebaf9f0171e9517f40e41", qopAuth: true))
        var digest = HTTPDigest()
        digest.accept(challenge)
        let first = digest.authorization(user: "Mufasa", password: "Circle Of Life", method: "GET", uri: "/dir/index.html", cnonce: "0a4f113b")
        let authorization = try #require(first)
        #expect(authorization.contains("nc=00000001") && authorization.contains(#"response="6629fae49393a05397450978507c4ef1""#))
        let second = digest.authorization(user: "Mufasa", password: "Circle Of Life", method: "GET", uri: "/", cnonce: "x")
        #expect(second?.contains("nc=00000002") == true)
    }

    @Test func otherSchemesAndAlgorithmsAreNotChallengesWeAnswer() {
        #expect(HTTPDigest.challenge(#"Basic realm="cam""#) == nil)
        #expect(HTTPDigest.challenge(#"Digest realm="cam", nonce="n", algorithm=SHA-256"#) == nil)
        #expect(HTTPDigest.challenge(#"Digest realm="cam""#) == nil)
        var none = HTTPDigest()
        let unchallenged = none.authorization(user: "u", password: "p", method: "POST", uri: "/", cnonce: "c")
        #expect(unchallenged == nil)
    }
}
