import Foundation

/// What differs between VISCA camera models, loaded from a JSON file in `profiles/visca/`
/// (see profiles/visca/README.md). Angles are degrees in the camera's convention: pan positive
/// to the right, tilt positive up.
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

        public var maxSpeedByte: UInt8 { UInt8(speeds.count) }
        public var maxSpeedDegrees: Double { speeds.last ?? 0 }

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
            guard minDegrees < maxDegrees else { throw .invalid("\(axis).minDegrees must be < maxDegrees") }
            guard !speeds.isEmpty, speeds.count <= 0x7F else { throw .invalid("\(axis).speeds must list 1…127 speeds") }
            guard zip(speeds, speeds.dropFirst()).allSatisfy({ $0 < $1 }), speeds[0] > 0 else {
                throw .invalid("\(axis).speeds must be positive and increasing")
            }
            let limit = Double(1 << (nibbles * 4 - 1))
            guard abs(maxDegrees * unitsPerDegree) < limit, abs(minDegrees * unitsPerDegree) <= limit else {
                throw .invalid("\(axis) range does not fit in \(nibbles) nibbles")
            }
        }
    }

    /// Short name (the file name without `.json`).
    public var name: String
    public var vendor: String
    public var model: String
    public var pan: AxisProfile
    public var tilt: AxisProfile
    /// Seconds to wait for an ACK or an inquiry answer before resending.
    public var replyTimeout: Double?
    /// Where the values come from, and how sure we are of them.
    public var source: String?

    public static func decode(_ data: Data) throws -> VISCAProfile {
        let profile = try JSONDecoder().decode(VISCAProfile.self, from: data)
        try profile.pan.validate("pan")
        try profile.tilt.validate("tilt")
        return profile
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

    /// Where profiles are found, first match wins: `$DOCKD_VISCA_PROFILES`, the administrator's
    /// `/etc/dockd/profiles/visca`, then `../share/dockd/profiles/visca` from the executable's
    /// directory (an installed dockd, whatever its PREFIX: /usr/bin → /usr/share), then
    /// `profiles/visca` in the executable's directory or any above it (a build in the source tree).
    /// Never the working directory, which under systemd is `/`.
    public static func defaultSearchPaths(environment: [String: String] = ProcessInfo.processInfo.environment,
                                          executable: String? = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) -> [String] {
        var paths: [String] = []
        if let env = environment["DOCKD_VISCA_PROFILES"], !env.isEmpty { paths.append(env) }
        paths.append("/etc/dockd/profiles/visca")
        guard let executable else { return paths }
        var dir = URL(fileURLWithPath: executable).deletingLastPathComponent().standardizedFileURL
        paths.append(dir.deletingLastPathComponent().appendingPathComponent("share/dockd/profiles/visca").path)
        while true {
            paths.append(dir.appendingPathComponent("profiles/visca").path)
            let parent = dir.deletingLastPathComponent().standardizedFileURL
            if parent.path == dir.path || dir.path == "/" { break }
            dir = parent
        }
        return paths
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
