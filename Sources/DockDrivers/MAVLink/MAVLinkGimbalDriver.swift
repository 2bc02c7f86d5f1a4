import DockProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A MAVLink gimbal device (gimbal protocol v2: STorM32, Gremsy, …) as a stand.
///
/// Frames: MAVLink's gimbal messages use FRD body axes (x forward, y right, z down). A positive
/// rate about z turns the camera to the right, about y pitches it up. Stand yaw is positive to the
/// LEFT (PROTOCOL.md §4), so stand yaw = −(MAVLink yaw) and stand yaw rate = −z rate; stand
/// pitch = MAVLink pitch and its rate = +y rate. Commands set ROLL_LOCK | PITCH_LOCK (horizon
/// stabilized, which on a level stand equals the stand's pitch) and YAW_IN_VEHICLE_FRAME (yaw
/// relative to the base the gimbal stands on).
///
/// Handshake: our HEARTBEAT at 1 Hz (an onboard controller); the gimbal's HEARTBEAT (component
/// `targetComponent`, 154 by default) gives its system id; GIMBAL_DEVICE_INFORMATION (requested
/// with MAV_CMD_REQUEST_MESSAGE until it comes) gives limits and identity → `.ready`. A gimbal
/// that never answers the request (or refuses it) is used with the configured defaults after
/// `infoWait` seconds (at once when it refuses).
///
/// Safety: gimbal protocol v2 has no host heartbeat for rates (a gimbal keeps turning at the last
/// rate it was given) and no acknowledgement of GIMBAL_DEVICE_SET_ATTITUDE. So every connect sends
/// zero rates first (to every system until the gimbal's HEARTBEAT names its own, then to it); a stop
/// is sent at once and repeated every `stopRepeatInterval` (3 copies at least, so one lost frame
/// does not leave the gimbal turning, up to 10 while unconfirmed); it is confirmed by an
/// ATTITUDE_STATUS received after it that shows the gimbal at rest (its angular velocity under
/// 0.02 rad/s, or, from a gimbal that reports none, two statuses that have not moved). A silent
/// gimbal confirms nothing: the daemon's bound applies. A refused COMMAND_LONG (COMMAND_ACK with a
/// result other than accepted / in progress) is reported as `.refused` with MAV_RESULT's name.
public struct MAVLinkGimbalDriver: StandDriver {
    public struct Settings: Sendable, Equatable {
        public var systemID: UInt8 = 1
        public var componentID: UInt8 = 191  // MAV_COMP_ID_ONBOARD_COMPUTER
        public var targetComponent: UInt8 = 154  // MAV_COMP_ID_GIMBAL
        public var feedbackHz: Double = 50
        public var maxSpeed: Float = 2.0
        public var maxAccel: Float = 8.0
        /// Stand ranges used when the gimbal reports none (rad).
        public var yawRange: ClosedRange<Float> = -2.9...2.9
        public var pitchRange: ClosedRange<Float> = -1.5...0.5
        public var name: String?
        public var infoWait: Double = 3
        public var handshakeTimeout: Double = 10
        public init() {}
    }

    public let name = "mavlink"
    public let settings: Settings
    public private(set) var counters = DriverCounters()
    public private(set) var stopConfirmed = true
    /// No: an attitude setpoint has no duration, so the gimbal would snap to it at its own top rate
    /// whatever `motion.orient` asked (0.18 s for a 1.5 s move, measured against the pymavlink
    /// gimbal). With ATTITUDE_STATUS at 50 Hz dockd follows the path itself, as for its own stands.
    public var closesPositionLoop: Bool { false }

    /// Seconds between copies of a stop.
    public static let stopRepeatInterval = 0.05
    private static let stopCopiesAtLeast = 3, stopCopiesAtMost = 10
    /// Angular velocity under which a status shows the gimbal at rest (rad/s).
    private static let restRate = 0.02

    private var decoder = MAVLinkDecoder()
    private var sequence: UInt8 = 0
    private var startedAt = 0.0
    private var nextHeartbeat = 0.0
    private var nextRequest = 0.0
    private var gimbalSystem: UInt8?
    /// When the gimbal's first HEARTBEAT came (the wait for its information starts then).
    private var firstHeartbeatAt: Double?
    private var info: MAVGimbalDeviceInformation?
    private var ready = false
    private var failed = false
    private var lastFailure: UInt32 = 0
    private var yawUnwrap = (last: 0.0, turns: 0.0, started: false)
    private var lastSample: (yaw: Double, pitch: Double, time: Double)?
    private var deferred: [DriverReport] = []
    /// The stop being repeated: when its last copy went, how many went.
    private var stopping: (lastSent: Double, copies: Int)?
    /// When the stop asked for went out first; nil once motion is asked for again.
    private var stopSentAt: Double?
    /// The last status received after the stop, for gimbals that report no angular velocity.
    private var restCheck: (yaw: Double, pitch: Double)?
    /// The gimbal refused REQUEST_MESSAGE(GIMBAL_DEVICE_INFORMATION): go on with the defaults.
    private var infoRefused = false

    public init(settings: Settings = Settings()) { self.settings = settings }

    public var capabilities: Capabilities {
        var axes: [AxisCapability] = []
        let flags = info?.capFlags ?? 0
        let known = flags != 0
        if !known || flags & MAVGimbalDeviceInformation.capHasYawAxis != 0 {
            var lo = settings.yawRange.lowerBound, hi = settings.yawRange.upperBound
            if let i = info, i.yawMin.isFinite, i.yawMax.isFinite, i.yawMin < i.yawMax { lo = -i.yawMax; hi = -i.yawMin }
            let continuous = flags & MAVGimbalDeviceInformation.capSupportsInfiniteYaw != 0
            axes.append(AxisCapability(axis: .yaw, continuous: continuous, min: lo, max: hi, maxSpeed: settings.maxSpeed,
                                       maxAccel: settings.maxAccel, countsPerRev: 0))
        }
        if !known || flags & MAVGimbalDeviceInformation.capHasPitchAxis != 0 {
            var lo = settings.pitchRange.lowerBound, hi = settings.pitchRange.upperBound
            if let i = info, i.pitchMin.isFinite, i.pitchMax.isFinite, i.pitchMin < i.pitchMax { lo = i.pitchMin; hi = i.pitchMax }
            axes.append(AxisCapability(axis: .pitch, continuous: false, min: lo, max: hi, maxSpeed: settings.maxSpeed,
                                       maxAccel: settings.maxAccel, countsPerRev: 0))
        }
        return Capabilities(feedbackHz: UInt16(settings.feedbackHz.rounded()), imuHz: 0, features: [], buttons: [],
                            customButtons: 0, axes: axes, batteries: [])
    }

    public var identity: StandIdentity {
        let uid = info?.uid ?? 0
        let serial = settings.name ?? (uid != 0 ? "mavlink-" + String(uid, radix: 16)
                                       : "mavlink-\(gimbalSystem ?? 0)-\(settings.targetComponent)")
        return StandIdentity(model: info.map { $0.modelName.isEmpty ? "MAVLink gimbal" : $0.modelName } ?? "MAVLink gimbal",
                             firmware: info.map { MAVGimbalDeviceInformation.versionText($0.firmwareVersion) } ?? "unknown",
                             hardware: info?.vendorName ?? "", serial: serial, protocolVersion: "mavlink2-gimbal-v2")
    }

    // MARK: StandDriver

    /// A new link: what the previous one learned is forgotten (the gimbal may have been replaced or
    /// restarted), and the first thing sent after our HEARTBEAT is zero rates.
    public mutating func start(at time: Double) -> [UInt8] {
        decoder = MAVLinkDecoder()
        startedAt = time
        nextHeartbeat = time + 1
        nextRequest = time + 1
        gimbalSystem = nil
        firstHeartbeatAt = nil
        info = nil
        ready = false
        failed = false
        infoRefused = false
        lastFailure = 0
        yawUnwrap = (0, 0, false)
        lastSample = nil
        deferred = []
        return heartbeat() + beginStop(at: time) + requests()
    }

    public mutating func receive(_ bytes: [UInt8], at time: Double) -> [DriverReport] {
        var reports: [DriverReport] = []
        counters.decoder.bytes += bytes.count
        for item in decoder.feed(bytes) {
            switch item {
            case .failure(let e):
                counters.decoder.errors[e, default: 0] += 1
                reports.append(.garbage(e))
            case .success(let frame):
                counters.decoder.frames += 1
                handle(frame, at: time, into: &reports)
            }
        }
        return reports
    }

    public mutating func send(_ command: Message, at time: Double) -> [UInt8] {
        if case .stop = command { return beginStop(at: time) }
        guard ready, !failed else { return [] }
        switch command {
        case .velocity(let values):
            var yaw: Float = 0, pitch: Float = 0
            for v in values {
                if v.axis == .yaw { yaw = v.value } else if v.axis == .pitch { pitch = v.value }
            }
            if yaw == 0 && pitch == 0 {
                // Zero rates are a stop: repeated and confirmed like one (unless one is asked already).
                return stopSentAt == nil ? beginStop(at: time) : []
            }
            moving()
            return setRates(yaw: yaw, pitch: pitch)
        case .position(_, let targets):
            moving()
            var yaw = lastSample?.yaw ?? 0, pitch = lastSample?.pitch ?? 0
            for t in targets {
                if t.axis == .yaw { yaw = Double(t.position) } else if t.axis == .pitch { pitch = Double(t.position) }
            }
            let q = Self.quaternion(yaw: -yaw, pitch: pitch)
            return setAttitude(MAVGimbalDeviceSetAttitude(q: q, angularVelocity: (.nan, .nan, .nan), flags: commandFlags,
                                                          targetSystem: gimbalSystem ?? 0, targetComponent: settings.targetComponent))
        case .led, .motors:
            counters.refused += 1
            deferred.append(.refused(command: command.type.rawValue, reason: "not supported by MAVLink gimbals"))
            return []
        default:
            return []
        }
    }

    public mutating func tick(at time: Double) -> DriverOutput {
        var out = DriverOutput(reports: deferred)
        deferred.removeAll()
        guard !failed else { return out }
        if let s = stopping, time - s.lastSent >= Self.stopRepeatInterval {
            let enough = stopConfirmed ? Self.stopCopiesAtLeast : Self.stopCopiesAtMost
            if s.copies < enough {
                stopping = (time, s.copies + 1)
                out.bytes += setRates(yaw: 0, pitch: 0)
            } else if stopConfirmed || s.copies >= Self.stopCopiesAtMost {
                stopping = nil
            }
        }
        if time >= nextHeartbeat {
            nextHeartbeat = max(nextHeartbeat + 1, time)
            out.bytes += heartbeat()
        }
        if !ready {
            if time - startedAt > settings.handshakeTimeout {
                failed = true
                out.reports.append(.fatal(firstHeartbeatAt == nil
                    ? "no HEARTBEAT from a gimbal (component \(settings.targetComponent)) in \(Int(settings.handshakeTimeout)) s"
                    : "the gimbal did not become ready in \(Int(settings.handshakeTimeout)) s"))
                return out
            }
            if let seen = firstHeartbeatAt, info == nil, infoRefused || time - seen >= settings.infoWait {
                // Gimbals that do not implement REQUEST_MESSAGE: go on with the configured ranges.
                ready = true
                out.reports.append(.ready(identity, capabilities))
            } else if time >= nextRequest {
                nextRequest = time + 1
                counters.retries += 1
                out.bytes += requests()
            }
        }
        return out
    }

    // MARK: Incoming

    private mutating func handle(_ frame: MAVLink.Frame, at time: Double, into reports: inout [DriverReport]) {
        guard frame.componentID == settings.targetComponent else { return }
        if let sys = gimbalSystem, sys != frame.systemID { return }
        switch MAVLink.ID(rawValue: frame.messageID) {
        case .heartbeat:
            if gimbalSystem == nil {
                gimbalSystem = frame.systemID
                nextRequest = time  // ask again now that the target is known
                // The connect stop went to every system; one more copy to the gimbal's own.
                if stopSentAt != nil {
                    stopping = (stopping?.lastSent ?? -Double.infinity, min(stopping?.copies ?? 0, Self.stopCopiesAtLeast - 1))
                }
            }
            if firstHeartbeatAt == nil { firstHeartbeatAt = time }
        case .gimbalDeviceInformation:
            if gimbalSystem == nil { gimbalSystem = frame.systemID }
            info = MAVGimbalDeviceInformation(payload: frame.payload)
            if !ready {
                ready = true
                reports.append(.ready(identity, capabilities))
            }
        case .gimbalDeviceAttitudeStatus:
            let s = MAVGimbalDeviceAttitudeStatus(payload: frame.payload)
            noteRest(s, at: time)
            guard ready else { return }
            status(s, at: time, into: &reports)
        case .commandAck:
            let ack = MAVCommandAck(payload: frame.payload)
            guard ack.result != MAVCommandAck.accepted && ack.result != MAVCommandAck.inProgress else { return }
            let what = ack.command == MAVCommandLong.requestMessage ? "MAV_CMD_REQUEST_MESSAGE(GIMBAL_DEVICE_INFORMATION)"
                : ack.command == MAVCommandLong.setMessageInterval ? "MAV_CMD_SET_MESSAGE_INTERVAL(GIMBAL_DEVICE_ATTITUDE_STATUS)"
                : "MAV_CMD \(ack.command)"
            if ack.command == MAVCommandLong.requestMessage && !infoRefused {
                infoRefused = true
            } else if ack.command == MAVCommandLong.requestMessage {
                return  // reported once
            }
            counters.refused += 1
            reports.append(.refused(command: MessageType.request.rawValue,
                                    reason: "the gimbal refused \(what): \(MAVCommandAck.resultText(ack.result))"))
        default:
            break
        }
    }

    private mutating func status(_ s: MAVGimbalDeviceAttitudeStatus, at time: Double, into reports: inout [DriverReport]) {
        guard s.q.allSatisfy(\.isFinite) else { return }
        let (frdYaw, frdPitch) = Self.yawPitch(s.q)
        // Unwrap: a continuous yaw reports multi-turn positions.
        var yaw = -Double(frdYaw)
        if yawUnwrap.started {
            let d = yaw - yawUnwrap.last
            if d > .pi { yawUnwrap.turns -= 2 * .pi } else if d < -.pi { yawUnwrap.turns += 2 * .pi }
        }
        yawUnwrap.last = yaw; yawUnwrap.started = true
        yaw += yawUnwrap.turns
        let pitch = Double(frdPitch)
        var yawRate = -Double(s.angularVelocity.z), pitchRate = Double(s.angularVelocity.y)
        if let last = lastSample, time - last.time > 1e-3 {
            if !yawRate.isFinite { yawRate = (yaw - last.yaw) / (time - last.time) }
            if !pitchRate.isFinite { pitchRate = (pitch - last.pitch) / (time - last.time) }
        }
        if !yawRate.isFinite { yawRate = 0 }
        if !pitchRate.isFinite { pitchRate = 0 }
        lastSample = (yaw, pitch, time)

        let timeUs = UInt64(max(0, time) * 1e6)
        let caps = capabilities
        func axisStatus(_ axis: Axis, _ value: Double, _ limitBit: UInt32) -> AxisStatus {
            var st: AxisStatus = []
            if s.failureFlags & limitBit != 0, let c = caps.axis(axis) {
                st.insert(abs(value - Double(c.min)) < abs(value - Double(c.max)) ? .atMin : .atMax)
            }
            if s.failureFlags & (GimbalDeviceError.motor | GimbalDeviceError.encoder) != 0 { st.insert(.fault) }
            return st
        }
        var axes: [AxisFeedback] = []
        if caps.axis(.yaw) != nil {
            axes.append(AxisFeedback(axis: .yaw, position: Float(yaw), velocity: Float(yawRate),
                                     status: axisStatus(.yaw, yaw, GimbalDeviceError.atYawLimit)))
        }
        if caps.axis(.pitch) != nil {
            axes.append(AxisFeedback(axis: .pitch, position: Float(pitch), velocity: Float(pitchRate),
                                     status: axisStatus(.pitch, pitch, GimbalDeviceError.atPitchLimit)))
        }
        reports.append(.feedback(Feedback(timeUs: timeUs, axes: axes)))

        // New failure bits become faults (limits are reported in the axis status instead).
        let serious: [(UInt32, FaultCode, String)] = [
            (GimbalDeviceError.encoder, .encoder, "gimbal encoder error"),
            (GimbalDeviceError.power, .brownout, "gimbal power error"),
            (GimbalDeviceError.motor, .stall, "gimbal motor error"),
            (GimbalDeviceError.software, .log, "gimbal software error"),
            (GimbalDeviceError.comms, .log, "gimbal communication error"),
        ]
        for (bit, code, text) in serious where s.failureFlags & bit != 0 && lastFailure & bit == 0 {
            reports.append(.fault(Fault(timeUs: timeUs, severity: .error, code: code, text: text)))
        }
        lastFailure = s.failureFlags
    }

    // MARK: Stopping

    /// Zero rates now, then more copies from `tick`.
    private mutating func beginStop(at time: Double) -> [UInt8] {
        stopConfirmed = false
        restCheck = nil
        stopping = (time, 1)
        stopSentAt = time
        return setRates(yaw: 0, pitch: 0)
    }

    private mutating func moving() {
        stopping = nil
        stopSentAt = nil
        stopConfirmed = false
    }

    /// A status received after a stop went out confirms it when it shows the gimbal at rest.
    private mutating func noteRest(_ s: MAVGimbalDeviceAttitudeStatus, at time: Double) {
        guard let sent = stopSentAt, !stopConfirmed, time > sent, s.q.allSatisfy(\.isFinite) else { return }
        let rates = [Double(s.angularVelocity.y), Double(s.angularVelocity.z)]
        if rates.allSatisfy(\.isFinite) {
            if rates.allSatisfy({ abs($0) < Self.restRate }) { stopConfirmed = true }
            return
        }
        let (yaw, pitch) = Self.yawPitch(s.q)
        if let last = restCheck, abs(Double(yaw) - last.yaw) < 1e-3, abs(Double(pitch) - last.pitch) < 1e-3 { stopConfirmed = true }
        restCheck = (Double(yaw), Double(pitch))
    }

    // MARK: Outgoing

    private var commandFlags: GimbalDeviceFlags { [.rollLock, .pitchLock, .yawInVehicleFrame] }

    private mutating func setRates(yaw: Float, pitch: Float) -> [UInt8] {
        // Stand yaw left-positive → FRD z rate (right-positive) negated; pitch up = +y.
        setAttitude(MAVGimbalDeviceSetAttitude(q: [.nan, .nan, .nan, .nan], angularVelocity: (0, pitch, -yaw),
                                               flags: commandFlags, targetSystem: gimbalSystem ?? 0,
                                               targetComponent: settings.targetComponent))
    }

    private mutating func setAttitude(_ m: MAVGimbalDeviceSetAttitude) -> [UInt8] {
        frame(.gimbalDeviceSetAttitude, m.payload)
    }

    private mutating func heartbeat() -> [UInt8] {
        frame(.heartbeat, MAVHeartbeat(type: MAVHeartbeat.typeOnboardController, autopilot: MAVHeartbeat.autopilotInvalid).payload)
    }

    /// REQUEST_MESSAGE(GIMBAL_DEVICE_INFORMATION) and SET_MESSAGE_INTERVAL(ATTITUDE_STATUS).
    private mutating func requests() -> [UInt8] {
        let target = gimbalSystem ?? 0
        let info = MAVCommandLong(command: MAVCommandLong.requestMessage,
                                  params: [Float(MAVLink.ID.gimbalDeviceInformation.rawValue)],
                                  targetSystem: target, targetComponent: settings.targetComponent)
        let interval = MAVCommandLong(command: MAVCommandLong.setMessageInterval,
                                      params: [Float(MAVLink.ID.gimbalDeviceAttitudeStatus.rawValue),
                                               Float((1e6 / settings.feedbackHz).rounded())],
                                      targetSystem: target, targetComponent: settings.targetComponent)
        return frame(.commandLong, info.payload) + frame(.commandLong, interval.payload)
    }

    private mutating func frame(_ id: MAVLink.ID, _ payload: [UInt8]) -> [UInt8] {
        defer { sequence &+= 1 }
        return MAVLink.encode(id, payload: payload, sequence: sequence, systemID: settings.systemID, componentID: settings.componentID)
    }

    // MARK: Quaternions (w, x, y, z; aerospace ZYX Euler angles in FRD)

    public static func yawPitch(_ q: [Float]) -> (yaw: Float, pitch: Float) {
        let w = Double(q[0]), x = Double(q[1]), y = Double(q[2]), z = Double(q[3])
        let pitch = asin(max(-1, min(1, 2 * (w * y - z * x))))
        let yaw = atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        return (Float(yaw), Float(pitch))
    }

    public static func quaternion(yaw: Double, pitch: Double, roll: Double = 0) -> [Float] {
        let cy = cos(yaw / 2), sy = sin(yaw / 2), cp = cos(pitch / 2), sp = sin(pitch / 2), cr = cos(roll / 2), sr = sin(roll / 2)
        return [Float(cr * cp * cy + sr * sp * sy), Float(sr * cp * cy - cr * sp * sy),
                Float(cr * sp * cy + sr * cp * sy), Float(cr * cp * sy - sr * sp * cy)]
    }
}
