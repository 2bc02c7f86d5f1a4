#if canImport(Glibc)
import Glibc
#endif
import DockIO

/// Once dockd serves, the pages of its executable that only startup read are let go of. The kernel
/// maps up to 64 KiB of cached file around every page a fault asks for, so after startup most of
/// the 15 MiB of code stayed in dockd's RSS though serving a stand runs a small part of it (issue
/// 26, BENCHMARKS.md). MADV_DONTNEED on the executable's read-only mappings unmaps them; the pages
/// stay in the page cache, and what runs again is mapped back at its next access. Only mappings
/// that hold nothing but the file's bytes are dropped: not writable, and smaps says it holds no
/// private copy of a page, in memory or swapped out (`Anonymous: 0 kB` and `Swap: 0 kB`; the
/// relocated RELRO data has copies and is kept — dropped, it would read back unrelocated).
enum StartupPages {
    struct Mapping: Equatable {
        let start: UInt
        let end: UInt
    }

    /// Unmaps the executable's file-only mappings. Without /proc, or where madvise is refused,
    /// nothing changes: the pages just stay mapped.
    static func release() {
        guard let executable = executablePath(),
              let smaps = try? WholeFile.read("/proc/self/smaps", atMost: 64 << 20) else { return }
        for mapping in droppable(smaps: String(decoding: smaps, as: UTF8.self), executable: executable) {
            _ = madvise(UnsafeMutableRawPointer(bitPattern: mapping.start), Int(mapping.end - mapping.start), MADV_DONTNEED)
        }
    }

    /// The mappings of `executable` in `smaps` (the text of /proc/PID/smaps) that are not writable
    /// and are shown to have no anonymous (copied-on-write) page, resident or swapped: a mapping
    /// whose record lacks either line is kept.
    static func droppable(smaps: String, executable: String) -> [Mapping] {
        var found: [Mapping] = []
        var current: (mapping: Mapping, readOnlyFile: Bool, noAnonymous: Bool, noSwap: Bool)?
        func close() {
            if let current, current.readOnlyFile, current.noAnonymous, current.noSwap { found.append(current.mapping) }
            current = nil
        }
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if !first.hasSuffix(":"), fields.count >= 5, let dash = first.firstIndex(of: "-"),
               let start = UInt(first[..<dash], radix: 16), let end = UInt(first[first.index(after: dash)...], radix: 16) {
                close()
                let path = fields.count == 6 ? String(fields[5].drop(while: { $0 == " " })) : ""
                current = (Mapping(start: start, end: end), path == executable && !fields[1].contains("w"), false, false)
            } else if first == "Anonymous:", fields.count >= 2 {
                current?.noAnonymous = fields[1] == "0"
            } else if first == "Swap:", fields.count >= 2 {
                current?.noSwap = fields[1] == "0"
            }
        }
        close()
        return found
    }

    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
