import Foundation

/// What dockctl prints on stdout: lines written straight to the fd (so `dockctl watch | grep` sees
/// each as it happens), and for `--json` one compact JSON object per line (NDJSON, as gpspipe -w).
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func json(_ value: Any) {
        line(JSONText.encode(value))
    }
}

/// Compact JSON with sorted keys. Stands report in float32, so dockd's doubles carry float noise:
/// a number that is a float32 is written as the float it is (0.9, not 0.8999999761581421); any other
/// number keeps every digit.
enum JSONText {
    static func encode(_ value: Any) -> String {
        switch value {
        case let s as String: return string(s)
        case let n as NSNumber: return number(n)
        case let a as [Any]: return "[" + a.map(encode).joined(separator: ",") + "]"
        case let d as [String: Any]:
            return "{" + d.keys.sorted().map { string($0) + ":" + encode(d[$0]!) }.joined(separator: ",") + "}"
        case let b as Bool: return b ? "true" : "false"
        case let i as Int: return String(i)
        case let x as Double: return double(x)
        default: return "null"
        }
    }

    private static func number(_ n: NSNumber) -> String {
        switch String(cString: n.objCType) {
        case "c", "B": return n.boolValue ? "true" : "false"  // what JSONSerialization makes of true/false
        case "f", "d": return double(n.doubleValue)
        default: return n.stringValue
        }
    }

    static func double(_ x: Double) -> String {
        guard x.isFinite else { return "null" }
        if x == x.rounded(), abs(x) < 1e15 { return String(Int(x)) }
        let single = Float(x)
        // Within a few ulps: dockd's decimal text of the float, read back, may be off by one.
        if abs(Double(single) - x) <= 4 * x.ulp, single.isFinite { return "\(single)" }
        return "\(x)"
    }

    private static func string(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
