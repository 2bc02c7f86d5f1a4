#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program started with posix_spawn, its standard streams the descriptors given (Foundation's
/// Process would bring Foundation and ICU into the package's one binary).
final class ChildProcess {
    let path: String
    let processIdentifier: pid_t
    /// Set once the child has been reaped.
    private var exited = false

    /// Starts `path` with `arguments`; each stream the descriptor given, dup'd into the child.
    /// The caller's descriptors stay open: close them when the child has its copies.
    init(path: String, arguments: [String], input: Int32, output: Int32, error: Int32) throws(ChildProcessError) {
        self.path = path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, stream) in [(input, STDIN_FILENO), (output, STDOUT_FILENO), (error, STDERR_FILENO)] {
            posix_spawn_file_actions_adddup2(&actions, descriptor, stream)
        }
        let argv = ([path] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = (argv + [nil]).withUnsafeBufferPointer { argv in
            posix_spawn(&pid, path, &actions, nil, UnsafeMutablePointer(mutating: argv.baseAddress!), environ)
        }
        guard status == 0 else { throw ChildProcessError(description: "cannot start \(path): \(String(cString: strerror(status)))") }
        processIdentifier = pid
    }

    var isRunning: Bool {
        guard !exited else { return false }
        var status: Int32 = 0
        if waitpid(processIdentifier, &status, WNOHANG) != 0 { exited = true }
        return !exited
    }

    func signal(_ number: Int32) { if !exited { kill(processIdentifier, number) } }

    func waitUntilExit() {
        guard !exited else { return }
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) < 0 && errno == EINTR {}
        exited = true
    }
}

struct ChildProcessError: Error, CustomStringConvertible {
    let description: String
}

/// A pipe whose two ends close on exec: each child gets only the end dup'd into it.
func closeOnExecPipe() -> (read: Int32, write: Int32)? {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { return nil }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return (ends[0], ends[1])
}
