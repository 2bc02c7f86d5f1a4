// FoundationEssentials (JSONDecoder, FileManager), not Foundation: dockd links no Foundation (issue 26).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What differs between UVC PTZ webcam models and V4L2 does not tell, loaded from a JSON file in
/// `profiles/v4l2/` (profiles/v4l2/README.md): how fast it turns, how often it takes a command,
/// which way its pan grows, and the vendor extension-unit control that switches its own AI
/// tracking off (so that the camera and dockd never steer it at once). A camera is matched to a
/// profile by its V4L2 card name.
public struct V4L2Profile: Codable, Sendable, Equatable {
    /// A UVC extension-unit control and the bytes that switch the camera's own tracking off.
    public struct ExtensionControl: Codable, Sendable, Equatable {
        /// The extension unit's GUID as written (`9a1e7291-6843-4683-6d92-39bc7906ee49`); its unit id
        /// is looked up in the camera's USB descriptors by it.
        public var guid: String
        /// The unit id where the descriptors cannot be read (not a USB camera).
        public var unit: UInt8
        public var selector: UInt8
        /// The control's length (UVC GET_LEN): the bytes are padded with zeros to it.
        public var size: Int
        /// Hex: the bytes that switch tracking off.
        public var off: String
        /// The bytes that put the camera's own tracking back as it was when dockd lets go of the
        /// camera: hex in which `{N}` stands for byte N of the control as read (GET_CUR) before
        /// tracking was switched off (a camera may read its state in another layout than it is
        /// set in); nil: left off.
        public var restore: String?

        public init(guid: String, unit: UInt8, selector: UInt8, size: Int, off: String, restore: String? = nil) {
            self.guid = guid; self.unit = unit; self.selector = selector; self.size = size; self.off = off; self.restore = restore
        }

        /// The GUID's 16 bytes as a USB descriptor holds them (the first three fields little-endian).
        public var guidBytes: [UInt8]? {
            let hex = guid.filter { $0 != "-" && $0 != "{" && $0 != "}" }
            guard let bytes = V4L2Wire.bytes(hex: Substring(hex)), bytes.count == 16 else { return nil }
            return Array(bytes[0..<4].reversed()) + bytes[4..<6].reversed() + bytes[6..<8].reversed() + bytes[8...]
        }

        /// `off`, padded to `size`.
        public var offBytes: [UInt8]? {
            guard let bytes = V4L2Wire.bytes(hex: Substring(off)), bytes.count <= size else { return nil }
            return bytes + [UInt8](repeating: 0, count: size - bytes.count)
        }

        /// `restore` with its `{N}` filled from the control as `read`, padded to `size`; nil when
        /// there is none, it does not parse, or it names a byte the read lacks.
        public func restoreBytes(read: [UInt8]) -> [UInt8]? {
            guard let restore else { return nil }
            var bytes: [UInt8] = []
            var rest = Substring(restore)
            while !rest.isEmpty {
                if rest.hasPrefix("{") {
                    guard let close = rest.firstIndex(of: "}"), let index = Int(rest[rest.index(after: rest.startIndex)..<close]),
                          read.indices.contains(index) else { return nil }
                    bytes.append(read[index])
                    rest = rest[rest.index(after: close)...]
                } else {
                    guard let pair = V4L2Wire.bytes(hex: rest.prefix(2)), pair.count == 1 else { return nil }
                    bytes += pair
                    rest = rest.dropFirst(2)
                }
            }
            guard !bytes.isEmpty, bytes.count <= size else { return nil }
            return bytes + [UInt8](repeating: 0, count: size - bytes.count)
        }

    }

    /// The file name without `.json`.
    public var name: String
    public var vendor: String
    public var model: String
    /// V4L2 card names (VIDIOC_QUERYCAP) of this model, or parts of them; the longest that a
    /// camera's card contains picks the profile.
    public var cards: [String]
    /// `vendor:product` USB ids, for people and udev rules.
    public var usb: [String]
    /// The top pan/tilt rate, degrees/s: `max_speed` where dockd.conf does not set it.
    public var maxSpeedDegrees: Double
    /// The least time between two sets, s: `command_interval` where dockd.conf does not set it.
    public var commandInterval: Double
    /// 1 when PAN grows to the right as V4L2 says, −1 when this model's grows to the left.
    public var panSign: Int
    public var aiTrackingOff: ExtensionControl?
    /// The magnification at ZOOM_ABSOLUTE's maximum (1× at its minimum, linear between), where the
    /// camera zooms: with it, the zoom is the stand's zoom axis. nil: not steered.
    public var maxZoom: Double?
    /// Seconds the zoom takes from wide to tele at full speed (0: at once, a digital zoom).
    public var zoomSeconds: Double?
    public var source: String
    /// Where each figure comes from: `cited: …`, `estimate: …` or `measured: …`.
    public var provenance: [String: String]

    public init(name: String, vendor: String, model: String, cards: [String], usb: [String], maxSpeedDegrees: Double,
                commandInterval: Double, panSign: Int, aiTrackingOff: ExtensionControl?, maxZoom: Double? = nil, zoomSeconds: Double? = nil,
                source: String, provenance: [String: String]) {
        self.name = name; self.vendor = vendor; self.model = model; self.cards = cards; self.usb = usb
        self.maxSpeedDegrees = maxSpeedDegrees; self.commandInterval = commandInterval; self.panSign = panSign
        self.aiTrackingOff = aiTrackingOff; self.maxZoom = maxZoom; self.zoomSeconds = zoomSeconds
        self.source = source; self.provenance = provenance
    }

    /// The figures `provenance` accounts for.
    public static let figures = ["cards", "usb", "maxSpeedDegrees", "commandInterval", "panSign", "aiTrackingOff"]
    /// …and, for a camera whose zoom is steered, these.
    public static let zoomFigures = ["maxZoom", "zoomSeconds"]

    public func validate() throws(V4L2ProfileError) {
        guard !cards.isEmpty, cards.allSatisfy({ !$0.isEmpty }) else { throw .invalid("\(name): cards must name the model's V4L2 card") }
        guard maxSpeedDegrees > 0, maxSpeedDegrees <= 600 else { throw .invalid("\(name): maxSpeedDegrees must be in (0, 600]") }
        guard commandInterval >= 0.01, commandInterval <= 2 else { throw .invalid("\(name): commandInterval must be in [0.01, 2] s") }
        guard panSign == 1 || panSign == -1 else { throw .invalid("\(name): panSign must be 1 or -1") }
        if let maxZoom, !(maxZoom > 1 && maxZoom <= 1000) { throw .invalid("\(name): maxZoom must be in (1, 1000]") }
        if let zoomSeconds, !(zoomSeconds >= 0 && zoomSeconds <= 60) { throw .invalid("\(name): zoomSeconds must be in [0, 60] s") }
        if let xu = aiTrackingOff {
            guard xu.guidBytes != nil else { throw .invalid("\(name): aiTrackingOff.guid is not a GUID") }
            guard xu.size > 0, xu.size <= 1024, xu.offBytes != nil else { throw .invalid("\(name): aiTrackingOff.off must be hex of at most size bytes") }
            if xu.restore != nil, xu.restoreBytes(read: [UInt8](repeating: 0, count: xu.size)) == nil {
                throw .invalid("\(name): aiTrackingOff.restore must be hex and {N} (a byte of the control as read, N < size) of at most size bytes")
            }
        }
        for figure in Self.figures + (maxZoom == nil ? [] : Self.zoomFigures) {
            guard let origin = provenance[figure] else { throw .invalid("\(name): provenance lacks \(figure)") }
            guard ["cited:", "estimate:", "measured:", "none:"].contains(where: origin.hasPrefix) else {
                throw .invalid("\(name): provenance of \(figure) must start with cited:, estimate:, measured: or none:")
            }
        }
    }

    /// The profile of the camera whose card is `card`: the one naming the longest part of it.
    public static func matching(_ card: String, in profiles: [V4L2Profile]) -> V4L2Profile? {
        profiles.compactMap { p in p.cards.filter { card.contains($0) }.map(\.count).max().map { (p, $0) } }.max { $0.1 < $1.1 }?.0
    }

    public static func decode(_ data: Data) throws -> V4L2Profile {
        let profile = try JSONDecoder().decode(V4L2Profile.self, from: data)
        try profile.validate()
        return profile
    }

    /// `nameOrPath`: a JSON file's path, or a name looked up in `searchPaths`.
    public static func load(_ nameOrPath: String, searchPaths: [String] = ProfileSearch.paths(folder: "v4l2")) throws -> V4L2Profile {
        let files = nameOrPath.contains("/") ? [nameOrPath] : searchPaths.map { $0 + "/" + nameOrPath + ".json" }
        for file in files {
            if let data = FileManager.default.contents(atPath: file) { return try decode(data) }
        }
        throw V4L2ProfileError.notFound("\(nameOrPath) (searched \(searchPaths.joined(separator: ", ")))")
    }

    /// Every profile in the first of `searchPaths` that has any, to match cameras against.
    public static func all(searchPaths: [String] = ProfileSearch.paths(folder: "v4l2")) throws -> [V4L2Profile] {
        for dir in searchPaths {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { continue }
            let files = names.filter { $0.hasSuffix(".json") }.sorted()
            guard !files.isEmpty else { continue }
            return try files.map { name in
                guard let data = FileManager.default.contents(atPath: dir + "/" + name) else { throw V4L2ProfileError.notFound(dir + "/" + name) }
                return try decode(data)
            }
        }
        return []
    }
}

public enum V4L2ProfileError: Error, CustomStringConvertible, Equatable {
    case notFound(String)
    case invalid(String)
    public var description: String {
        switch self {
        case .notFound(let what): "V4L2 camera profile not found: \(what)"
        case .invalid(let what): "invalid V4L2 camera profile: \(what)"
        }
    }
}
