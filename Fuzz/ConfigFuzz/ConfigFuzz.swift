@testable import DockDaemon
import DockDrivers
import DockIO

// libFuzzer target for dockd's configuration parser (Sources/DockDaemon/Configuration.swift): TOML
// through dockd's own parser (Sources/DockDaemon/TOML), then the checks of `resolved`. Built by
// Fuzz/run.sh through SwiftPM (Package.swift, DOCKD_FUZZ=1) against the DockDaemon library and what
// it imports, every one of them instrumented.
//
// Input: the bytes of a dockd.conf. Any input is either refused with a message that names a line or
// a key, or gives a configuration that keeps every rule the parser enforces.

func violation(_ what: String) -> Never {
    fatalError("ConfigFuzz invariant violated: \(what)")
}

let source = "fuzz.conf"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // Configuration.load reads the file as UTF-8 and refuses it otherwise: so does this.
    guard let data, let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) else { return 0 }
    let first: Configuration
    do {
        first = try Configuration.parse(text, source: source)
    } catch {
        checkRefusal(error.description, text: text)
        return 0
    }
    checkRules(first)
    guard let second = try? Configuration.parse(text, source: source), second == first else {
        violation("parsing the same text twice gives another result")
    }
    return 0
}

/// A refusal lists one mistake a line; each starts with the file and then names a line
/// (`:LINE:COLUMN:` of the text) or a key.
func checkRefusal(_ refusal: String, text: String) {
    for message in refusal.split(separator: "\n").map(String.init) { checkMistake(message, text: text) }
}

func checkMistake(_ message: String, text: String) {
    guard message.hasPrefix(source) else { violation("refusal without the file name: \(message)") }
    let rest = message.dropFirst(source.count)
    if rest.hasPrefix(":"), rest.dropFirst().first?.isNumber == true {
        let parts = rest.dropFirst().split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        let lines = text.unicodeScalars.filter { $0 == "\n" }.count + 1  // scalars: "\r\n" is one Character
        guard parts.count == 3, let line = Int(parts[0]), let column = Int(parts[1]), (1...lines).contains(line), column >= 1 else {
            violation("refusal with a bad position: \(message)")
        }
        return
    }
    let keys = ["daemon", "device", "hotplug", "camera", "tracking", "unknown", "cannot read"]
    guard rest.hasPrefix(": "), keys.contains(where: { rest.dropFirst(2).hasPrefix($0) }) else {
        violation("refusal that names neither a line nor a key: \(message)")
    }
}

/// The rules Configuration.parse enforces, checked on what it returns.
func checkRules(_ c: Configuration) {
    if c.socketMode > 0o777 { violation("socket mode \(String(c.socketMode, radix: 8))") }
    if !["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(c.logLevel) { violation("log level \(c.logLevel)") }
    if !(100...5000).contains(c.heartbeatTimeoutMs) { violation("heartbeat timeout \(c.heartbeatTimeoutMs) ms") }
    if !SerialPort.isSupported(baud: c.hotplug.baud) { violation("hotplug baud \(c.hotplug.baud)") }
    for fov in [c.camera.horizontalFOVDegrees, c.camera.verticalFOVDegrees] where !(fov > 1 && fov < 180) {
        violation("field of view \(fov)°")
    }
    for device in c.devices {
        guard let driver = DriverTable.named(device.driver) else { violation("driver \(device.driver)") }
        for (key, value) in device.options {
            guard let option = driver.option(key) else { violation("\(driver.name) option \(key)") }
            switch (option.kind, value) {
            case (.integer(let range), .integer(let v)): if !range.contains(v) { violation("\(key) = \(v)") }
            case (.number(let range), .number(let v)): if !range.contains(v) { violation("\(key) = \(v)") }
            case (.text, .text): break
            case (.choice(let names), .text(let v)): if !names.contains(v) { violation("\(key) = \(v)") }
            default: violation("\(key) of the wrong kind: \(value)")
            }
        }
        switch device.endpoint {
        case .serial(_, let baud):
            if !SerialPort.isSupported(baud: baud) { violation("device baud \(baud)") }
        case .bluetooth(_, let channel):
            if let channel, !(1...30).contains(channel) { violation("RFCOMM channel \(channel)") }
        case .udp(let host, let port), .tcp(let host, let port):
            if host.isEmpty || !(1...65535).contains(port) { violation("network endpoint \(device.endpoint)") }
        case .onvif(let address):
            if address.host.isEmpty || !(1...65535).contains(address.port) { violation("ONVIF endpoint \(device.endpoint)") }
        case .unix, .video:
            break
        }
    }
}
