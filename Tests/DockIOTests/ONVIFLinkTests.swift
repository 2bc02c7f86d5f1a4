import DockDrivers
@testable import DockIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `ONVIFLink`'s thread against a camera on loopback made of real sockets: a listener the test
/// accepts from, and the link's host end as dockd holds it.
@Suite struct ONVIFLinkTests {
    /// Generous: a loaded host starves test processes for 15–28 s.
    private static let deadline: Int32 = 60_000

    /// A camera whose accept queue is full (its HTTP server busy) drops the SYNs that come: a
    /// connect to it stays in progress, the kernel sending the SYN again 1 s, 3 s later, until the
    /// request's timeout. A STOP abandons a GetStatus in flight (`ONVIFWire.abandon`), and it
    /// must not wait behind that connect: the GetStatus is answered as abandoned, not as a
    /// connect that timed out, and the Stop after it goes on a connection of its own.
    @Test func anAbandonedRequestStillConnectingLetsTheStopGo() throws {
        // Backlog 0: one connection queued and never accepted fills the queue.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try #require(withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, $0, &length) == 0
            }
        })
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(filler) }
        try #require(withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) == 0 }
        })

        let link = try ONVIFLink.open(ONVIFAddress(user: nil, host: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port))))
        defer { close(link) }
        var replies = ONVIFWire.Decoder()
        func request(_ body: String) -> [UInt8] {
            ONVIFWire.encode(ONVIFWire.Request(path: "/onvif/ptz_service", authenticate: false, clockOffset: 0, body: Array(body.utf8)))
        }
        try #require(DetachedThread.writeAll(link, request("<tptz:GetStatus/>") + ONVIFWire.abandon))
        let abandoned = try #require(nextFrame(link, &replies), "no answer to the GetStatus")
        #expect(abandoned == .reply(.failure("abandoned by dockd before its reply")),
                "the GetStatus given up while it connected, not when its connect timed out")

        // The queue drained, the Stop connects and is answered.
        let queued = accept(listener, nil, nil)
        try #require(queued >= 0)
        close(queued)
        try #require(DetachedThread.writeAll(link, request("<tptz:Stop/>")))
        let camera = try #require(acceptWithin(listener), "no connection for the Stop")
        defer { close(camera) }
        let received = try #require(httpRequest(camera), "no request on the Stop's connection")
        #expect(received.contains("<tptz:Stop/>"), "\(received)")
        let body = "<Envelope/>"
        try #require(DetachedThread.writeAll(camera, Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)))
        let answered = try #require(nextFrame(link, &replies), "no answer to the Stop")
        guard case .reply(.response(let status, _, let replyBody)) = answered else {
            Issue.record("\(answered)")
            return
        }
        #expect(status == 200 && replyBody == Array(body.utf8))
    }

    /// Waits for `fd` to be readable; false after `deadline`.
    private func readable(_ fd: Int32) -> Bool {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, 1, Self.deadline)
            if ready < 0 && errno == EINTR { continue }
            return ready > 0
        }
    }

    private func nextFrame(_ fd: Int32, _ decoder: inout ONVIFWire.Decoder) -> ONVIFWire.Decoder.Frame? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while readable(fd) {
            let count = read(fd, &chunk, chunk.count)
            guard count > 0, let frames = decoder.feed(Array(chunk[..<count])) else { return nil }
            if let frame = frames.first { return frame }
        }
        return nil
    }

    private func acceptWithin(_ listener: Int32) -> Int32? {
        guard readable(listener) else { return nil }
        let fd = accept(listener, nil, nil)
        return fd >= 0 ? fd : nil
    }

    /// One HTTP request, its head and the body its Content-Length gives, as text.
    private func httpRequest(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while readable(fd) {
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            bytes += chunk[..<count]
            let text = String(decoding: bytes, as: UTF8.self)
            guard let end = text.range(of: "\r\n\r\n") else { continue }
            let head = text[..<end.lowerBound].lowercased()
            let declared = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).filter { $0 != " " }) } ?? 0
            if text[end.upperBound...].utf8.count >= declared { return text }
        }
        return nil
    }
}
