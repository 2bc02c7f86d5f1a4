import Logging
import Synchronization

/// The log level every handler follows, changeable while dockd runs (a SIGHUP with a new
/// `daemon.log_level`): swift-log's handlers are values copied into each logger, so the level
/// lives here, shared.
package final class LogLevelSwitch: Sendable {
    private let level: Mutex<Logger.Level>
    package init(_ level: Logger.Level) { self.level = Mutex(level) }
    var current: Logger.Level {
        get { level.withLock { $0 } }
    }
    func set(_ new: Logger.Level) { level.withLock { $0 = new } }
}

/// A handler whose level is the switch's.
package struct SwitchedLogHandler<Inner: LogHandler>: LogHandler {
    var inner: Inner
    let levels: LogLevelSwitch

    package init(inner: Inner, levels: LogLevelSwitch) { self.inner = inner; self.levels = levels }

    package var logLevel: Logger.Level {
        get { levels.current }
        set { levels.set(newValue) }
    }

    package var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    package func log(event: LogEvent) { inner.log(event: event) }
}
