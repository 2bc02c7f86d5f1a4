#if canImport(Glibc)
import Glibc
#endif
import DockJSON

/// What dockctl prints on stdout: lines written straight to the fd (so `dockctl watch | grep` sees
/// each as it happens), and for `--json` one compact JSON object per line (NDJSON, as gpspipe -w).
enum Output {
    static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// Compact JSON with sorted keys. Stands report in float32, so dockd's doubles carry float
    /// noise: a number that is a float32 is written as the float it is (0.9, not
    /// 0.8999999761581421); any other number keeps every digit.
    static func json(_ value: JSONValue) {
        line(jsonText(withoutFloatNoise(value)))
    }

    static func jsonText(_ value: JSONValue) -> String {
        var text = JSONBytes()
        text.writeJSON(value)
        return String(decoding: text.bytes, as: UTF8.self)
    }

    static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return }
                offset += n
            }
        }
    }

    /// A number as `json` writes it.
    static func number(_ value: JSONValue) -> String { jsonText(withoutFloatNoise(value)) }

    private static func withoutFloatNoise(_ value: JSONValue) -> JSONValue {
        switch value {
        case .number(let x):
            guard x.isFinite, x != x.rounded() else { return value }
            let single = Float(x)
            // Within a few ulps: dockd's decimal text of the float, read back, may be off by one.
            return single.isFinite && abs(Double(single) - x) <= 4 * x.ulp ? .float(single) : value
        case .array(let a): return .array(a.map(withoutFloatNoise))
        case .object(let o): return .object(o.mapValues(withoutFloatNoise))
        default: return value
        }
    }
}

/// A note for the person at the terminal, never mixed into what scripts read on stdout.
func note(_ text: String) {
    Output.write("dockctl: \(text)\n", to: STDERR_FILENO)
}

extension JSONValue {
    /// The value as a person reads it in a line: a string as itself, a whole number without a
    /// fraction, null as "null".
    var text: String {
        switch self {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : "\(n)"
        case .float(let f): "\(f)"
        case .string(let s): s
        case .array, .object: Output.jsonText(self)
        }
    }
}

/// `x` with `digits` decimals (printf's %.Nf).
func fixed(_ x: Double, _ digits: Int) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    _ = withVaList([x]) { vsnprintf(&buffer, buffer.count, "%.\(digits)f", $0) }
    return String(cString: buffer)
}

/// Now as UTC ISO 8601 with milliseconds: 2026-11-26T00:08:17.123Z.
func utcTimestamp() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var seconds = now.tv_sec
    var t = tm()
    gmtime_r(&seconds, &t)
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    let ms = Int(now.tv_nsec / 1_000_000)
    let millis = ms < 10 ? "00\(ms)" : ms < 100 ? "0\(ms)" : "\(ms)"
    return "\(t.tm_year + 1900)-\(two(t.tm_mon + 1))-\(two(t.tm_mday))T\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)).\(millis)Z"
}
