#if canImport(Glibc)
import Glibc
#endif
import Logging

/// The API socket is 0660 and owned by the `dock` group, so members of that group (and root) may
/// steer stands and nobody else can connect.
enum SocketPermissions {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func apply(path: String, mode: UInt16, group: String?, logger: Logger) throws {
        if let group {
            if let entry = getgrnam(group) {
                if chown(path, uid_t.max, entry.pointee.gr_gid) != 0 {
                    logger.warning("cannot give \(path) to group \(group): \(String(cString: strerror(errno)))")
                }
            } else {
                logger.warning("group '\(group)' does not exist; \(path) keeps the daemon's group")
            }
        }
        guard chmod(path, mode_t(mode)) == 0 else {
            throw Failure(description: "cannot set mode \(String(mode, radix: 8)) on \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The bound socket to its final name, in one step (rename(2) replaces nothing but what
    /// `SocketPath.claim` cleared).
    static func move(_ staging: String, to path: String) throws {
        guard rename(staging, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlinkSocket(staging)
            throw Failure(description: "cannot move the API socket \(staging) to \(path): \(reason)")
        }
    }
}
