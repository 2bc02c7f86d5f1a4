#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import DockCore
import DockProtocol
import DockSim
import DockVersion

struct DockBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dock-bench",
        abstract: "Benchmarks of dockd's pure core in virtual time (no I/O, reproducible from a seed), and of the real daemon live.",
        version: DockVersion.string,
        subcommands: [CodecBench.self, ClosedLoopBench.self, ScenarioBench.self, LiveBench.self])
}

/// Percentiles of a sample, for the printed tables.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}
