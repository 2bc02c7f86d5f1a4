#if canImport(Glibc)
import Glibc
#endif

/// A small file read or written whole with the C library (dockd's configuration, state and API
/// document, a USB device's descriptors in sysfs, dock-sim's scripts), so that none needs Foundation.
package enum WholeFile {
    /// Why: the C library's text for errno, or a sentence of ours.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        static func errno(_ code: Int32) -> Failure { Failure(description: String(cString: strerror(code))) }
    }

    /// The file's bytes; refused when it has more than `limit`.
    package static func read(_ path: String, atMost limit: Int) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .errno(Glibc.errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return bytes }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw .errno(Glibc.errno)
            }
            bytes += chunk[..<n]
            guard bytes.count <= limit else { throw Failure(description: "larger than \(limit) bytes") }
        }
    }

    /// Writes `bytes` to `path.new`, flushes it to the disk and renames it over `path`: a crash
    /// leaves the old file or the new one, never half of one.
    package static func replace(_ path: String, with bytes: [UInt8]) throws(Failure) {
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw .errno(Glibc.errno) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                let error = Glibc.errno
                close(fd)
                unlink(temporary)
                throw .errno(error)
            }
            written += n
        }
        guard fsync(fd) == 0 else {
            let error = Glibc.errno
            close(fd)
            unlink(temporary)
            throw .errno(error)
        }
        guard close(fd) == 0 else { unlink(temporary); throw .errno(Glibc.errno) }
        guard rename(temporary, path) == 0 else {
            let error = Glibc.errno
            unlink(temporary)
            throw .errno(error)
        }
    }
}
