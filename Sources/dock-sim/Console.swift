#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Line output without stdio buffering: the `pty …` line must reach a parent that reads our stdout
/// through a pipe at once, and stdio's `stdout`/`stderr` globals are not concurrency-safe in Swift 6.
/// One `write(2)` per line keeps lines from the event loop and the stdin thread from interleaving.
enum Console {
    static func out(_ line: String) { writeAll(STDOUT_FILENO, line + "\n") }
    static func err(_ line: String) { writeAll(STDERR_FILENO, "dock-sim: " + line + "\n") }

    private static func writeAll(_ fd: CInt, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            // A closed stdout/stderr (parent gone) is not worth dying for: drop the line.
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// A failed system call, with errno turned into text for the user.
struct SystemError: Error, CustomStringConvertible {
    var call: String
    var code: CInt
    init(_ call: String, _ code: CInt = errno) { self.call = call; self.code = code }
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}
