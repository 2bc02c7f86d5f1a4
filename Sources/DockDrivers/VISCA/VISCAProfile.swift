// FoundationEssentials (JSONDecoder, FileManager, URL), not Foundation: dockd links no Foundation
// or ICU (issue 26); swift-argument-parser already brings FoundationEssentials in.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What differs between VISCA camera models, loaded from a JSON file in `profiles/visca/`
/// (see profiles/visca/README.md). Angles are degrees in one convention for every camera: pan
/// positive to the right, tilt positive up, as seen from behind the camera; each axis's `sign`
/// says which way the camera's own position units grow.
public struct VISCAProfile: Codable, Sendable, Equatable {
    public struct AxisProfile: Codable, Sendable, Equatable {
        /// Position digits on the wire: 4 or 5 nibbles of two's complement.
        public var nibbles: Int
        public var unitsPerDegree: Double
        public var minDegrees: Double
        public var maxDegrees: Double
        /// deg/s for speed byte 1, 2, … (index + 1 = byte). Must be increasing.
        public var speeds: [Double]
        /// What the controller may assume for acceleration (deg/s²); cameras ramp on their own.
        public var maxAccelDegrees: Double
        /// +1 when the camera's position units grow to the right (pan) or up (tilt); −1 when they
        /// grow to the left or down (Sony's BRC tables: raw pan grows to the left). Default +1.
        public var sign: Int

        public init(nibbles: Int, unitsPerDegree: Double, minDegrees: Double, maxDegrees: Double, speeds: [Double],
                    maxAccelDegrees: Double, sign: Int = 1) {
            self.nibbles = nibbles; self.unitsPerDegree = unitsPerDegree; self.minDegrees = minDegrees
            self.maxDegrees = maxDegrees; self.speeds = speeds; self.maxAccelDegrees = maxAccelDegrees; self.sign = sign
        }

        private enum CodingKeys: String, CodingKey {
            case nibbles, unitsPerDegree, minDegrees, maxDegrees, speeds, maxAccelDegrees, sign
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            nibbles = try c.decode(Int.self, forKey: .nibbles)
            unitsPerDegree = try c.decode(Double.self, forKey: .unitsPerDegree)
            minDegrees = try c.decode(Double.self, forKey: .minDegrees)
            maxDegrees = try c.decode(Double.self, forKey: .maxDegrees)
            speeds = try c.decode([Double].self, forKey: .speeds)
            maxAccelDegrees = try c.decode(Double.self, forKey: .maxAccelDegrees)
            sign = try c.decodeIfPresent(Int.self, forKey: .sign) ?? 1
        }

        public var maxSpeedByte: UInt8 { UInt8(speeds.count) }
        public var maxSpeedDegrees: Double { speeds.last ?? 0 }

        /// Degrees (right / up positive) of a position in camera units.
        public func degrees(units: Int) -> Double { Double(sign) * Double(units) / unitsPerDegree }

        /// Camera units of a position in degrees, rounded toward zero (toward the middle of the
        /// range, so a limit written to the camera never lies outside the one asked for), unless
        /// it is a whole number of units but for float error (limits arrive as Float radians).
        public func units(degrees: Double) -> Int {
            let exact = Double(sign) * degrees * unitsPerDegree
            return abs(exact - exact.rounded()) < 1e-3 ? Int(exact.rounded()) : Int(exact.rounded(.towardZero))
        }

        /// The speed byte whose table speed is nearest `degreesPerSecond` (absolute value);
        /// 0 means "stop" wins (the wanted speed is nearer 0 than the slowest byte).
        public func nearestSpeedByte(_ degreesPerSecond: Double) -> UInt8 {
            let wanted = abs(degreesPerSecond)
            guard wanted.isFinite else { return 0 }
            var best: UInt8 = 0, bestError = wanted
            for (i, s) in speeds.enumerated() where abs(s - wanted) < bestError {
                best = UInt8(i + 1); bestError = abs(s - wanted)
            }
            return best
        }

        /// The slowest byte that covers `degreesPerSecond` (for timed moves), or the fastest.
        public func speedByteCovering(_ degreesPerSecond: Double) -> UInt8 {
            let wanted = abs(degreesPerSecond)
            if let i = speeds.firstIndex(where: { $0 >= wanted }) { return UInt8(i + 1) }
            return maxSpeedByte
        }

        public func validate(_ axis: String) throws(VISCAProfileError) {
            guard nibbles == 4 || nibbles == 5 else { throw .invalid("\(axis).nibbles must be 4 or 5") }
            guard unitsPerDegree > 0 else { throw .invalid("\(axis).unitsPerDegree must be > 0") }
            guard sign == 1 || sign == -1 else { throw .invalid("\(axis).sign must be 1 or -1") }
            guard minDegrees < maxDegrees else { throw .invalid("\(axis).minDegrees must be < maxDegrees") }
            guard !speeds.isEmpty, speeds.count <= 0x7F else { throw .invalid("\(axis).speeds must list 1…127 speeds") }
            guard zip(speeds, speeds.dropFirst()).allSatisfy({ $0 < $1 }), speeds[0] > 0 else {
                throw .invalid("\(axis).speeds must be positive and increasing")
            }
            guard maxAccelDegrees > 0 else { throw .invalid("\(axis).maxAccelDegrees must be > 0") }
            let limit = Double(1 << (nibbles * 4 - 1))
            guard abs(maxDegrees * unitsPerDegree) < limit, abs(minDegrees * unitsPerDegree) < limit else {
                throw .invalid("\(axis) range does not fit in \(nibbles) nibbles")
            }
        }
    }

    /// How AbsolutePosition carries its speed: `panTilt` = `VV WW` (pan byte, tilt byte:
    /// PTZOptics-class), `single` = `VV 00` (one pan-tilt speed byte: Sony BRC-H700, SRG/BRC-X400).
    public enum AbsoluteSpeed: String, Codable, Sendable, Equatable {
        case panTilt = "pan-tilt"
        case single
    }

    /// Short name (the file name without `.json`).
    public var name: String
    public var vendor: String
    public var model: String
    public var pan: AxisProfile
    public var tilt: AxisProfile
    /// Seconds to wait for an ACK or an inquiry answer before resending (the measured round trip
    /// lengthens it on a slow link).
    public var replyTimeout: Double?
    /// Default `panTilt`.
    public var absoluteSpeed: AbsoluteSpeed?
    /// The camera takes Pan-tiltLimitSet / LimitClear (`8x 01 06 07 …`): dockd writes the limits in
    /// force into it, so the camera stops there even if dockd is gone. Default false.
    public var limitSet: Bool?
    /// The optical zoom, for a camera that has one: dockd then drives it as the stand's zoom axis.
    public var zoom: VISCAZoomProfile?
    /// The CAM_Memory numbers dockd may store its presets in (`[first, last]` in the JSON): the
    /// camera's range less the numbers it gives another meaning. nil: dockd stores none in the camera.
    public var presetMemories: ClosedRange<Int>?
    /// Where the values come from, in a sentence.
    public var source: String?
    /// Where each figure comes from: `"pan.speeds": "cited: <document>"`, `"estimate: <why>"` or
    /// `"measured: <how>"` (see profiles/visca/README.md).
    public var provenance: [String: String]?

    public init(name: String, vendor: String, model: String, pan: AxisProfile, tilt: AxisProfile, replyTimeout: Double? = nil,
                absoluteSpeed: AbsoluteSpeed? = nil, limitSet: Bool? = nil, zoom: VISCAZoomProfile? = nil,
                presetMemories: ClosedRange<Int>? = nil, source: String? = nil, provenance: [String: String]? = nil) {
        self.name = name; self.vendor = vendor; self.model = model; self.pan = pan; self.tilt = tilt
        self.replyTimeout = replyTimeout; self.absoluteSpeed = absoluteSpeed; self.limitSet = limitSet; self.zoom = zoom
        self.presetMemories = presetMemories
        self.source = source; self.provenance = provenance
    }

    /// The figures a profile's `provenance` accounts for.
    public static let figures = ["pan.nibbles", "pan.unitsPerDegree", "pan.range", "pan.sign", "pan.speeds", "pan.maxAccelDegrees",
                                 "tilt.nibbles", "tilt.unitsPerDegree", "tilt.range", "tilt.sign", "tilt.speeds",
                                 "tilt.maxAccelDegrees", "absoluteSpeed", "limitSet"]
    /// The figures a profile with a `zoom` accounts for as well.
    public static let zoomFigures = ["zoom.positions", "zoom.magnifications", "zoom.speeds", "zoom.maxAccel"]

    /// What this profile's `provenance` must account for.
    public var figuresToAccountFor: [String] {
        Self.figures + (zoom == nil ? [] : Self.zoomFigures) + (presetMemories == nil ? [] : ["presetMemories"])
    }

    public func validate() throws(VISCAProfileError) {
        try pan.validate("pan")
        try tilt.validate("tilt")
        try zoom?.validate()
        if let t = replyTimeout, !(t > 0 && t <= 5) { throw .invalid("replyTimeout must be in (0, 5] s") }
        // CAM_Memory's one byte is a data byte: 0xFF would end the message, and VISCA's data
        // bytes stay below 0x80 (the high bit marks a header).
        if let m = presetMemories, m.lowerBound < 0 || m.upperBound > 0x7F {
            throw .invalid("presetMemories must lie in [0, 127] (CAM_Memory's one data byte)")
        }
        for (figure, origin) in provenance ?? [:] {
            guard figuresToAccountFor.contains(figure) else { throw .invalid("provenance names an unknown figure \(figure)") }
            guard ["cited:", "estimate:", "measured:"].contains(where: origin.hasPrefix) else {
                throw .invalid("provenance of \(figure) must start with cited:, estimate: or measured:")
            }
        }
    }

    public static func decode(_ data: Data) throws -> VISCAProfile {
        let profile = try JSONDecoder().decode(VISCAProfile.self, from: data)
        try profile.validate()
        return profile
    }

    /// The profile as a JSON file (what `dock-driver-probe --calibrate` writes).
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// `nameOrPath` is a path to a JSON file, or a profile name looked up in `searchPaths`
    /// (default: `defaultSearchPaths()`).
    public static func load(_ nameOrPath: String, searchPaths: [String]? = nil) throws -> VISCAProfile {
        let fm = FileManager.default
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") {
            guard let data = fm.contents(atPath: nameOrPath) else { throw VISCAProfileError.notFound(nameOrPath) }
            return try decode(data)
        }
        let paths = searchPaths ?? defaultSearchPaths()
        for dir in paths {
            if let data = fm.contents(atPath: dir + "/" + nameOrPath + ".json") { return try decode(data) }
        }
        throw VISCAProfileError.notFound("\(nameOrPath) (searched \(paths.joined(separator: ", ")))")
    }

    /// Where profiles are found (`ProfileSearch`; `$DOCKD_VISCA_PROFILES` first).
    public static func defaultSearchPaths(environment: [String: String] = ProcessInfo.processInfo.environment,
                                          executable: String? = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) -> [String] {
        ProfileSearch.paths(folder: "visca", environment: environment, executable: executable)
    }
}

public enum VISCAProfileError: Error, CustomStringConvertible, Equatable {
    case notFound(String)
    case invalid(String)
    public var description: String {
        switch self {
        case .notFound(let what): "VISCA profile not found: \(what)"
        case .invalid(let what): "invalid VISCA profile: \(what)"
        }
    }
}
