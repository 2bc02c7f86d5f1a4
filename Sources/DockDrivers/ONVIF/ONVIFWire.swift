/// What the ONVIF driver and the adapter that does its HTTP (DockIO's `ONVIFLink`) say to each
/// other over the stand's link: one request in flight at a time, each a header line and a body of
/// the length it gives (SOAP bodies hold newlines), so the pure driver and dockd's engine see a
/// byte link like any other. The adapter adds the WS-Security header where asked (it holds the
/// password; the driver never sees it) and says its wall clock with each answer, from which the
/// driver keeps the camera's clock offset that the header's Created needs.
///
///     host → adapter   P <path> <authenticate 0|1> <clock offset s> <length>\n<SOAP Body content>
///                      A\n                 the request in flight is abandoned: its answer is not
///                                          wanted; its connection is let go, and its reply (or
///                                          an E if none had come) still goes, in order
///     adapter → host   R <HTTP status> <wall clock s> <length>\n<HTTP body>
///                      E <text>\n          no answer: refused, reset, timed out, too big, not HTTP
///
/// Every request gets exactly one reply frame, abandoned or not, so the host matches them in order.
public enum ONVIFWire {
    public struct Request: Sendable, Equatable {
        /// The service's path on the camera (the host and port are the link's).
        public var path: String
        public var authenticate: Bool
        /// The camera's clock minus the host's wall clock, s.
        public var clockOffset: Double
        /// The SOAP Body's content (the adapter wraps it in an envelope).
        public var body: [UInt8]
        public init(path: String, authenticate: Bool, clockOffset: Double, body: [UInt8]) {
            self.path = path; self.authenticate = authenticate; self.clockOffset = clockOffset; self.body = body
        }
    }

    public enum Reply: Sendable, Equatable {
        case response(status: Int, wallClock: Double, body: [UInt8])
        case failure(String)
    }

    /// The largest body either way: a bigger reply is an error, never buffered.
    public static let maximumBody = 1 << 20

    /// The host gives up the request in flight (a Stop must not wait behind a GetStatus).
    public static let abandon = Array("A\n".utf8)

    public static func encode(_ request: Request) -> [UInt8] {
        let path = request.path.isEmpty ? "/" : String(request.path.filter { $0 != " " && $0 != "\n" })
        return Array("P \(path) \(request.authenticate ? 1 : 0) \(request.clockOffset) \(request.body.count)\n".utf8) + request.body
    }

    public static func encode(_ reply: Reply) -> [UInt8] {
        switch reply {
        case .response(let status, let wallClock, let body): Array("R \(status) \(wallClock) \(body.count)\n".utf8) + body
        case .failure(let text): Array("E \(text.filter { $0 != "\n" })\n".utf8)
        }
    }

    /// Reads frames from a byte stream as they complete: header lines and the bodies they announce.
    public struct Decoder: Sendable {
        public enum Frame: Sendable, Equatable {
            case request(Request)
            case abandon
            case reply(Reply)
        }

        private var buffer: [UInt8] = []
        public init() {}

        /// Appends bytes; returns the frames now complete, or nil when the stream is broken (a
        /// header that does not parse, or a body over `maximumBody`): the link must close.
        public mutating func feed(_ bytes: [UInt8]) -> [Frame]? {
            buffer += bytes
            var frames: [Frame] = []
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let words = String(decoding: buffer[..<newline], as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
                let bodyStart = newline + 1
                switch words.first {
                case "E":
                    frames.append(.reply(.failure(words.dropFirst().joined(separator: " "))))
                    buffer.removeSubrange(..<bodyStart)
                case "A" where words.count == 1:
                    frames.append(.abandon)
                    buffer.removeSubrange(..<bodyStart)
                case "R" where words.count == 4:
                    guard let status = Int(words[1]), let wall = Double(words[2]), let length = Int(words[3]),
                          (0...ONVIFWire.maximumBody).contains(length) else { return nil }
                    guard buffer.count - bodyStart >= length else { return frames }
                    frames.append(.reply(.response(status: status, wallClock: wall, body: Array(buffer[bodyStart..<(bodyStart + length)]))))
                    buffer.removeSubrange(..<(bodyStart + length))
                case "P" where words.count == 5:
                    guard let offset = Double(words[3]), let length = Int(words[4]), (0...ONVIFWire.maximumBody).contains(length),
                          words[2] == "0" || words[2] == "1" else { return nil }
                    guard buffer.count - bodyStart >= length else { return frames }
                    frames.append(.request(Request(path: String(words[1]), authenticate: words[2] == "1", clockOffset: offset,
                                                   body: Array(buffer[bodyStart..<(bodyStart + length)]))))
                    buffer.removeSubrange(..<(bodyStart + length))
                default:
                    return nil
                }
            }
            return buffer.count > 256 ? nil : frames  // a header line is short
        }
    }
}
