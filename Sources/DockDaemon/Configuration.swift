import DockCore
import DockDrivers
import DockIO
import StandEngine

/// /etc/dockd/dockd.conf, in TOML. Every key is optional; the defaults are what a packaged daemon
/// wants. A bad file is refused with every mistake in it, each with its line (syntax, unknown keys,
/// wrong values), and on SIGHUP the old configuration stays in force. dockd.conf(5) describes it.
package struct Configuration: Sendable, Equatable {
    var socketPath = "/run/dockd/dockd.sock"
    var socketGroup: String? = "dock"
    var socketMode: UInt16 = 0o660
    package var logLevel = "info"
    var heartbeatTimeoutMs: UInt16 = 500
    /// Where dockd keeps what it must remember across restarts (the stands' defaults). Under
    /// systemd, StateDirectory= decides ($STATE_DIRECTORY).
    var stateDirectory = "/var/lib/dockd"
    var devices: [Device] = []
    var camera = Camera()
    var tracking = Tracking()
    var buttonSweep: ButtonSweepSection?
    var hotplug = HotplugSettings()

    /// The file dockd reads when no `--config` is given; missing, it means the defaults.
    package static let defaultPath = "/etc/dockd/dockd.conf"

    /// One rule for `log_level` in the file and `--log-level` on the command line.
    static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    package static func logLevelProblem(_ level: String) -> String? {
        logLevels.contains(level) ? nil : "'\(level)' is not one of \(logLevels.joined(separator: ", "))"
    }

    /// Stands that udev announces are attached without configuration.
    struct HotplugSettings: Sendable, Equatable {
        var enabled = true
        var serialPattern: String?
        var baud = 115_200
    }

    struct Device: Sendable, Equatable {
        var endpoint: StandEndpoint
        var driver = NativeDriver.definition.name
        /// The driver's options as written (VISCA address and profile, MAVLink ids, …), each checked
        /// against what the driver declares.
        var options: [String: DriverValue] = [:]
    }

    struct Camera: Sendable, Equatable {
        var horizontalFOVDegrees = 70.0
        var verticalFOVDegrees = 43.0
    }

    /// What the stand does once the tracked subjects are gone (held for as long as the tracker keeps
    /// their tracks, then `lostHold` seconds after the last target).
    struct Tracking: Sendable, Equatable {
        var lostBehaviour = TrackingControlConfiguration.tuned.lostBehaviour
        var lostHold = TrackingControlConfiguration.tuned.lostHold
    }

    /// `[sweep]`: the sweep a stand's custom button starts and stops, in degrees as the file writes it.
    struct ButtonSweepSection: Sendable, Equatable {
        var button: Int
        var fromDegrees: Double
        var toDegrees: Double
        var rateDegrees = 5.0
        var repeats = true

        var buttonSweep: ButtonSweep {
            ButtonSweep(button: button, sweep: Sweep(from: fromDegrees * .pi / 180, to: toDegrees * .pi / 180, rate: rateDegrees * .pi / 180, repeats: repeats))
        }
    }

    /// Why a file was refused: one line per mistake, each `FILE:LINE:COLUMN: what` (or `FILE: what`
    /// when the text gives no place, as for a file that cannot be read).
    package struct Invalid: Error, CustomStringConvertible {
        package let description: String
    }

    /// A configuration is a few kB; more than this is not one (and `--config /dev/zero` ends).
    static let largestFile = 1 << 20

    static func load(path: String) throws(Invalid) -> Configuration {
        let bytes: [UInt8]
        do {
            bytes = try WholeFile.read(path, atMost: largestFile)
        } catch {
            throw Invalid(description: "\(path): cannot read: \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Invalid(description: "\(path): cannot read: it is not UTF-8 text")
        }
        return try parse(text, source: path)
    }

    static func parse(_ text: String, source: String) throws(Invalid) -> Configuration {
        let document: TOMLTable
        do {
            document = try TOMLParser.parse(text)
        } catch {
            throw Invalid(description: "\(source):\(error.place.line):\(error.place.column): \(error.what)")
        }
        var file = TableReader(document, path: [], document: document, source: source)
        let configuration = resolve(&file)
        file.refuseUnread(sectionKeys: keysBySection)
        let problems = file.problems.lines
        if !problems.isEmpty { throw Invalid(description: problems.joined(separator: "\n")) }
        return configuration
    }

    /// Each section's keys, as its reader asks for them over a file whose sections are all there and
    /// empty: for the hint about a key written above every section (`log_level` at the top level).
    static let keysBySection: [String: Set<String>] = {
        func read(_ text: String) -> TableReader {
            // Texts made here, of section headers only: always TOML.
            let document = try! TOMLParser.parse(text)
            var reader = TableReader(document, path: [], document: document, source: "")
            _ = resolve(&reader)
            return reader
        }
        // The top level's keys are the sections' names; [[device]]'s keys are its driver's.
        let sections = read("").keysAsked.subtracting(["device"])
        return read(sections.sorted().map { "[\($0)]\n" }.joined()).sectionKeys
    }()

    /// The sections and keys dockd.conf has. Anything else is a mistake (a typo would otherwise be
    /// silently ignored): each section's reader refuses what it did not read, and `parse` what the
    /// top level has beside them.
    private static func resolve(_ file: inout TableReader) -> Configuration {
        var c = Configuration()

        if var d = file.section("daemon") {
            if let v = d.string("socket") { c.socketPath = v }
            if let v = d.string("socket_group") { c.socketGroup = v.isEmpty ? nil : v }
            if let v = d.string("socket_mode") {
                if let mode = UInt16(v, radix: 8), mode <= 0o777 { c.socketMode = mode }
                else { d.refuse("socket_mode", "must be octal like \"0660\"") }
            }
            if let v = d.string("log_level") {
                if let problem = logLevelProblem(v) { d.refuse("log_level", problem) } else { c.logLevel = v }
            }
            if let v = d.integer("heartbeat_timeout_ms", in: 100...5000) { c.heartbeatTimeoutMs = UInt16(v) }
            if let v = d.string("state_directory") { c.stateDirectory = v }
            file.finish(d)
        }
        for var d in file.arrayOfTables("device") {
            if let device = resolveDevice(&d) { c.devices.append(device) }
            file.finish(d)
        }
        if var h = file.section("hotplug") {
            if let v = h.bool("enabled") { c.hotplug.enabled = v }
            c.hotplug.serialPattern = h.string("serial_pattern")
            if let v = h.integer("baud", in: 50...4_000_000) {
                if SerialPort.isSupported(baud: v) { c.hotplug.baud = v } else { h.refuse("baud", "\(v) is not a supported rate") }
            }
            file.finish(h)
        }
        if var cam = file.section("camera") {
            if let v = cam.number("horizontal_fov_deg", open: 1...180) { c.camera.horizontalFOVDegrees = v }
            if let v = cam.number("vertical_fov_deg", open: 1...180) { c.camera.verticalFOVDegrees = v }
            file.finish(cam)
        }
        if var t = file.section("tracking") {
            if let name = t.string("lost_behaviour") {
                if let behaviour = LostSubjectBehaviour(rawValue: name) { c.tracking.lostBehaviour = behaviour }
                else { t.refuse("lost_behaviour", "must be one of \(LostSubjectBehaviour.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))") }
            }
            if let v = t.number("lost_hold_s", in: 0...600) { c.tracking.lostHold = v }
            file.finish(t)
        }
        if var w = file.section("sweep") {
            let button = w.integer("button", in: 0...255), from = w.number("from_deg", in: -3600...3600), to = w.number("to_deg", in: -3600...3600)
            let rate = w.number("rate_deg_s", in: 0.1...500), repeats = w.bool("repeat")
            if let button, let from, let to {
                if from == to { w.refuse("to_deg", "must differ from from_deg") }
                c.buttonSweep = ButtonSweepSection(button: button, fromDegrees: from, toDegrees: to, rateDegrees: rate ?? 5, repeats: repeats ?? true)
            } else {
                w.refuse(nil, "a [sweep] names its button, from_deg and to_deg")
            }
            file.finish(w)
        }
        return c
    }


    /// One `[[device]]`: exactly one endpoint of a link the driver runs over, a known driver, and
    /// the options that driver declares, each read as its kind (DriverTable).
    private static func resolveDevice(_ d: inout TableReader) -> Device? {
        let name = d.string("driver") ?? NativeDriver.definition.name
        guard let driver = DriverTable.named(name) else {
            d.refuse("driver", "'\(name)' is not one of \(DriverTable.names.joined(separator: ", "))")
            return nil
        }
        let baud = d.integer("baud", in: 50...4_000_000) ?? driver.defaultBaud ?? 115_200
        let channel = d.integer("channel", in: 1...30)
        var options: [String: DriverValue] = [:]
        for option in driver.options {
            if let value = read(option, from: &d) { options[option.key] = value }
        }
        // Another driver's option is a mistake worth naming as such (not just "unknown key").
        for key in d.keys where driver.option(key) == nil {
            guard let owner = DriverTable.all.first(where: { $0.option(key) != nil }) else { continue }
            let takes = driver.options.isEmpty ? "takes none" : "takes \(driver.options.map(\.key).joined(separator: ", "))"
            d.refuse(key, "is an option of the \(owner.name) driver; the \(driver.name) driver \(takes)")
            d.markRefused(key)
        }
        let given = LinkKind.allCases.compactMap { kind in d.string(kind.configKey).map { (kind, kind.configKey, $0) } }
        guard given.count == 1, let (kind, key, value) = given.first else {
            d.refuse(nil, "give exactly one of \(LinkKind.allCases.map(\.configKey).joined(separator: ", "))")
            return nil
        }
        guard driver.links.contains(kind) else {
            d.refuse(key, "the \(driver.name) driver runs over \(driver.links.map(\.configKey).joined(separator: ", ")), not \(key)")
            return nil
        }
        let endpoint: StandEndpoint
        switch key {
        case "path":
            guard SerialPort.isSupported(baud: baud) else { d.refuse("baud", "\(baud) is not a supported rate"); return nil }
            endpoint = .serial(path: value, baud: baud)
        case "unix": endpoint = .unix(path: value)
        case "video": endpoint = .video(path: value)
        case "onvif":
            guard var address = ONVIFAddress(parsing: value.hasPrefix("onvif://") ? value.dropFirst(8) : Substring(value)) else {
                d.refuse(key, "takes [user@]host[:port][/profile] (the password goes in the file named by credentials)"); return nil
            }
            // The link reads the password file; the driver never sees it.
            if case .text(let path)? = options["credentials"] { address.credentials = path }
            if let profile = address.profile {
                if case .text(let given)? = options["profile"], given != profile {
                    d.refuse(key, "names profile \(profile), and profile names \(given)"); return nil
                }
                options["profile"] = .text(profile)
            }
            endpoint = .onvif(address)
        case "bluetooth": endpoint = .bluetooth(address: value, channel: channel.map(UInt8.init))
        default:
            endpoint = StandEndpoint(parsing: "\(kind):\(value)")
            switch endpoint {
            case .udp, .tcp: break
            default: d.refuse(nil, "udp and tcp take HOST:PORT, the port 1…65535"); return nil
            }
        }
        return Device(endpoint: endpoint, driver: driver.name, options: options)
    }

    private static func read(_ option: DriverOption, from d: inout TableReader) -> DriverValue? {
        switch option.kind {
        case .integer(let range): return d.integer(option.key, in: range).map(DriverValue.integer)
        case .number(let range): return d.number(option.key, in: range).map(DriverValue.number)
        case .text: return d.string(option.key).map(DriverValue.text)
        case .choice(let names):
            guard let v = d.string(option.key) else { return nil }
            guard names.contains(v) else { d.refuse(option.key, "must be one of \(names.map { "\"\($0)\"" }.joined(separator: ", ")), not \"\(v)\""); return nil }
            return .text(v)
        }
    }
}

/// The mistakes found so far, each placed on its line when the text shows where, listed in the
/// order of the file.
struct Problems {
    /// The whole file, where the places of keys are looked up.
    let document: TOMLTable
    let source: String
    private var found: [(line: Int, column: Int, text: String)] = []

    init(document: TOMLTable, source: String) {
        self.document = document
        self.source = source
    }

    /// `path`: the key (or the table) the mistake is about, e.g. ["device", "1", "poll_hz"];
    /// `what` is said of it ("device[1].poll_hz: must be …") unless it names the key itself.
    mutating func add(_ path: [String], _ what: String, namesKey: Bool = false) {
        let name = Self.dotted(path)
        let subject = name.isEmpty || namesKey ? what : "\(name): \(what)"
        if let place = document.place(of: path) {
            found.append((place.line, place.column, "\(source):\(place.line):\(place.column): \(subject)"))
        } else {
            found.append((Int.max, 0, "\(source): \(subject)"))
        }
    }

    mutating func append(_ other: Problems) { found += other.found }

    var lines: [String] {
        found.enumerated().sorted { ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset) }
            .map(\.element.text)
    }

    /// `device[1].poll_hz`, as people read it (a key that is not bare in quotes, as TOML writes it).
    static func dotted(_ path: [String]) -> String {
        var name = ""
        for part in path {
            if Int(part) != nil { name += "[\(part)]" } else { name += (name.isEmpty ? "" : ".") + TOMLKey.written(part) }
        }
        return name
    }
}

/// Reads one TOML table key by key and notes what it read: whatever is left at `finish` is a key
/// dockd does not know. Numbers are read as TOML writes them, integer or float, whichever the key
/// takes (`poll_hz = 20`, `heartbeat_timeout_ms = 500.0`).
struct TableReader {
    private let table: TOMLTable
    let path: [String]
    var problems: Problems
    private var read: Set<String> = []
    private var refusedOtherwise: Set<String> = []
    /// The keys each section (a table, not an element of an array of tables) below this one asked for.
    private(set) var sectionKeys: [String: Set<String>] = [:]

    /// The keys this reader asked for, whether the table has them or not.
    var keysAsked: Set<String> { read }

    init(_ table: TOMLTable, path: [String], document: TOMLTable, source: String) {
        self.table = table
        self.path = path
        self.problems = Problems(document: document, source: source)
    }

    mutating func refuse(_ key: String?, _ what: String) {
        problems.add(path + (key.map { [$0] } ?? []), what)
    }

    /// The keys the table has, read or not.
    var keys: [String] { table.keys.sorted() }

    /// A key already refused with a better reason than "unknown" (and not one this table knows).
    mutating func markRefused(_ key: String) { refusedOtherwise.insert(key) }

    private mutating func value(_ key: String) -> TOMLValue? {
        read.insert(key)
        return table[key]?.value
    }

    mutating func string(_ key: String) -> String? {
        guard let v = value(key) else { return nil }
        guard let s = v.string else { refuse(key, "must be a string, not \(v.kind)"); return nil }
        return s
    }

    mutating func bool(_ key: String) -> Bool? {
        guard let v = value(key) else { return nil }
        guard let b = v.boolean else { refuse(key, "must be true or false, not \(v.kind)"); return nil }
        return b
    }

    /// An integer key: a TOML integer, or a float with no fraction.
    mutating func integer(_ key: String, in range: ClosedRange<Int>) -> Int? {
        guard let v = value(key) else { return nil }
        let whole: Int?
        if let i = v.integer { whole = i } else if let d = v.float, d.rounded() == d, abs(d) < 1e15 { whole = Int(d) } else { whole = nil }
        guard let whole else {
            refuse(key, v.float.map { "must be a whole number, not \($0)" } ?? "must be an integer, not \(v.kind)")
            return nil
        }
        guard range.contains(whole) else { refuse(key, "must be \(range.lowerBound)…\(range.upperBound), not \(whole)"); return nil }
        return whole
    }

    /// A number key: a TOML float or integer, within `range` (closed).
    mutating func number(_ key: String, in range: ClosedRange<Double>) -> Double? {
        guard let x = anyNumber(key) else { return nil }
        guard range.contains(x) else { refuse(key, "must be in [\(Self.format(range.lowerBound)), \(Self.format(range.upperBound))], not \(Self.format(x))"); return nil }
        return x
    }

    /// A number key within the open interval `open`.
    mutating func number(_ key: String, open: ClosedRange<Double>) -> Double? {
        guard let x = anyNumber(key) else { return nil }
        guard x > open.lowerBound && x < open.upperBound else {
            refuse(key, "must be in (\(Self.format(open.lowerBound)), \(Self.format(open.upperBound))), not \(Self.format(x))")
            return nil
        }
        return x
    }

    private mutating func anyNumber(_ key: String) -> Double? {
        guard let v = value(key) else { return nil }
        if let d = v.float, d.isFinite { return d }
        if let i = v.integer { return Double(i) }
        refuse(key, "must be a number, not \(v.kind)")
        return nil
    }

    private static func format(_ x: Double) -> String {
        x.rounded() == x && abs(x) < 1e15 ? String(Int(x)) : String(x)
    }

    /// A sub-table `[name]`, to be read and handed back to `finish`.
    mutating func section(_ name: String) -> TableReader? {
        guard let v = value(name) else { return nil }
        guard let t = v.table else { refuse(name, "must be a table ([\(name)]), not \(v.kind)"); return nil }
        return TableReader(t, path: path + [name], document: problems.document, source: problems.source)
    }

    /// The tables of `[[name]]`, each to be handed back to `finish`.
    mutating func arrayOfTables(_ name: String) -> [TableReader] {
        guard let v = value(name) else { return [] }
        guard let array = v.array else { refuse(name, "must be tables ([[\(name)]]), not \(v.kind)"); return [] }
        var readers: [TableReader] = []
        for (i, element) in array.enumerated() {
            guard let t = element.value.table else { refuse(name, "element \(i) must be a table, not \(element.value.kind)"); continue }
            readers.append(TableReader(t, path: path + [name, String(i)], document: problems.document, source: problems.source))
        }
        return readers
    }

    /// Takes back a sub-reader: its unknown keys are refused, and its problems become ours.
    mutating func finish(_ sub: TableReader) {
        var sub = sub
        sub.refuseUnread()
        problems.append(sub.problems)
        if sub.path.count == path.count + 1, let name = sub.path.last { sectionKeys[name] = sub.read }
    }

    /// Every key of this table that nothing read, with the nearest known one when it looks like a
    /// typo; a key of one of `sectionKeys`' sections (the top level's) also says where it belongs.
    mutating func refuseUnread(sectionKeys: [String: Set<String>] = [:]) {
        let known = read.sorted()
        for key in table.keys.sorted() where !read.contains(key) && !refusedOtherwise.contains(key) {
            let kind = table[key]?.value.table != nil || table[key]?.value.array != nil ? "section" : "key"
            var what = "unknown \(kind) \(Problems.dotted(path + [key]))"
            let elsewhere = kind == "key" ? sectionKeys.flatMap { section, keys in keys.map { (section: section, key: $0) } }
                .filter { Self.distance($0.key, key) <= 2 }.min { (Self.distance($0.key, key), $0.key) < (Self.distance($1.key, key), $1.key) } : nil
            if let elsewhere {
                let belongs = "it belongs under [\(elsewhere.section)]: the top level has no keys"
                what += elsewhere.key == key ? " (\(belongs))" : " (did you mean \(elsewhere.key)? \(belongs))"
            } else if let near = known.min(by: { Self.distance($0, key) < Self.distance($1, key) }), Self.distance(near, key) <= 2 {
                what += " (did you mean \(near)?)"
            } else {
                what += " (known: \(known.joined(separator: ", ")))"
            }
            problems.add(path + [key], what, namesKey: true)
        }
    }

    /// Levenshtein distance, for "did you mean".
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in a.indices {
            var row = [i + 1]
            for j in b.indices {
                row.append(min(previous[j + 1] + 1, row[j] + 1, previous[j] + (a[i] == b[j] ? 0 : 1)))
            }
            previous = row
        }
        return previous[b.count]
    }
}
