import ArgumentParser
import DockClient
import DockDrivers
import DockJSON
import NIOCore

struct Discover: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find ONVIF cameras on the local network (WS-Discovery); dockd is not asked.",
        discussion: """
            Sends WS-Discovery Probes to 239.255.255.250:3702, the way ONVIF clients do, and lists \
            each camera that answers: its address, model and name (from its scopes), whether it \
            advertises PTZ, and the `dockctl attach` line for it. Multicast reaches this network \
            only; for a camera elsewhere give --address (a directed Probe). "ptz no" means the \
            camera does not say it has PTZ in its scopes; a few that do have it say so only in \
            their capabilities, which attaching reads.

            Exit status: 0 found at least one; 10 none answered; 64 usage; 1 the Probe could not be \
            sent (no network).
            """)

    @Option(help: "Seconds to wait for answers (0.1…60).") var timeout: Double = 3
    @Option(help: "Probe HOST[:PORT] directly (port 3702 by default) instead of the multicast group.") var address: String?
    @Flag(name: .long, help: "Print JSON: one compact object per camera.") var json = false

    func validate() throws {
        guard (0.1...60).contains(timeout) else { throw ValidationError("--timeout must be 0.1…60 s") }
        if let address { _ = try Self.target(address) }
    }

    /// HOST, HOST:PORT, [IPv6] or [IPv6]:PORT (an IPv6 address without brackets has no port).
    static func target(_ text: String) throws -> SocketAddress {
        var host = Substring(text), port = Substring("")
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(after: close)...]
            guard port.isEmpty || port.hasPrefix(":") else { throw ValidationError("--address \(text): not HOST[:PORT]") }
            port = port.dropFirst(port.isEmpty ? 0 : 1)
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        var number = WSDiscovery.port
        if !port.isEmpty {
            guard let p = Int(port), (1...65535).contains(p) else { throw ValidationError("--address \(text): the port must be 1…65535") }
            number = p
        }
        do { return try SocketAddress.makeAddressResolvingHost(String(host), port: number) } catch {
            throw ValidationError("--address \(text): \(error)")
        }
    }

    func run() throws {
        let target: SocketAddress
        do {
            target = try address.map(Self.target) ?? SocketAddress(ipAddress: WSDiscovery.group, port: WSDiscovery.port)
        } catch {
            throw ValidationError("\(error)")
        }
        try dockctl.run {
            let result: ONVIFProbe.Result
            do { result = try ONVIFProbe.run(to: target, seconds: timeout) } catch {
                throw Fail("cannot send the Probe to \(target): \(error)", exitCode: 1)
            }
            for reason in result.unreadable { note("ignored a datagram that is not WS-Discovery: \(reason)") }
            guard !result.matches.isEmpty else {
                throw Fail("no ONVIF camera answered within \(timeout) s" + (address == nil ? " (multicast reaches this network only; --address probes one elsewhere)" : ""),
                           exitCode: ExitStatus.noSuchStand)
            }
            for match in result.matches { print(match) }
        }
    }

    private func print(_ match: WSDiscovery.Match) {
        let endpoint = match.httpEndpoint
        let attach = endpoint.map { "onvif://USER@\($0.hostPort)" }
        if json {
            func strings(_ list: [String]) -> JSONValue { .array(list.map(JSONValue.string)) }
            Output.json(["endpoint": .string(match.endpoint), "addresses": strings(match.addresses), "scopes": strings(match.scopes),
                         "types": strings(match.types), "ptz": .bool(match.advertisesPTZ), "name": match.name.map(JSONValue.string) ?? .null,
                         "hardware": match.hardware.map(JSONValue.string) ?? .null, "attach": attach.map(JSONValue.string) ?? .null])
            return
        }
        let model = match.hardware ?? "?"
        let name = match.name.map { " \"\($0)\"" } ?? ""
        let address = endpoint?.hostPort ?? match.addresses.first ?? "(no address)"
        var line = "\(address)  \(model)\(name)  ptz \(match.advertisesPTZ ? "yes" : "no")"
        if let attach { line += "  dockctl attach \(attach)" }
        if let endpoint, !endpoint.standardPath { line += "  (device service not at \(ONVIFCameraDriver.devicePath): \(match.addresses.first ?? ""))" }
        Output.line(line)
    }
}
