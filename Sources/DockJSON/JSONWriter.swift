/// Where JSON text is written: NIO's ByteBuffer in the daemon (DockDaemon/ByteBufferJSONSink.swift),
/// a byte array (JSONBytes, below) in the clients, the tools and the fuzz target.
public protocol JSONSink {
    mutating func jsonByte(_ byte: UInt8)
    mutating func jsonBytes(_ bytes: UnsafeBufferPointer<UInt8>)
}

extension JSONSink {
    @inlinable public mutating func jsonText(_ text: StaticString) {
        jsonBytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inlinable public mutating func jsonText(_ text: String) {
        var text = text
        text.withUTF8 { jsonBytes($0) }
    }
}

/// Writes JSON text straight into the sink: keys sorted, no whitespace, `/` not escaped,
/// non-ASCII as UTF-8, numbers as the shortest decimal that reads back as the same double (float
/// for `.float`), integers without a fraction. A non-finite number has no JSON form and is written
/// as null (the API's schemas allow null where a measurement may be missing).
extension JSONSink {
    @inlinable public mutating func writeJSON(_ value: JSONValue) {
        switch value {
        case .null: jsonText("null")
        case .bool(let b): jsonText(b ? "true" : "false")
        case .number(let n): writeJSONNumber(n)
        case .float(let f): writeJSONNumber(f)
        case .string(let s): writeJSONString(s)
        case .array(let a):
            jsonByte(UInt8(ascii: "["))
            for (i, element) in a.enumerated() {
                if i > 0 { jsonByte(UInt8(ascii: ",")) }
                writeJSON(element)
            }
            jsonByte(UInt8(ascii: "]"))
        case .object(let o):
            jsonByte(UInt8(ascii: "{"))
            var first = true
            for key in o.keys.sorted() {
                if !first { jsonByte(UInt8(ascii: ",")) }
                first = false
                writeJSONString(key)
                jsonByte(UInt8(ascii: ":"))
                writeJSON(o[key]!)
            }
            jsonByte(UInt8(ascii: "}"))
        }
    }

    @inlinable public mutating func writeJSONNumber(_ n: Double) {
        guard n.isFinite else { jsonText("null"); return }
        // Integers below 2^53 are exact: written without ".0" (and -0 as 0).
        if n == n.rounded(.towardZero), abs(n) < 9_007_199_254_740_992 {
            writeJSONInteger(Int64(n))
        } else {
            jsonText(n.description)
        }
    }

    @inlinable public mutating func writeJSONNumber(_ f: Float) {
        guard f.isFinite else { jsonText("null"); return }
        if f == f.rounded(.towardZero), abs(f) < 16_777_216 {
            writeJSONInteger(Int64(f))
        } else {
            jsonText(f.description)
        }
    }

    @inlinable public mutating func writeJSONInteger(_ value: Int64) {
        if value < 0 { jsonByte(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        if magnitude < 10 { jsonByte(UInt8(ascii: "0") + UInt8(magnitude)); return }
        // At most 19 digits, written back to front into a small stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var at = 20
            while magnitude > 0 {
                at -= 1
                digits[at] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            jsonBytes(UnsafeBufferPointer(rebasing: digits[at..<20]))
        }
    }

    @inlinable public mutating func writeJSONString(_ s: String) {
        jsonByte(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            var run = 0  // start of the bytes that need no escape, written in one go
            for (i, c) in utf8.enumerated() where c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") {
                if run < i { jsonBytes(UnsafeBufferPointer(rebasing: utf8[run..<i])) }
                run = i + 1
                switch c {
                case UInt8(ascii: "\""): jsonText("\\\"")
                case UInt8(ascii: "\\"): jsonText("\\\\")
                case 0x0A: jsonText("\\n")
                case 0x0D: jsonText("\\r")
                case 0x09: jsonText("\\t")
                case 0x08: jsonText("\\b")
                case 0x0C: jsonText("\\f")
                default:
                    jsonText("\\u00")
                    let hex: StaticString = "0123456789abcdef"
                    jsonByte(hex.utf8Start[Int(c >> 4)])
                    jsonByte(hex.utf8Start[Int(c & 0xF)])
                }
            }
            if run < utf8.count { jsonBytes(UnsafeBufferPointer(rebasing: utf8[run...])) }
        }
        jsonByte(UInt8(ascii: "\""))
    }
}

/// JSON text in a byte array (a client's request line, a tool's output line).
public struct JSONBytes: JSONSink {
    public var bytes: [UInt8] = []
    public init() {}
    public mutating func jsonByte(_ byte: UInt8) { bytes.append(byte) }
    public mutating func jsonBytes(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes.append(contentsOf: bytes) }
}
