#if canImport(Glibc)
import Glibc
#endif

package enum FileManagerLite {
    package static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The directory holding `path`: "." for a bare name, "/" for "/" itself; a trailing slash ends no
    /// component (the directory of "/var/lib/dockd/" is "/var/lib").
    package static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}

package enum FileHandleLite {
    package static func stderr(_ text: String) {
        let line = Array((text + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

func unlinkSocket(_ path: String) { _ = unlink(path) }

/// The API socket's path, claimed before dockd binds it, so that a second dockd started on the same
/// path refuses to start instead of taking the socket from the first (which would then be
/// unreachable), and nothing but a stale socket is ever removed.
enum SocketPath {
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// Takes `PATH.lock` (an exclusive flock held for the life of the process: its descriptor is
    /// never closed), then clears the way for the bind: a socket nobody answers on is a leftover
    /// and is removed; a socket something answers on, or anything that is not a socket (a regular
    /// file, a directory), is left alone and refused.
    static func claim(_ path: String) throws(Refusal) {
        let directory = FileManagerLite.directory(of: path)
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw Refusal(description: "cannot serve the API on \(path): the directory \(directory) \(errnoText(errno, missing: "does not exist"))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw Refusal(description: "cannot serve the API on \(path): \(directory) is not a directory")
        }
        let lockPath = path + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw Refusal(description: "cannot serve the API on \(path): cannot open \(lockPath): \(errnoText(errno))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            close(fd)
            if error == EWOULDBLOCK {
                throw Refusal(description: "another dockd is serving the API on \(path) (it holds \(lockPath)); not starting a second one")
            }
            throw Refusal(description: "cannot serve the API on \(path): cannot lock \(lockPath): \(errnoText(error))")
        }
        try clearStale(path)
    }

    /// Where the socket is bound before it is renamed to `path` with its mode and group set (so no
    /// client ever finds it with the umask's mode), cleared of a socket a killed dockd left there.
    /// Call after `claim`: the lock makes the name this process's.
    static func staging(for path: String) throws(Refusal) -> String {
        let staging = path + ".new"
        try clearStale(staging)
        return staging
    }

    /// Makes way at `path`: nothing there, or a socket nobody answers on (removed); anything else
    /// is refused.
    private static func clearStale(_ path: String) throws(Refusal) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw Refusal(description: "cannot serve the API on \(path): \(errnoText(errno))")
        }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw Refusal(description: "cannot serve the API on \(path): it exists and is not a socket; dockd removes nothing but a stale socket")
        }
        if answers(path) {
            throw Refusal(description: "another server answers on \(path); not replacing its socket")
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw Refusal(description: "cannot remove the stale socket \(path): \(errnoText(errno))")
        }
    }

    /// Whether something listens on the Unix socket at `path` (a leftover socket refuses: ECONNREFUSED).
    private static func answers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // A live server with a full backlog refuses a non-blocking connect with EAGAIN: still alive.
        return result == 0 || errno == EAGAIN
    }

    private static func errnoText(_ code: Int32, missing: String? = nil) -> String {
        if code == ENOENT, let missing { return missing }
        return String(cString: strerror(code))
    }
}

/// The open-file limit (RLIMIT_NOFILE): each API client is a descriptor.
enum FileLimit {
    /// Descriptors kept for everything but API clients: stands, the listening socket, the event
    /// loops' epoll and wake-up descriptors, the journal, udev.
    static let reserve = 64

    /// Raises the soft limit to the hard one (systemd's LimitNOFILE sets both; a shell usually
    /// gives a soft 1024 under a far higher hard limit) and returns the soft limit now in force.
    @discardableResult
    static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }
}
