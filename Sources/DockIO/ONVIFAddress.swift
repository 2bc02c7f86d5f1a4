/// Where an ONVIF camera is reached: `onvif://[user@]host[:port][/profile]` (port 80 by default;
/// the media profile's token, else the driver picks), and the file its password is read from. The password itself is never part of an address: addresses
/// show in logs and API replies.
public struct ONVIFAddress: Sendable, Equatable, CustomStringConvertible {
    public var user: String?
    public var host: String
    public var port: Int
    /// The media profile to steer (the driver's `profile` option, given in the address).
    public var profile: String?
    /// The password file; nil: `$CREDENTIALS_DIRECTORY/onvif-HOST` (systemd's LoadCredential=),
    /// else /etc/dockd/onvif/HOST.cred. Unused without a user.
    public var credentials: String?

    public init(user: String?, host: String, port: Int, profile: String? = nil, credentials: String? = nil) {
        self.user = user; self.host = host; self.port = port; self.profile = profile; self.credentials = credentials
    }

    /// `[user@]host[:port][/profile]` or `[user@][IPv6]:port[/profile]`, after the scheme; nil when
    /// it is not one (an empty host or user, a port outside 1…65535, a password after a colon, a
    /// path of more than one token).
    public init?(parsing text: Substring) {
        var rest = text
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if let slash = rest.firstIndex(of: "/") {
            let token = rest[rest.index(after: slash)...]
            guard !token.isEmpty, !token.contains("/") else { return nil }
            profile = String(token)
            rest = rest[..<slash]
        } else {
            profile = nil
        }
        guard !rest.contains(" ") else { return nil }
        if let at = rest.lastIndex(of: "@") {
            let user = rest[..<at]
            guard !user.isEmpty, !user.contains(":") else { return nil }  // user:password@ is refused: no passwords in addresses
            self.user = String(user)
            rest = rest[rest.index(after: at)...]
        } else {
            user = nil
        }
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.isEmpty { port = 80 } else {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()), (1...65535).contains(p) else { return nil }
                port = p
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else { return nil }
            host = String(rest[..<colon])
            port = p
        } else {
            host = String(rest)
            port = 80
        }
        guard !host.isEmpty else { return nil }
        credentials = nil
    }

    public var description: String {
        "onvif://" + (user.map { "\($0)@" } ?? "") + (host.contains(":") ? "[\(host)]" : host) + ":\(port)" + (profile.map { "/\($0)" } ?? "")
    }

    /// The password file to read: the one given, else systemd's credential, else /etc's.
    public func credentialsPath(environment: (String) -> String?) -> String {
        if let credentials { return credentials }
        if let directory = environment("CREDENTIALS_DIRECTORY"), !directory.isEmpty { return "\(directory)/onvif-\(host)" }
        return "/etc/dockd/onvif/\(host).cred"
    }
}
