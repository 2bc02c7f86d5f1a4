/// What the V4L2 driver and the device adapter that runs its ioctls (DockIO's `VideoDeviceLink`)
/// say to each other, one text line each, so that the pure driver and dockd's engine see a byte
/// link like any other and a `--trace-bytes` reads as plain text. One request is in flight at a
/// time: the adapter answers each in order (a camera can take most of a second per control).
///
///     host → adapter   Q                      the camera-class controls and the card's name
///                      G <id> <id> …          read controls
///                      S <id>=<value> …       set controls, together (one VIDIOC_S_EXT_CTRLS)
///                      X <guid> <unit> <selector> <hex> [<hex>]   set a UVC extension-unit control
///                                             (UVCIOC_CTRL_QUERY SET_CUR) on the unit with that GUID,
///                                             else on <unit>; the second bytes, if any, are set on the
///                                             same control when the link closes (what was there before)
///                      R <guid> <unit> <selector>   read an extension-unit control (GET_CUR)
///     adapter → host   C <id> <min> <max> <step> <default> <flags>   one control (after Q) …
///                      N <card name>                                  … then the card, ending Q
///                      V <id>=<value> …       values read (after G), or the values set (after S)
///                      U <unit>               the extension-unit control was set, on that unit
///                      B <unit> <hex>         the extension-unit control read, on that unit
///                      E <errno> <text>       the request failed (EINVAL, ERANGE, EBUSY, EIO, ENODEV…)
public enum V4L2Wire {
    /// The longest `spacing` a set may carry, s: far past any command interval (the option's bound is
    /// 2 s), so a line asking more is not the driver's and the link's thread never sleeps on it.
    static let maximumSpacing = 10.0

    /// A camera-class control (V4L2_CID_CAMERA_CLASS_BASE + n).
    public enum Control: UInt32, Sendable, CaseIterable {
        case panRelative = 0x009a_0904
        case tiltRelative = 0x009a_0905
        case panReset = 0x009a_0906
        case tiltReset = 0x009a_0907
        case panAbsolute = 0x009a_0908
        case tiltAbsolute = 0x009a_0909
        case zoomAbsolute = 0x009a_090d
        case zoomContinuous = 0x009a_090f
        case panSpeed = 0x009a_0920
        case tiltSpeed = 0x009a_0921
    }

    public struct ControlInfo: Sendable, Equatable {
        public var id: UInt32
        public var minimum: Int64
        public var maximum: Int64
        public var step: UInt64
        public var defaultValue: Int64
        public var flags: UInt32
        public init(id: UInt32, minimum: Int64, maximum: Int64, step: UInt64, defaultValue: Int64, flags: UInt32) {
            self.id = id; self.minimum = minimum; self.maximum = maximum; self.step = step
            self.defaultValue = defaultValue; self.flags = flags
        }

        /// V4L2_CTRL_FLAG_VOLATILE: the device updates the value itself (a pose read back as it moves).
        public var isVolatile: Bool { flags & 0x0080 != 0 }
        public var isReadOnly: Bool { flags & 0x0004 != 0 }
        public var isWriteOnly: Bool { flags & 0x0040 != 0 }
        public var isDisabled: Bool { flags & 0x0001 != 0 }
    }

    public enum Request: Sendable, Equatable {
        case query
        case get([UInt32])
        /// Set at once: pan and tilt are halves of one UVC control (CT_PANTILT_ABSOLUTE, and
        /// CT_PANTILT_RELATIVE for the speeds), so one set per axis makes uvcvideo read the other
        /// half back and write it again (a stale or live value that can cancel the other's move),
        /// and some cameras (Insta360 Link 2) refuse a single axis. `spacing`: the least time, s,
        /// from the start of the previous set's ioctl to this one's (the command interval): the
        /// driver sends its sets that far apart, but one delivered to the link's thread late and the
        /// next on time reached the camera closer together (85 ms for 100 in the VM), so the
        /// thread waits out the rest.
        case set([(UInt32, Int32)], spacing: Double)
        /// A vendor extension-unit control: the unit is found by its GUID (16 bytes as the USB
        /// descriptor holds them) where the camera's descriptors can be read, else `unit` is used.
        /// `restore`: set on the same control when the link closes (the camera's own setting put
        /// back when dockd lets go of it); it must be as long as `data`.
        case extensionUnit(guid: [UInt8], unit: UInt8, selector: UInt8, data: [UInt8], restore: [UInt8]?)
        case extensionUnitRead(guid: [UInt8], unit: UInt8, selector: UInt8)

        public static func == (a: Request, b: Request) -> Bool {
            switch (a, b) {
            case (.query, .query): true
            case (.get(let x), .get(let y)): x == y
            case (.set(let x, let s1), .set(let y, let s2)): x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1) && s1 == s2
            case (.extensionUnit(let g1, let u1, let s1, let d1, let r1), .extensionUnit(let g2, let u2, let s2, let d2, let r2)):
                g1 == g2 && u1 == u2 && s1 == s2 && d1 == d2 && r1 == r2
            case (.extensionUnitRead(let g1, let u1, let s1), .extensionUnitRead(let g2, let u2, let s2)):
                g1 == g2 && u1 == u2 && s1 == s2
            default: false
            }
        }
    }

    public enum Reply: Sendable, Equatable {
        case control(ControlInfo)
        case card(String)
        case values([(UInt32, Int32)])
        /// An extension-unit control was set, on this unit.
        case unit(UInt8)
        /// An extension-unit control read, on this unit.
        case unitRead(UInt8, [UInt8])
        case failure(errno: Int32, text: String)

        public static func == (a: Reply, b: Reply) -> Bool {
            switch (a, b) {
            case (.control(let x), .control(let y)): x == y
            case (.card(let x), .card(let y)): x == y
            case (.values(let x), .values(let y)): x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
            case (.unit(let x), .unit(let y)): x == y
            case (.unitRead(let u1, let b1), .unitRead(let u2, let b2)): u1 == u2 && b1 == b2
            case (.failure(let e1, let t1), .failure(let e2, let t2)): e1 == e2 && t1 == t2
            default: false
            }
        }
    }

    public static func encode(_ request: Request) -> [UInt8] {
        let line = switch request {
        case .query: "Q"
        case .get(let ids): "G " + ids.map(String.init).joined(separator: " ")
        case .set(let values, let spacing): "S \(spacing) " + values.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
        case .extensionUnit(let guid, let unit, let selector, let data, let restore):
            "X \(hex(guid)) \(unit) \(selector) \(hex(data))" + (restore.map { " " + hex($0) } ?? "")
        case .extensionUnitRead(let guid, let unit, let selector): "R \(hex(guid)) \(unit) \(selector)"
        }
        return Array((line + "\n").utf8)
    }

    public static func encode(_ reply: Reply) -> [UInt8] {
        let line = switch reply {
        case .control(let c): "C \(c.id) \(c.minimum) \(c.maximum) \(c.step) \(c.defaultValue) \(c.flags)"
        case .card(let name): "N " + name.filter { $0 != "\n" }
        case .values(let values): "V " + values.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
        case .unit(let unit): "U \(unit)"
        case .unitRead(let unit, let bytes): "B \(unit) \(hex(bytes))"
        case .failure(let errno, let text): "E \(errno) " + text.filter { $0 != "\n" }
        }
        return Array((line + "\n").utf8)
    }

    public static func request(_ line: Substring) -> Request? {
        let words = line.split(separator: " ")
        switch words.first {
        case "Q" where words.count == 1: return .query
        case "G" where words.count > 1:
            let ids = words.dropFirst().compactMap { UInt32($0) }
            return ids.count == words.count - 1 ? .get(ids) : nil
        case "S" where words.count > 2:
            guard let spacing = Double(words[1]), spacing >= 0, spacing <= maximumSpacing else { return nil }
            let values = words.dropFirst(2).compactMap(pair)
            return values.count == words.count - 2 ? .set(values, spacing: spacing) : nil
        case "X" where words.count == 5 || words.count == 6:
            guard let guid = bytes(hex: words[1]), guid.count == 16, let unit = UInt8(words[2]), let selector = UInt8(words[3]),
                  let data = bytes(hex: words[4]), !data.isEmpty else { return nil }
            var restore: [UInt8]?
            if words.count == 6 {
                guard let bytes = bytes(hex: words[5]), bytes.count == data.count else { return nil }
                restore = bytes
            }
            return .extensionUnit(guid: guid, unit: unit, selector: selector, data: data, restore: restore)
        case "R" where words.count == 4:
            guard let guid = bytes(hex: words[1]), guid.count == 16, let unit = UInt8(words[2]), let selector = UInt8(words[3]) else { return nil }
            return .extensionUnitRead(guid: guid, unit: unit, selector: selector)
        default: return nil
        }
    }

    public static func reply(_ line: Substring) -> Reply? {
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        switch words.first {
        case "C" where words.count == 7:
            guard let id = UInt32(words[1]), let minimum = Int64(words[2]), let maximum = Int64(words[3]), let step = UInt64(words[4]),
                  let defaultValue = Int64(words[5]), let flags = UInt32(words[6]) else { return nil }
            return .control(ControlInfo(id: id, minimum: minimum, maximum: maximum, step: step, defaultValue: defaultValue, flags: flags))
        case "N": return .card(words.dropFirst().joined(separator: " "))
        case "V":
            let values = words.dropFirst().compactMap(pair)
            return values.count == words.count - 1 ? .values(values) : nil
        case "U" where words.count == 2:
            return UInt8(words[1]).map(Reply.unit)
        case "B" where words.count == 3:
            guard let unit = UInt8(words[1]), let read = bytes(hex: words[2]) else { return nil }
            return .unitRead(unit, read)
        case "E" where words.count >= 2:
            guard let errno = Int32(words[1]) else { return nil }
            return .failure(errno: errno, text: words.dropFirst(2).joined(separator: " "))
        default: return nil
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        String(bytes.flatMap { byte in [byte >> 4, byte & 0xF].map { Character(String($0, radix: 16)) } })
    }

    static func bytes(hex: Substring) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0, digits.count <= 2048 else { return nil }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    private static func pair(_ word: Substring) -> (UInt32, Int32)? {
        let parts = word.split(separator: "=")
        guard parts.count == 2, let id = UInt32(parts[0]), let value = Int32(parts[1]) else { return nil }
        return (id, value)
    }
}
