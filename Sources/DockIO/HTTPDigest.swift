/// HTTP Digest access authentication (RFC 7616 / 2617, MD5, qop=auth): what an ONVIF camera may
/// ask for instead of (or besides) a WS-Security token. Holds the camera's last challenge and its
/// nonce count, so that each request after the first goes authorized without a 401 round trip.
struct HTTPDigest: Sendable {
    struct Challenge: Sendable, Equatable {
        var realm: String
        var nonce: String
        var opaque: String?
        /// The server offered qop=auth (else RFC 2069's response, without a count).
        var qopAuth: Bool
    }

    private(set) var challenge: Challenge?
    private var count: UInt32 = 0

    /// A `WWW-Authenticate: Digest …` header's challenge; nil for another scheme, a digest
    /// algorithm other than MD5, or one without realm or nonce.
    static func challenge(_ header: String) -> Challenge? {
        guard header.lowercased().hasPrefix("digest ") else { return nil }
        var fields: [String: String] = [:]
        var rest = Substring(header.dropFirst(7))
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let key = rest[..<equals].trimmingSpaces.lowercased()
            rest = rest[rest.index(after: equals)...]
            let value: Substring
            if rest.first == "\"" {
                rest = rest.dropFirst()
                guard let close = rest.firstIndex(of: "\"") else { return nil }
                value = rest[..<close]
                rest = rest[rest.index(after: close)...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingSpaces
                rest = rest[end...]
            }
            fields[key] = String(value)
        }
        guard let realm = fields["realm"], let nonce = fields["nonce"], (fields["algorithm"] ?? "MD5").uppercased() == "MD5" else { return nil }
        let qops = (fields["qop"] ?? "").split(separator: ",").map { $0.trimmingSpaces }
        return Challenge(realm: realm, nonce: nonce, opaque: fields["opaque"], qopAuth: qops.contains("auth"))
    }

    /// Keeps a new challenge (a 401's); the nonce count starts again.
    mutating func accept(_ challenge: Challenge) {
        self.challenge = challenge
        count = 0
    }

    /// The Authorization header for a request under the challenge kept; nil without one.
    mutating func authorization(user: String, password: String, method: String, uri: String, cnonce: String) -> String? {
        guard let challenge else { return nil }
        count += 1
        let ha1 = MD5.hex("\(user):\(challenge.realm):\(password)")
        let ha2 = MD5.hex("\(method):\(uri)")
        let hex = String(count, radix: 16)
        let nc = String(repeating: "0", count: max(0, 8 - hex.count)) + hex
        var header = "Digest username=\"\(user)\", realm=\"\(challenge.realm)\", nonce=\"\(challenge.nonce)\", uri=\"\(uri)\", algorithm=MD5"
        if challenge.qopAuth {
            let response = MD5.hex("\(ha1):\(challenge.nonce):\(nc):\(cnonce):auth:\(ha2)")
            header += ", qop=auth, nc=\(nc), cnonce=\"\(cnonce)\", response=\"\(response)\""
        } else {
            header += ", response=\"\(MD5.hex("\(ha1):\(challenge.nonce):\(ha2)"))\""
        }
        if let opaque = challenge.opaque { header += ", opaque=\"\(opaque)\"" }
        return header
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        guard let first = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else { return "" }
        return self[first...last]
    }
}
