#if canImport(Glibc)
import Glibc
#endif

enum FileManagerLite {
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}

enum FileHandleLite {
    static func stderr(_ text: String) {
        let line = Array((text + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

func unlinkSocket(_ path: String) { _ = unlink(path) }
