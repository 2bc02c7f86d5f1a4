/// SOAP 1.2 envelopes for ONVIF and their WS-Security UsernameToken (OASIS Username Token
/// Profile 1.0: PasswordDigest = Base64(SHA-1(nonce + Created + password))), pure so that they are
/// tested byte for byte; DockIO's `ONVIFLink` fills in the nonce, the time and the password.
public enum ONVIFSOAP {
    public static let soap = "http://www.w3.org/2003/05/soap-envelope"
    public static let device = "http://www.onvif.org/ver10/device/wsdl"
    public static let media = "http://www.onvif.org/ver10/media/wsdl"
    public static let ptz = "http://www.onvif.org/ver20/ptz/wsdl"
    public static let schema = "http://www.onvif.org/ver10/schema"
    static let wsse = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
    static let wsu = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
    static let passwordDigest = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"
    static let base64Binary = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-soap-message-security-1.0#Base64Binary"

    /// A whole envelope around a Body's content (which uses the prefixes tds, trt, tptz and tt).
    public static func envelope(body: [UInt8], security: String?) -> [UInt8] {
        let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><s:Envelope xmlns:s=\"\(soap)\" xmlns:tds=\"\(device)\" "
            + "xmlns:trt=\"\(media)\" xmlns:tptz=\"\(ptz)\" xmlns:tt=\"\(schema)\"><s:Header>\(security ?? "")</s:Header><s:Body>"
        return Array(head.utf8) + body + Array("</s:Body></s:Envelope>".utf8)
    }

    /// The wsse:Security header for `user` at `created` (the camera's clock, `created(_:)`).
    public static func usernameToken(user: String, password: String, nonce: [UInt8], created: String) -> String {
        let digest = Base64.encode(SHA1.digest(nonce + Array(created.utf8) + Array(password.utf8)))
        return "<wsse:Security xmlns:wsse=\"\(wsse)\" xmlns:wsu=\"\(wsu)\"><wsse:UsernameToken>"
            + "<wsse:Username>\(escape(user))</wsse:Username>"
            + "<wsse:Password Type=\"\(passwordDigest)\">\(digest)</wsse:Password>"
            + "<wsse:Nonce EncodingType=\"\(base64Binary)\">\(Base64.encode(nonce))</wsse:Nonce>"
            + "<wsu:Created>\(created)</wsu:Created></wsse:UsernameToken></wsse:Security>"
    }

    /// xs:dateTime in UTC to the second, from seconds since 1970.
    public static func created(_ unixSeconds: Double) -> String {
        let seconds = Int64(unixSeconds.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let inDay = seconds - days * 86_400
        let (y, m, d) = civil(days)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(y)-\(two(m))-\(two(d))T\(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60))Z"
    }

    /// Seconds since 1970 of a UTC date and time (GetSystemDateAndTime's UTCDateTime).
    public static func unixSeconds(year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64) -> Double {
        // Days from civil (Howard Hinnant's algorithm, proleptic Gregorian).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second)
    }

    private static func civil(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    public static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }

    /// A reply's Body content, or the reason of its Fault (SOAP 1.2: Reason/Text, with the Code's
    /// innermost Subcode value, e.g. "ter:NotAuthorized: Sender not authorized").
    public static func body(of envelope: XMLElement) -> Result<XMLElement, ONVIFFault> {
        guard envelope.namespace == soap, envelope.name == "Envelope", let body = envelope.child("Body"), body.namespace == soap else {
            return .failure(ONVIFFault(reason: "not a SOAP 1.2 envelope"))
        }
        guard let fault = body.child("Fault") else {
            guard let content = body.children.first else { return .failure(ONVIFFault(reason: "an empty SOAP Body")) }
            return .success(content)
        }
        var code = fault.child("Code")
        var value = code?.value("Value")
        while let sub = code?.child("Subcode") { code = sub; value = sub.value("Value") ?? value }
        let reason = fault.child("Reason")?.value("Text") ?? "no reason given"
        return .failure(ONVIFFault(reason: (value.map { "\($0): " } ?? "") + reason))
    }
}

public struct ONVIFFault: Error, Sendable, Equatable {
    public let reason: String
    public init(reason: String) { self.reason = reason }
}
