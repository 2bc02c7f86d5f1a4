@testable import DockDrivers
import DockProtocol
import FuzzSupport

// What every StandDriver owes the session that feeds it, checked the same way for each driver
// target: counters that add up, one `.ready`, finite feedback, and only well-formed bytes out.

/// What a driver said while being fed a stream, and how many bytes it was fed.
package struct DriverRun {
    package var reports: [DriverReport] = []
    package var fed = 0
}

/// Starts `driver`, then feeds `stream` one read per chunk (10 ms apart, a tick after each) and,
/// once it is ready, sends a command chosen by each chunk's first byte. `frames` is how many
/// frames the driver's decoder must have counted (worked out by the caller from the codec alone);
/// `checkSent` checks each block of outgoing bytes.
package func exercise<D: StandDriver>(_ driver: inout D, stream: ArraySlice<UInt8>, control: UInt8, frames: Int,
                              checkSent: ([UInt8]) -> Void) {
    var run = DriverRun()
    var time = 0.0
    var ready = false
    func sent(_ bytes: [UInt8]) { if !bytes.isEmpty { checkSent(bytes) } }
    sent(driver.start(at: time))
    forEachChunk(of: stream, control: control) { chunk in
        time += 0.01
        let reports = driver.receive(Array(chunk), at: time)
        run.fed += chunk.count
        ready = ready || reports.contains { if case .ready = $0 { true } else { false } }
        run.reports += reports
        if ready, let first = chunk.first { sent(driver.send(command(first), at: time)) }
        let output = driver.tick(at: time)
        sent(output.bytes)
        run.reports += output.reports
    }
    checkCounters(driver.counters, run: run, frames: frames)
    checkReports(run.reports)
}

/// A velocity, a position, a stop or a motors command (which these drivers refuse), with values from `byte`.
package func command(_ byte: UInt8) -> Message {
    let value = Float(Int8(bitPattern: byte)) / 32  // ±4 rad/s or rad: past every stand's range
    switch byte & 3 {
    case 0: return .velocity([AxisValue(.yaw, value), AxisValue(.pitch, -value / 2)])
    case 1: return .position(duration: Float(byte >> 2) / 16, targets: [PositionTarget(axis: .yaw, position: value),
                                                                       PositionTarget(axis: .pitch, position: -value)])
    case 2: return .stop
    default: return .motors(enabled: [])
    }
}

package func checkCounters(_ counters: DriverCounters, run: DriverRun, frames: Int) {
    let decoder = counters.decoder
    if decoder.bytes != run.fed { violation("counters.decoder.bytes \(decoder.bytes) != \(run.fed) bytes received") }
    if decoder.frames != frames { violation("counters.decoder.frames \(decoder.frames) != \(frames) frames in the stream") }
    var garbage: [FrameError: Int] = [:]
    for case .garbage(let error) in run.reports { garbage[error, default: 0] += 1 }
    for kind in FrameError.allCases where decoder.errors[kind, default: 0] != garbage[kind, default: 0] {
        violation("counters.decoder.errors[\(kind)] \(decoder.errors[kind, default: 0]) != \(garbage[kind, default: 0]) reported")
    }
    if counters.retries < 0 || counters.commandsFailed < 0 || counters.refused < 0 { violation("negative counter: \(counters)") }
}

package func checkReports(_ reports: [DriverReport]) {
    var readies = 0
    for report in reports {
        switch report {
        case .ready(_, let capabilities):
            readies += 1
            for axis in capabilities.axes where !(axis.min.isFinite && axis.max.isFinite && axis.min <= axis.max) {
                violation("capabilities give \(axis.axis) the range \(axis.min)...\(axis.max)")
            }
        case .feedback(let feedback):
            for axis in feedback.axes where !(axis.position.isFinite && axis.velocity.isFinite) {
                violation("feedback \(axis.axis) position \(axis.position) velocity \(axis.velocity)")
            }
        default:
            break
        }
    }
    if readies > 1 { violation("\(readies) .ready reports") }
}

func violation(_ what: String) -> Never {
    fatalError("driver check violated: \(what)")
}

/// Feeds `stream` to `driver` as `exercise` does, with the checks that hold for every driver
/// whatever its wire (DriverFuzz runs each driver of the table through it): its reports, its
/// counters' signs and its deadlines. What it sends is not read: only the driver's own target knows
/// its wire.
package func exerciseAnyDriver<D: StandDriver>(_ driver: D, stream: ArraySlice<UInt8>, control: UInt8) {
    var driver = driver
    var reports: [DriverReport] = []
    var time = 0.0
    var ready = false
    func checkDeadline() {
        if let deadline = driver.nextDeadline, !deadline.isFinite { violation("\(driver.name): nextDeadline \(deadline)") }
    }
    _ = driver.start(at: time)
    checkDeadline()
    forEachChunk(of: stream, control: control) { chunk in
        time += 0.01
        let received = driver.receive(Array(chunk), at: time)
        ready = ready || received.contains { if case .ready = $0 { true } else { false } }
        reports += received
        if ready, let first = chunk.first { _ = driver.send(command(first), at: time) }
        reports += driver.tick(at: time).reports
        checkDeadline()
    }
    let counters = driver.counters
    if counters.retries < 0 || counters.commandsFailed < 0 || counters.refused < 0 || counters.decoder.bytes < 0
        || counters.decoder.frames < 0 || counters.decoder.errors.values.contains(where: { $0 < 0 }) {
        violation("\(driver.name): negative counter: \(counters)")
    }
    checkReports(reports)
}
