/// Payload layouts of PROTOCOL.md §4. Decoders read the fields they know and ignore trailing
/// bytes, which is how later minor versions add fields.
enum FieldLimits {
    static let identity = 32
    static let batteryName = 16
    static let text = 200
}

extension Message {
    func encodePayload(into w: inout ByteWriter) {
        switch self {
        case .hello(let m):
            w.u8(m.major); w.u8(m.minor); w.u16(m.heartbeatTimeoutMs); w.str(m.host, maxLength: FieldLimits.identity)
        case .helloReply(let m):
            w.u8(m.major); w.u8(m.minor); w.u16(m.heartbeatTimeoutMs)
            for s in [m.model, m.firmware, m.hardware, m.serial] { w.str(s, maxLength: FieldLimits.identity) }
        case .capabilities(let m):
            w.u16(m.feedbackHz); w.u16(m.imuHz); w.u16(m.features.rawValue); w.u8(m.buttons.rawValue)
            w.u8(m.customButtons)
            w.u8(UInt8(m.axes.count))
            for a in m.axes {
                w.u8(a.axis.rawValue); w.u8(a.continuous ? 1 : 0)
                w.f32(a.min); w.f32(a.max); w.f32(a.maxSpeed); w.f32(a.maxAccel); w.u32(a.countsPerRev)
            }
            w.u8(UInt8(m.batteries.count))
            for name in m.batteries { w.str(name, maxLength: FieldLimits.batteryName) }
        case .heartbeat(let uptime):
            w.u32(uptime)
        case .ack(let m):
            w.u16(m.seq); w.u8(m.type)
        case .nack(let m):
            w.u16(m.seq); w.u8(m.type); w.u8(m.code); w.str(m.detail, maxLength: FieldLimits.text)
        case .request(let kind):
            w.u8(kind.rawValue)
        case .velocity(let values):
            let sorted = Self.perAxis(values) { $0.axis }
            w.u8(AxisMask(sorted.map(\.axis)).rawValue)
            for v in sorted { w.f32(v.value) }
        case .position(let duration, let targets):
            let sorted = Self.perAxis(targets) { $0.axis }
            w.u8(AxisMask(sorted.map(\.axis)).rawValue); w.f32(duration)
            for t in sorted { w.f32(t.position); w.f32(t.velocity) }
        case .stop:
            break
        case .limits(let limits):
            let sorted = Self.perAxis(limits) { $0.axis }
            w.u8(AxisMask(sorted.map(\.axis)).rawValue)
            for l in sorted { w.f32(l.min); w.f32(l.max); w.f32(l.maxSpeed); w.f32(l.maxAccel) }
        case .led(let m):
            w.u8(m.mode); w.u8(m.red); w.u8(m.green); w.u8(m.blue); w.u16(m.onMs); w.u16(m.offMs)
        case .motors(let enabled):
            w.u8(enabled.rawValue)
        case .feedback(let m):
            w.u64(m.timeUs)
            let sorted = Self.perAxis(m.axes) { $0.axis }
            w.u8(AxisMask(sorted.map(\.axis)).rawValue)
            for a in sorted { w.f32(a.position); w.f32(a.velocity); w.f32(a.effort); w.u8(a.status.rawValue) }
        case .imu(let m):
            w.u64(m.timeUs)
            for v in [m.gyro.x, m.gyro.y, m.gyro.z, m.accel.x, m.accel.y, m.accel.z] { w.f32(v) }
        case .event(let m):
            w.u64(m.timeUs); w.u8(m.kind); w.u8(m.value); w.u8(m.button); w.f32(m.factor)
        case .battery(let m):
            w.u8(m.index); w.f32(m.level); w.u8(m.charge.rawValue); w.u8(m.low ? 1 : 0)
        case .fault(let m):
            w.u64(m.timeUs); w.u8(m.severity); w.u16(m.code); w.u8(m.axis); w.str(m.text, maxLength: FieldLimits.text)
        }
    }

    /// Per-axis fields go on the wire in axis order, one per axis: the mask cannot say otherwise.
    /// The first item given for each axis. A walk per axis rather than a sort, a set and a key path:
    /// a VELOCITY is encoded for every FEEDBACK of a moving stand.
    private static func perAxis<T>(_ items: [T], _ axis: (T) -> Axis) -> [T] {
        var sorted: [T] = []
        sorted.reserveCapacity(min(items.count, Axis.allCases.count))
        for wanted in Axis.allCases {
            if let item = items.first(where: { axis($0) == wanted }) { sorted.append(item) }
        }
        return sorted
    }

    static func decode(type: MessageType, payload: ArraySlice<UInt8>) throws(PayloadError) -> Message {
        var r = ByteReader(payload)
        switch type {
        case .hello:
            return .hello(Hello(major: try r.u8(), minor: try r.u8(), heartbeatTimeoutMs: try r.u16(), host: try r.str()))
        case .helloReply:
            return .helloReply(HelloReply(major: try r.u8(), minor: try r.u8(), heartbeatTimeoutMs: try r.u16(),
                                          model: try r.str(), firmware: try r.str(), hardware: try r.str(), serial: try r.str()))
        case .capabilities:
            let feedbackHz = try r.u16(), imuHz = try r.u16()
            let features = Features(rawValue: try r.u16()), buttons = Buttons(rawValue: try r.u8())
            let customButtons = try r.u8()
            // Counts above the spec's limits are malformed: they are what could make a decoded
            // frame too large to encode again (PROTOCOL.md §1 rule 5).
            let axisCount = try r.u8()
            guard axisCount <= 4 else { throw .badValue }
            var axes: [AxisCapability] = []
            for _ in 0..<axisCount {
                guard let axis = Axis(rawValue: try r.u8()) else { throw .badValue }
                let flags = try r.u8()
                axes.append(AxisCapability(axis: axis, continuous: flags & 1 != 0, min: try r.f32(), max: try r.f32(),
                                           maxSpeed: try r.f32(), maxAccel: try r.f32(), countsPerRev: try r.u32()))
            }
            let batteryCount = try r.u8()
            guard batteryCount <= 4 else { throw .badValue }
            var batteries: [String] = []
            for _ in 0..<batteryCount { batteries.append(try r.str()) }
            return .capabilities(Capabilities(feedbackHz: feedbackHz, imuHz: imuHz, features: features, buttons: buttons,
                                              customButtons: customButtons, axes: axes, batteries: batteries))
        case .heartbeat:
            return .heartbeat(uptimeMs: try r.u32())
        case .ack:
            return .ack(Ack(seq: try r.u16(), type: try r.u8()))
        case .nack:
            return .nack(Nack(seq: try r.u16(), type: try r.u8(), rawCode: try r.u8(), detail: try r.str()))
        case .request:
            guard let kind = RequestKind(rawValue: try r.u8()) else { throw .badValue }
            return .request(kind)
        case .velocity:
            let mask = AxisMask(rawValue: try r.u8())
            var values: [AxisValue] = []
            for axis in mask.axes { values.append(AxisValue(axis, try r.f32())) }
            return .velocity(values)
        case .position:
            let mask = AxisMask(rawValue: try r.u8())
            let duration = try r.f32()
            var targets: [PositionTarget] = []
            for axis in mask.axes { targets.append(PositionTarget(axis: axis, position: try r.f32(), velocity: try r.f32())) }
            return .position(duration: duration, targets: targets)
        case .stop:
            return .stop
        case .limits:
            let mask = AxisMask(rawValue: try r.u8())
            var limits: [AxisLimits] = []
            for axis in mask.axes {
                limits.append(AxisLimits(axis: axis, min: try r.f32(), max: try r.f32(), maxSpeed: try r.f32(), maxAccel: try r.f32()))
            }
            return .limits(limits)
        case .led:
            return .led(LedCommand(rawMode: try r.u8(), red: try r.u8(), green: try r.u8(), blue: try r.u8(),
                                   onMs: try r.u16(), offMs: try r.u16()))
        case .motors:
            return .motors(enabled: AxisMask(rawValue: try r.u8() & AxisMask(Axis.allCases).rawValue))
        case .feedback:
            let time = try r.u64()
            let present = AxisMask(rawValue: try r.u8()).axes
            var axes: [AxisFeedback] = []
            axes.reserveCapacity(present.count)  // the axes array grows once, not once per axis
            for axis in present {
                axes.append(AxisFeedback(axis: axis, position: try r.f32(), velocity: try r.f32(), effort: try r.f32(),
                                         status: AxisStatus(rawValue: try r.u8())))
            }
            return .feedback(Feedback(timeUs: time, axes: axes))
        case .imu:
            let time = try r.u64()
            let gyro = (x: try r.f32(), y: try r.f32(), z: try r.f32())
            let accel = (x: try r.f32(), y: try r.f32(), z: try r.f32())
            return .imu(ImuSample(timeUs: time, gyro: gyro, accel: accel))
        case .event:
            return .event(StandEvent(timeUs: try r.u64(), rawKind: try r.u8(), value: try r.u8(), button: try r.u8(), factor: try r.f32()))
        case .battery:
            let index = try r.u8(), level = try r.f32()
            guard let charge = ChargeState(rawValue: try r.u8()) else { throw .badValue }
            return .battery(BatteryState(index: index, level: level, charge: charge, low: try r.u8() & 1 != 0))
        case .fault:
            return .fault(Fault(timeUs: try r.u64(), rawSeverity: try r.u8(), rawCode: try r.u16(), rawAxis: try r.u8(), text: try r.str()))
        }
    }
}
