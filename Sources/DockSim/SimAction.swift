import DockProtocol

/// Something that happens to a simulated stand from outside: a person pressing a button, a camera
/// docked, a battery draining, or a fault injected on purpose. Script files and the control socket
/// both speak these (see `SimAction.parse`).
public enum SimAction: Equatable, Sendable {
    case press(EventKind)
    case customButton(id: UInt8, pressed: Bool)
    case zoom(Double)
    case docked(Bool)
    case battery(level: Double)
    case charger(Bool)
    /// Replace this fraction of outgoing bytes with random ones for `seconds`.
    case corrupt(fraction: Double, seconds: Double)
    case stall(Axis, seconds: Double)
    /// Send nothing for `seconds`.
    case silent(seconds: Double)
    /// Answer late: everything the stand sends for `seconds` reaches the host `delayMs` later, in
    /// order (a congested radio link, firmware busy elsewhere).
    case slow(delayMs: Double, seconds: Double)
    /// The stand's own clock jumps by `seconds` (negative: backwards), as after a firmware clock
    /// reset or a wrap: every later timestamp it sends carries the offset.
    case clockJump(seconds: Double)
    /// Drop the link (close the pty or socket) and bring it back after `seconds`. Only the I/O shell
    /// can do this; the pure stand ignores it.
    case unplug(seconds: Double)
    /// Stand-side log line, sent as a FAULT with code `log`.
    case log(String)
    /// Faulty firmware: FEEDBACK reports NaN positions (`nan`), positions far outside the axis range
    /// (`range`) or impossible velocities (`speed`) for `seconds`, so hosts can be tested against it.
    case lie(Lie, seconds: Double)

    public enum Lie: String, Sendable, CaseIterable {
        case nan, range, speed
    }

    public struct ParseError: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// Parses one command, e.g. `press tracking`, `zoom 2.0`, `undock`, `battery 0.1`, `corrupt 0.1 2`,
    /// `stall pitch 1.5`, `silent 2`, `slow 200 3`, `clockjump -30`, `unplug 1`, `button 0 press`, `charger on`, `lie nan 1`, `log text…`.
    public static func parse(_ line: String) throws(ParseError) -> SimAction {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first else { throw ParseError(description: "empty command") }
        let args = Array(words.dropFirst())
        func number(_ i: Int, _ what: String, in range: ClosedRange<Double>) throws(ParseError) -> Double {
            guard i < args.count, let v = Double(args[i]), range.contains(v) else {
                throw ParseError(description: "\(verb): expected \(what) in \(range.lowerBound)…\(range.upperBound)")
            }
            return v
        }
        func arity(_ n: Int) throws(ParseError) {
            guard args.count == n else { throw ParseError(description: "\(verb): expected \(n) argument(s), got \(args.count)") }
        }
        switch verb {
        case "press":
            try arity(1)
            switch args[0] {
            case "tracking": return .press(.trackingButton)
            case "shutter": return .press(.shutter)
            case "flip": return .press(.flip)
            default: throw ParseError(description: "press: expected tracking, shutter or flip")
            }
        case "button":
            try arity(2)
            let id = try number(0, "a button id", in: 0...255)
            guard ["press", "release"].contains(args[1]) else { throw ParseError(description: "button: expected press or release") }
            return .customButton(id: UInt8(id), pressed: args[1] == "press")
        case "zoom":
            try arity(1); return .zoom(try number(0, "a factor", in: 0.01...100))
        case "dock":
            try arity(0); return .docked(true)
        case "undock":
            try arity(0); return .docked(false)
        case "battery":
            try arity(1); return .battery(level: try number(0, "a level", in: 0...1))
        case "charger":
            try arity(1)
            guard ["on", "off"].contains(args[0]) else { throw ParseError(description: "charger: expected on or off") }
            return .charger(args[0] == "on")
        case "corrupt":
            try arity(2)
            return .corrupt(fraction: try number(0, "a fraction", in: 0...1), seconds: try number(1, "seconds", in: 0...86400))
        case "stall":
            try arity(2)
            guard let axis = Axis(name: args[0]) else { throw ParseError(description: "stall: unknown axis '\(args[0])'") }
            return .stall(axis, seconds: try number(1, "seconds", in: 0...86400))
        case "silent":
            try arity(1); return .silent(seconds: try number(0, "seconds", in: 0...86400))
        case "slow":
            try arity(2)
            return .slow(delayMs: try number(0, "a delay in ms", in: 0...10_000), seconds: try number(1, "seconds", in: 0...86400))
        case "clockjump":
            try arity(1); return .clockJump(seconds: try number(0, "seconds", in: -86400...86400))
        case "unplug":
            try arity(1); return .unplug(seconds: try number(0, "seconds", in: 0...86400))
        case "lie":
            try arity(2)
            guard let lie = Lie(rawValue: args[0]) else { throw ParseError(description: "lie: expected nan, range or speed") }
            return .lie(lie, seconds: try number(1, "seconds", in: 0...86400))
        case "log":
            guard !args.isEmpty else { throw ParseError(description: "log: expected a text") }
            return .log(args.joined(separator: " "))
        default:
            throw ParseError(description: "unknown command '\(verb)'")
        }
    }
}

/// A scenario file: one `<seconds> <command>` per line, `#` comments, blank lines ignored.
public struct SimScript: Sendable, Equatable {
    public struct Step: Sendable, Equatable {
        public var time: Double
        public var action: SimAction
    }
    public var steps: [Step]

    public init(parsing text: String) throws(SimAction.ParseError) {
        var steps: [Step] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let trimmed = line.trimmingCharacters(in: " \t\r")
            if trimmed.isEmpty { continue }
            let parts = trimmed.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            // `inf` parses as a Double but would schedule a step that never runs.
            guard let time = Double(parts[0]), time.isFinite, time >= 0, parts.count == 2 else {
                throw SimAction.ParseError(description: "line \(number + 1): expected '<seconds> <command>'")
            }
            do {
                steps.append(Step(time: time, action: try SimAction.parse(parts[1])))
            } catch {
                throw SimAction.ParseError(description: "line \(number + 1): \(error.description)")
            }
        }
        self.steps = steps.sorted { $0.time < $1.time }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        var s = Substring(self)
        while let c = s.first, chars.contains(c) { s = s.dropFirst() }
        while let c = s.last, chars.contains(c) { s = s.dropLast() }
        return String(s)
    }
}
