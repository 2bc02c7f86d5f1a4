// The skeleton of a driver (gpsd's driver_proto.c): copy this file to Sources/DockDrivers/<Name>/
// (without the import of DockDrivers; its tests go to Tests/DockDriversTests/), rename `Skeleton`,
// replace its toy protocol with yours, and add `<Name>Driver.definition` to
// DriverTable.all. docs/HARDWARE.md, "Adding a driver", walks through it. It lives among the tests
// so that it is compiled and run (SkeletonDriverTests), never shipped, and never out of date.
//
// The toy protocol, a line of ASCII each way:
//   host → device  "HELLO"                      device → host  "ID <serial>"
//   host → device  "RATE <yaw> <pitch>"         device → host  "POS <yaw> <pitch> <yaw rate> <pitch rate>"
//   host → device  "STOP"                       device → host  "ERR <text>" (the last command refused)
//   host → device  "POS?"                       (the host polls; the device reports nothing unasked)
import DockDrivers
import DockProtocol

/// A driver is pure: bytes and times in, bytes and reports out; no I/O, no clock (StandDriver).
struct SkeletonDriver: StandDriver {
    let name = "skeleton"
    private(set) var counters = DriverCounters()
    private let pollInterval: Double
    private let maxSpeed: Float
    private var lineBuffer: [UInt8] = []
    private var serial: String?
    private var nextPoll = 0.0
    /// What was sent last and awaits the device's word, so a refusal can name it.
    private var lastCommand: MessageType?

    init(pollHz: Double, maxSpeed: Double) {
        pollInterval = 1 / pollHz
        self.maxSpeed = Float(maxSpeed)
    }

    /// The link opened: stop whatever the device was doing (every connect leaves motors stopped),
    /// then ask who it is.
    mutating func start(at time: Double) -> [UInt8] {
        lineBuffer = []
        serial = nil
        return line("STOP") + line("HELLO")
    }

    mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport] {
        var reports: [DriverReport] = []
        for byte in bytes {
            guard byte != UInt8(ascii: "\n") else {
                reports += parse(String(decoding: lineBuffer, as: UTF8.self), at: time)
                lineBuffer = []
                continue
            }
            lineBuffer.append(byte)
            // Bound what a device that never ends its line can make us hold.
            if lineBuffer.count > 256 { lineBuffer = []; reports.append(.garbage(.oversize)) }
        }
        return reports
    }

    private mutating func parse(_ text: String, at time: Double) -> [DriverReport] {
        let words = text.split(separator: " ").map(String.init)
        // Every well-formed line is a sign of life: the engine's link watchdog reads this count.
        if ["ID", "POS", "ERR"].contains(words.first) { counters.decoder.frames += 1 }
        switch words.first {
        case "ID" where words.count == 2:
            serial = words[1]
            // The device said who it is: from now on it can be steered. What it can do is declared
            // here (a device of the native protocol says it itself).
            let axes = [AxisCapability(axis: .yaw, continuous: false, min: -3, max: 3, maxSpeed: maxSpeed, maxAccel: 4 * maxSpeed, countsPerRev: 0),
                        AxisCapability(axis: .pitch, continuous: false, min: -1, max: 1, maxSpeed: maxSpeed, maxAccel: 4 * maxSpeed, countsPerRev: 0)]
            let capabilities = Capabilities(feedbackHz: UInt16(1 / pollInterval), imuHz: 0, features: [], buttons: [], customButtons: 0,
                                            axes: axes, batteries: [])
            return [.ready(StandIdentity(model: "skeleton", firmware: "", hardware: "", serial: words[1], protocolVersion: "skeleton-1"),
                           capabilities)]
        case "POS" where words.count == 5:
            let values = words.dropFirst().compactMap(Float.init)
            guard values.count == 4, values.allSatisfy(\.isFinite) else { return [.rejected("a position that is not four numbers: \(text)")] }
            return [.feedback(Feedback(timeUs: UInt64(time * 1e6), axes: [
                AxisFeedback(axis: .yaw, position: values[0], velocity: values[2]),
                AxisFeedback(axis: .pitch, position: values[1], velocity: values[3]),
            ]))]
        case "ERR":
            counters.refused += 1
            // A refusal reaches the caller: the engine fails the motion and says why.
            return [.refused(command: (lastCommand ?? .velocity).rawValue, reason: String(text.dropFirst(4)))]
        default:
            counters.decoder.errors[.malformed, default: 0] += 1
            return [.garbage(.malformed)]
        }
    }

    /// What the engine asks, in the protocol's vocabulary. A driver that cannot do something says
    /// so with a refusal rather than ignoring it.
    mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        switch command {
        case .velocity(let rates):
            lastCommand = .velocity
            let yaw = rates.first { $0.axis == .yaw }?.value ?? 0, pitch = rates.first { $0.axis == .pitch }?.value ?? 0
            return line("RATE \(yaw) \(pitch)")
        case .stop:
            lastCommand = .stop
            return line("STOP")
        default:
            return []  // LIMITS, LED, MOTORS: this device has none; the engine enforces limits itself
        }
    }

    /// Called every 20 ms or so: this device reports only when asked, so ask at the poll rate.
    mutating func tick(at time: Double) -> DriverOutput {
        guard serial != nil, time >= nextPoll else { return DriverOutput() }
        nextPoll = time + pollInterval
        return DriverOutput(bytes: line("POS?"))
    }

    private func line(_ text: String) -> [UInt8] { Array((text + "\n").utf8) }
}

extension SkeletonDriver {
    /// Everything dockd knows about the driver comes from here: the configuration reads these
    /// options (with their kinds, ranges and defaults), dockd.conf(5) and `dockd --list-drivers`
    /// print them, hotplug matches `hotplug`.
    static let definition = DriverDefinition(
        name: "skeleton",
        summary: "a toy line protocol: the template to copy for a new driver",
        links: [.serial, .tcp],
        defaultBaud: 115_200,
        options: [
            DriverOption("poll_hz", .number(1...100), default: .number(20), "position requests a second"),
            DriverOption("max_speed", .number(0.1...10), default: .number(1), "the device's top rate, rad/s"),
        ],
        capabilities: [.rates],
        make: { s in SkeletonDriver(pollHz: s.number("poll_hz"), maxSpeed: s.number("max_speed")) })
}
