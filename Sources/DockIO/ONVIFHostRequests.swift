import DockDrivers
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The driver's requests as `ONVIFLink`'s thread reads them from the host's end of the link: in
/// order, and also while the thread awaits a camera's reply or connection, so that an abandonment
/// (`ONVIFWire.abandon`: a Stop must not wait behind a GetStatus) is heard then rather than after
/// the reply. Used by that one thread only.
final class ONVIFHostRequests {
    private let socket: Int32
    private var decoder = ONVIFWire.Decoder()
    private var queued: [ONVIFWire.Decoder.Frame] = []
    private var ended = false
    /// A byte is written to it when an awaited reply's future completes: the thread polls it
    /// beside the host's socket.
    private let completions: (read: Int32, write: Int32)

    /// nil when no pipe could be made (out of descriptors).
    init?(socket: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        self.socket = socket
        completions = (fds[0], fds[1])
    }

    deinit {
        close(completions.read)
        close(completions.write)
    }

    /// The next frame, waiting for it; nil once the host's end is closed or sends what is not ONVIFWire.
    func next() -> ONVIFWire.Decoder.Frame? {
        while queued.isEmpty {
            guard readMore() else { return nil }
        }
        return queued.removeFirst()
    }

    /// Waits for `future`, reading the host's frames meanwhile. When the host abandons the request
    /// (or closes its end: no one awaits the answer), `abandon` lets the request go — closing its
    /// connection fails the future — and the wait goes on until the future completes.
    func wait<T: Sendable>(for future: EventLoopFuture<T>, abandon: () -> Void) -> (result: Result<T, any Error>, abandoned: Bool) {
        let signal = completions.write
        future.whenComplete { _ in
            var byte: UInt8 = 1
            _ = write(signal, &byte, 1)
        }
        var abandoned = false
        func abandonIfAsked() {
            guard !abandoned else { return }
            if let index = queued.firstIndex(of: .abandon) {
                queued.remove(at: index)
            } else if !ended {
                return
            }
            abandoned = true
            abandon()
        }
        abandonIfAsked()  // read with the request itself
        while true {
            var fds = [pollfd(fd: completions.read, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: abandoned ? -1 : socket, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { break }
            if fds[0].revents != 0 {
                var byte: UInt8 = 0
                _ = read(completions.read, &byte, 1)
                break
            }
            if fds[1].revents != 0 {
                _ = readMore()
                abandonIfAsked()
            }
        }
        // Completed by now, and `wait` returns at once (were the poll to fail, it blocks until the
        // request's deadline fails the future).
        return (Result { try future.wait() }, abandoned)
    }

    /// Reads what the host sent; false once its end is closed or what it sent is not ONVIFWire.
    private func readMore() -> Bool {
        guard !ended else { return false }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var count: Int
        repeat { count = read(socket, &chunk, chunk.count) } while count < 0 && errno == EINTR
        guard count > 0, let frames = decoder.feed(Array(chunk[0..<count])) else {
            ended = true
            return false
        }
        queued += frames
        return true
    }
}
