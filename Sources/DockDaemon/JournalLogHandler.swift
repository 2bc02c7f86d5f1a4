import CSystemd
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// swift-log to journald: each entry with its PRIORITY, the message, and swift-log metadata as
/// journal fields (`stand=…` becomes `DOCKD_STAND=…`), so `journalctl -u dockd DOCKD_STAND=SIM-0001`
/// finds one stand's lines. Used when systemd connected stderr to the journal (JOURNAL_STREAM).
/// Sent by the journal's own thread (`LogLineQueue`): sd_journal_sendv blocks while journald's
/// socket is full.
package struct JournalLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level
    let label: String

    package init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    /// Every handler's lines, in one order, to the journal.
    private static let journal = LogLineQueue<[String]>(send: send, dropNote: { dropped in
        ["MESSAGE=\(dropped) log line(s) dropped here: journald did not take them as fast as dockd wrote them",
         "PRIORITY=\(priority(.warning))", "SYSLOG_IDENTIFIER=dockd"]
    })

    /// Waits, at most `seconds`, for the lines logged so far to reach the journal (before dockd exits).
    package static func flush(upTo seconds: Double) {
        journal.flush(upTo: seconds)
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// True when stderr is the journal stream systemd set up for this service.
    package static var stderrIsJournal: Bool {
        guard let stream = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return stream == "\(info.st_dev):\(info.st_ino)"
    }

    package func log(event: LogEvent) {
        var fields = [
            "MESSAGE=\(event.message)",
            "PRIORITY=\(Self.priority(event.level))",
            "SYSLOG_IDENTIFIER=dockd",
            "CODE_FILE=\(event.file)", "CODE_LINE=\(event.line)", "CODE_FUNC=\(event.function)",
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields.append("DOCKD_\(Self.fieldName(key))=\(value)")
        }
        Self.journal.enqueue(fields)
    }

    @Sendable private static func send(_ fields: [String]) {
        // C copies, so the pointers in the iovecs stay valid for the whole call.
        let copies = fields.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let vectors = zip(copies, fields).map { copy, field in iovec(iov_base: copy, iov_len: field.utf8.count) }
        _ = sd_journal_sendv(vectors, Int32(vectors.count))
    }

    /// syslog priorities: journalctl -p filters on them.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Journal field names are upper-case letters, digits and underscores.
    static func fieldName(_ key: String) -> String {
        String(key.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }
}
