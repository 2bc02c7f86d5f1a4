import CLibFuzzer
#if canImport(Glibc)
import Glibc
#endif

/// Runs libFuzzer on this executable's `LLVMFuzzerTestOneInput` (the target's `@_cdecl` function)
/// with the process's arguments. SwiftPM gives every executable a `main` of its own, so libFuzzer's
/// is not used: each target's main.swift calls this.
public func runLibFuzzer() -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput))
}
