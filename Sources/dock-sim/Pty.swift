#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pseudo-terminal pair in raw mode: the master is our end of the "serial cable", the slave is
/// the device path a host opens as if it were /dev/ttyACM0.
struct Pty {
    let master: CInt
    let slave: CInt
    let path: String

    static func open() throws -> Pty {
        var master: CInt = -1, slave: CInt = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw SystemError("openpty") }
        do {
            // Raw on both ends: no echo, no line editing, no CR/LF translation, 8-bit clean.
            // Settings live with the tty, so a host that opens the slave gets raw mode too.
            for fd in [master, slave] {
                var attributes = termios()
                guard tcgetattr(fd, &attributes) == 0 else { throw SystemError("tcgetattr") }
                cfmakeraw(&attributes)
                guard tcsetattr(fd, TCSANOW, &attributes) == 0 else { throw SystemError("tcsetattr") }
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
            var name = [CChar](repeating: 0, count: 256)
            let status = ttyname_r(slave, &name, name.count)
            guard status == 0 else { throw SystemError("ttyname_r", status) }
            let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return Pty(master: master, slave: slave, path: path)
        } catch {
            closeDescriptor(master); closeDescriptor(slave)
            throw error
        }
    }
}

extension Pty {
    /// Bytes waiting to be read on the slave side (FIONREAD on our own slave fd).
    static func unreadBytes(_ slave: CInt) -> Int {
        var count: CInt = 0
        return ioctl(slave, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
    }
}

/// A stable name for a changing device path, like a udev rule's /dev/dock0 symlink.
enum StableLink {
    /// Points `link` at `target`, atomically (a host never sees the link missing), refusing to
    /// replace anything that is not a symlink.
    static func point(_ link: String, to target: String) throws {
        var info = stat()
        if lstat(link, &info) == 0 && (info.st_mode & S_IFMT) != S_IFLNK {
            throw SystemError("\(link) exists and is not a symlink; not replacing it", EEXIST)
        }
        let temporary = "\(link).dock-sim-\(getpid())"
        unlink(temporary)
        guard symlink(target, temporary) == 0 else { throw SystemError("symlink \(temporary)") }
        guard rename(temporary, link) == 0 else {
            let code = errno
            unlink(temporary)
            throw SystemError("rename \(temporary) → \(link)", code)
        }
    }

    /// Removes `link` if it is still a symlink (never a file someone put there since).
    static func remove(_ link: String) {
        var info = stat()
        if lstat(link, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK { unlink(link) }
    }
}

/// `close(2)` under a name that types with a `close()` method of their own can still call.
func closeDescriptor(_ fd: CInt) { _ = close(fd) }
