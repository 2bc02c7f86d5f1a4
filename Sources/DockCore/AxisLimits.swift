import DockProtocol

/// A client's request to narrow one axis (DockKit `setLimits`): position range and maximum speed.
/// `nil` keeps the stand's own value.
public struct LimitRequest: Equatable, Sendable {
    public var min: Double?
    public var max: Double?
    public var maxSpeed: Double?
    public init(min: Double? = nil, max: Double? = nil, maxSpeed: Double? = nil) {
        self.min = min; self.max = max; self.maxSpeed = maxSpeed
    }
}

/// The limits in force on one axis: the stand's own, narrowed by the client's. A continuous axis
/// without a client range is unbounded (min −∞, max +∞).
public struct EffectiveAxisLimits: Equatable, Sendable {
    public var axis: Axis
    public var continuous: Bool
    public var min: Double
    public var max: Double
    public var maxSpeed: Double
    public var maxAccel: Double
    /// The range the stand reported; sent back in LIMITS for an unbounded continuous axis.
    let reportedMin: Float
    let reportedMax: Float

    /// The stand's own limits, from its CAPABILITIES.
    init(capability c: AxisCapability) {
        axis = c.axis
        reportedMin = c.min
        reportedMax = c.max
        continuous = c.continuous
        min = c.continuous ? -.infinity : Double(c.min)
        max = c.continuous ? .infinity : Double(c.max)
        maxSpeed = Double(c.maxSpeed)
        maxAccel = Double(c.maxAccel)
    }

    func contains(_ position: Double) -> Bool {
        // A float32 round trip through the wire must not turn a limit position into an error.
        position >= min - 1e-6 && position <= max + 1e-6
    }

    /// The range in the axis's own unit: radians, or magnification for the zoom.
    func rangeText(of axis: Axis) -> String { "\(min.formatted3)…\(max.formatted3)\(axis.unitSuffix)" }
}

/// The limits of every axis of a stand, with DockKit's validation rules for changing them.
struct LimitsTable: Sendable {
    let own: [EffectiveAxisLimits]
    private(set) var active: [EffectiveAxisLimits]

    init(capabilities: Capabilities, axes: [Axis]) {
        own = axes.map { axis in EffectiveAxisLimits(capability: capabilities.axis(axis)!) }
        active = own
    }

    subscript(index: Int) -> EffectiveAxisLimits { active[index] }

    /// Checks every request first, so a refused call changes nothing. Returns the indices changed.
    mutating func apply(_ requests: [Axis: LimitRequest]) throws(MotionError) -> [Int] {
        var changed: [(Int, EffectiveAxisLimits)] = []
        for axis in requests.keys.sorted() {
            guard let i = own.firstIndex(where: { $0.axis == axis }) else { throw .notSupported(axis) }
            changed.append((i, try Self.narrow(own[i], by: requests[axis]!)))
        }
        for (i, limits) in changed { active[i] = limits }
        return changed.map(\.0)
    }

    mutating func reset() { active = own }

    /// The axes whose limits differ from the stand's own.
    var narrowedIndices: [Int] { active.indices.filter { active[$0] != own[$0] } }

    private static func narrow(_ own: EffectiveAxisLimits, by r: LimitRequest) throws(MotionError) -> EffectiveAxisLimits {
        let axis = own.axis
        for value in [r.min, r.max, r.maxSpeed].compactMap({ $0 }) where !value.isFinite {
            throw .invalidParameter("\(axis) limits must be finite numbers")
        }
        var result = own
        result.min = r.min ?? own.min
        result.max = r.max ?? own.max
        result.maxSpeed = r.maxSpeed ?? own.maxSpeed
        // The stand is sent float32s: compared as the stand will see them (PROTOCOL.md LIMITS).
        guard result.min < result.max, !result.min.isFinite || !result.max.isFinite || Float(result.min) < Float(result.max) else {
            throw .invalidParameter("\(axis) minimum \(result.min.formatted3) must be below maximum \(result.max.formatted3)")
        }
        guard result.min >= own.min - 1e-6, result.max <= own.max + 1e-6 else {
            throw .invalidParameter("\(axis) range \(result.rangeText(of: axis)) is outside the stand's own \(own.rangeText(of: axis))")
        }
        // DockKit refuses a negative speed; the stand (PROTOCOL.md LIMITS) also refuses zero.
        guard result.maxSpeed > 0, Float(result.maxSpeed) > 0 else {
            throw .invalidParameter("\(axis) maximum speed must be positive (as a float32, what the stand is sent), not \(result.maxSpeed)")
        }
        guard result.maxSpeed <= own.maxSpeed + 1e-6 else {
            throw .invalidParameter("\(axis) maximum speed \(result.maxSpeed.formatted3) rad/s exceeds the stand's \(own.maxSpeed.formatted3) rad/s")
        }
        return result
    }

    /// LIMITS for the given axes, so the stand enforces them too. An unbounded continuous axis is
    /// sent the range it reported in CAPABILITIES (which a stand ignores for a continuous axis).
    func message(for indices: [Int]) -> Message {
        .limits(indices.sorted().map { i in
            let l = active[i]
            return AxisLimits(axis: l.axis,
                              min: l.min.isFinite ? Float(l.min) : l.reportedMin,
                              max: l.max.isFinite ? Float(l.max) : l.reportedMax,
                              maxSpeed: Float(l.maxSpeed), maxAccel: Float(l.maxAccel))
        })
    }
}

extension Double {
    /// Three decimals, for error texts (no Foundation formatting in this pure module).
    var formatted3: String { formatted(decimals: 3) }

    /// `decimals` (0…9) decimals, rounded: String(format: "%.Nf") without Foundation.
    public func formatted(decimals: Int) -> String {
        guard isFinite else { return self > 0 ? "∞" : (self < 0 ? "-∞" : "nan") }
        // Past what an Int holds (and far past any angle) the plain description says it; converting
        // would trap.
        var unit = 1
        for _ in 0..<decimals { unit *= 10 }
        guard abs(self) * Double(unit) < 1e15 else { return "\(self)" }
        let scaled = (self * Double(unit)).rounded()
        let sign = scaled < 0 ? "-" : ""
        let magnitude = Int(abs(scaled))
        guard decimals > 0 else { return "\(sign)\(magnitude)" }
        let fraction = String(magnitude % unit)
        return "\(sign)\(magnitude / unit)." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}
