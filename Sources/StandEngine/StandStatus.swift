import DockCore
import DockDrivers
import DockProtocol

/// What the stand has said about itself, as the API reports it: who it is and what it can do (its
/// READY), where it last was (its last FEEDBACK), whether it sits in its dock, its batteries, and
/// the last fault published about it. A report refused as impossible is published at most once a
/// second (a stand that lies at 100 Hz would flood the clients), and a speed the driver measured
/// away from the stand's description is logged once per change.
struct StandStatus: Sendable {
    var identity: StandIdentity?
    var capabilities: Capabilities?
    var lastFeedback: (feedback: Feedback, time: Double)?
    var docked: Bool?
    private(set) var lastFault: (report: FaultReport, time: Double)?
    private var batteries: [UInt8: BatteryState] = [:]
    private var lastImplausibleReport = -Double.infinity
    /// The speed scales last logged (1 = the stand's description).
    private var loggedSpeedScale: [Axis: Double] = [:]

    /// A battery's new state (the driver has refused impossible values: `.rejected`).
    mutating func battery(_ state: BatteryState, _ out: inout EngineOutput) {
        batteries[state.index] = state
        out.notifications.append(.battery(batteryReport(state)))
    }

    var batteryReports: [BatteryReport] { batteries.keys.sorted().compactMap { batteries[$0].map(batteryReport) } }

    private func batteryReport(_ state: BatteryState) -> BatteryReport {
        let names = capabilities?.batteries ?? []
        let name = Int(state.index) < names.count ? names[Int(state.index)] : "battery \(state.index)"
        return BatteryReport(index: Int(state.index), name: name, level: Double(state.level), charge: state.charge, low: state.low)
    }

    /// A report the stand cannot have made (a FEEDBACK out of its ranges, an impossible BATTERY).
    mutating func implausible(_ text: String, at now: Double, _ out: inout EngineOutput) {
        guard now - lastImplausibleReport >= 1 else { return }
        lastImplausibleReport = now
        out.log(.error, text)
        out.notifications.append(.fault(FaultReport(source: .dockd, code: DaemonFault.implausibleReport.rawValue, severity: 2, text: text)))
    }

    /// Keeps the last fault an event's output publishes.
    mutating func notePublished(_ out: EngineOutput, at now: Double) {
        for case .fault(let report) in out.notifications { lastFault = (report, now) }
    }

    /// Logs (notice) a speed the driver measured that departs by more than 10 % from the stand's
    /// description, or from what was logged last.
    mutating func noteSpeedScale(_ speedScale: [Axis: Double], _ out: inout EngineOutput) {
        for (axis, scale) in speedScale.sorted(by: { $0.key < $1.key }) {
            let last = loggedSpeedScale[axis] ?? 1
            guard abs(scale - last) > 0.1 * last else { continue }
            loggedSpeedScale[axis] = scale
            out.log(.notice, "\(axis) turns at \(scale.formatted(decimals: 2)) × the speeds its profile gives (measured from its feedback): its speed commands are scaled to match")
        }
    }

    /// The axes the stand turns without end.
    var continuousAxes: Set<Axis> { Set(capabilities?.axes.filter(\.continuous).map(\.axis) ?? []) }

    /// The yaw and pitch a steering step starts from, for the axes the stand has.
    func steeredPositions(yaw: Double, pitch: Double) -> [Axis: Double] {
        var positions: [Axis: Double] = [:]
        if capabilities?.axis(.yaw) != nil { positions[.yaw] = yaw }
        if capabilities?.axis(.pitch) != nil { positions[.pitch] = pitch }
        return positions
    }

    /// A FEEDBACK as the API's motion report: measured half the link's round trip before it came.
    static func motionReport(_ feedback: Feedback, at time: Double, roundTrip: Double?) -> MotionReport {
        MotionReport(time: time, measuredAt: time - (roundTrip ?? 0) / 2, standTimeUs: feedback.timeUs,
                     positions: feedback.axes.map { ($0.axis, Double($0.position)) },
                     velocities: feedback.axes.map { ($0.axis, Double($0.velocity)) })
    }
}
