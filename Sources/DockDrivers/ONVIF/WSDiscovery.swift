/// WS-Discovery (OASIS, April 2005 namespace: the one ONVIF's Core specification requires) as a
/// client uses it to find cameras: a Probe for a type, and the ProbeMatches devices answer with.
/// Pure: the datagrams are made and read here; sending them is DockIO's `ONVIFDiscovery`.
public enum WSDiscovery {
    public static let group = "239.255.255.250"
    public static let port = 3702
    static let discovery = "http://schemas.xmlsoap.org/ws/2005/04/discovery"
    static let addressing = "http://schemas.xmlsoap.org/ws/2004/08/addressing"
    static let soap = "http://www.w3.org/2003/05/soap-envelope"

    /// The types an ONVIF device advertises: ONVIF 1.0 devices only the first, later ones the
    /// second too, and a Probe naming both matches only devices with both, so each is probed alone.
    public enum DeviceType: CaseIterable, Sendable {
        case networkVideoTransmitter, device

        var qualifiedName: (prefix: String, namespace: String, name: String) {
            switch self {
            case .networkVideoTransmitter: ("dn", "http://www.onvif.org/ver10/network/wsdl", "NetworkVideoTransmitter")
            case .device: ("tds", "http://www.onvif.org/ver10/device/wsdl", "Device")
            }
        }
    }

    /// A Probe, as one SOAP-over-UDP datagram. `messageID` is the `urn:uuid:` the answers relate to.
    public static func probe(for type: DeviceType, messageID: String) -> [UInt8] {
        let t = type.qualifiedName
        return Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <s:Envelope xmlns:s="\(soap)" xmlns:a="\(addressing)" xmlns:d="\(discovery)" xmlns:\(t.prefix)="\(t.namespace)">\
            <s:Header><a:Action s:mustUnderstand="1">\(discovery)/Probe</a:Action>\
            <a:MessageID>\(ONVIFSOAP.escape(messageID))</a:MessageID>\
            <a:ReplyTo><a:Address>\(addressing)/role/anonymous</a:Address></a:ReplyTo>\
            <a:To s:mustUnderstand="1">urn:schemas-xmlsoap-org:ws:2005:04:discovery</a:To></s:Header>\
            <s:Body><d:Probe><d:Types>\(t.prefix):\(t.name)</d:Types></d:Probe></s:Body></s:Envelope>
            """.utf8)
    }

    /// A `urn:uuid:` of version 4 from 16 random bytes.
    public static func messageID(random bytes: [UInt8]) -> String {
        precondition(bytes.count == 16)
        var b = bytes
        b[6] = b[6] & 0x0F | 0x40
        b[8] = b[8] & 0x3F | 0x80
        let hex = b.map { byte in String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16) }
        let groups = [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }
        return "urn:uuid:" + groups.joined(separator: "-")
    }

    /// One device that answered.
    public struct Match: Sendable, Equatable {
        /// The device's endpoint reference (a `urn:uuid:` that stays the same across addresses).
        public var endpoint: String
        public var types: [String]
        public var scopes: [String]
        /// The device service's URLs.
        public var addresses: [String]

        /// The ONVIF scope values under a category (`name`, `hardware`, `location/...`, `type`),
        /// percent-decoded.
        public func scopeValues(_ category: String) -> [String] {
            let prefix = "onvif://www.onvif.org/\(category)/"
            return scopes.compactMap { scope in
                guard scope.lowercased().hasPrefix(prefix.lowercased()) else { return nil }
                return percentDecoded(String(scope.dropFirst(prefix.count)))
            }
        }

        public var name: String? { scopeValues("name").first }
        public var hardware: String? { scopeValues("hardware").first }
        /// Whether it advertises a PTZ service (the Core specification's `type/ptz` scope); a
        /// device that does not may still have one: only its GetCapabilities says for sure.
        public var advertisesPTZ: Bool { scopeValues("type").contains { $0.lowercased() == "ptz" } }

        /// The host and port of the first http device-service address, as `onvif://` wants them,
        /// and whether its path is the one dockd's driver uses.
        public var httpEndpoint: (hostPort: String, standardPath: Bool)? {
            for address in addresses where address.lowercased().hasPrefix("http://") {
                let rest = address.dropFirst("http://".count)
                let authority = rest.prefix { $0 != "/" }
                let path = rest.dropFirst(authority.count)
                guard !authority.isEmpty else { continue }
                // A URL's authority brackets an IPv6 host already, as an onvif:// address does.
                return (String(authority), path.isEmpty || path == "/" || path == ONVIFCameraDriver.devicePath)
            }
            return nil
        }
    }

    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The matches in a ProbeMatches datagram that answers one of `messageIDs`; an empty list for
    /// a datagram that is another message (a Hello, a Probe another client sent, an answer to
    /// another Probe); an error for one that is not XML or not a well-formed ProbeMatches.
    public static func matches(in datagram: [UInt8], answering messageIDs: Set<String>) throws(Failure) -> [Match] {
        let root: XMLElement
        do { root = try XMLReader.parse(datagram) } catch { throw Failure(description: "not XML: \(error)") }
        guard root.name == "Envelope", let header = root.child("Header"), let body = root.child("Body") else {
            throw Failure(description: "not a SOAP envelope")
        }
        guard let probeMatches = body.child("ProbeMatches"), probeMatches.namespace == discovery,
              let relatesTo = header.value("RelatesTo"), messageIDs.contains(relatesTo) else { return [] }
        var found: [Match] = []
        for match in probeMatches.children("ProbeMatch") {
            guard let endpoint = match.child("EndpointReference")?.value("Address"), !endpoint.isEmpty else {
                throw Failure(description: "a ProbeMatch without an EndpointReference")
            }
            func words(_ name: String) -> [String] { (match.value(name) ?? "").split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).map(String.init) }
            found.append(Match(endpoint: endpoint, types: words("Types"), scopes: words("Scopes"), addresses: words("XAddrs")))
        }
        return found
    }

    static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
               let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
