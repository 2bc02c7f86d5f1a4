import DockIO
import DockJSON
import NIOCore
import NIOPosix

/// Runs the changes of dockd's state files (`presets.json`, `defaults.json`) on NIO's blocking
/// thread pool, one at a time in the order they were asked. A write ends in an fsync, which takes
/// hundreds of milliseconds on an SD card; the event loop that would wait for it runs every stand's
/// control loop and the API. A change starts once the one before it has ended (written or failed),
/// so it computes from what the file holds, two saves in a row land in order, and a failed write
/// leaves nothing of itself in the next. Its future completes on `loop` once the file is on the disk.
final class StateWriter: Sendable {
    /// How a file is replaced: `WholeFile.replace` (a test slows it down).
    typealias Replace = @Sendable (_ path: String, _ bytes: [UInt8]) throws(WholeFile.Failure) -> Void

    let loop: any EventLoop
    private let pool: NIOThreadPool
    private let replace: Replace
    private let changes: OneAtATime

    init(loop: any EventLoop, pool: NIOThreadPool = .singleton, replace: @escaping Replace = { path, bytes throws(WholeFile.Failure) in
        try WholeFile.replace(path, with: bytes)
    }) {
        self.loop = loop; self.pool = pool; self.replace = replace
        changes = OneAtATime(loop: loop)
    }

    /// Runs `body` on the pool after every change asked before it; it writes with `write`.
    func change<T: Sendable>(_ body: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        let pool = self.pool, loop = self.loop
        return changes.run { pool.runIfActive(eventLoop: loop, body) }
    }

    /// Writes `value` whole over the file at `path` (see `WholeFile.replace`); on the pool, in a change.
    func write(_ value: JSONValue, to path: String) throws(RPCError) {
        var text = ByteBuffer()
        text.writeJSON(value)
        StateFile.makeDirectory(of: path)
        do {
            try replace(path, Array(text.readableBytesView))
        } catch {
            throw .internal("cannot write \(path): \(error) (the state directory: \(StateFile.directorySetting))")
        }
    }
}
