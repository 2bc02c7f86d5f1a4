// dockd is also every tool the package ships: it installs this one binary as dockd and the tools as
// its other names (symlinks), so the Swift runtime and the libraries are in the package once. The
// name it is called by picks the program; any name but a tool's is dockd.
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import dock_bench
import dock_driver_probe
import dock_sim
import dockctl

let calledAs = CommandLine.arguments.first?.split(separator: "/").last.map(String.init) ?? ""
switch calledAs {
case "dockctl": runDockctl()
case "dock-sim": runDockSim()
case "dock-bench": runDockBench()
case "dock-driver-probe": runAsyncMain { await runDockDriverProbe() }
default: runAsyncMain { await DockdCommand.main() }
}

/// Runs an async program as `@main` runs one: on the main actor, the main thread handed to Dispatch.
/// Only the async programs go through it; the others keep the main thread, as their own executables
/// do (dock-sim blocks its exit signals in it before any other thread exists).
func runAsyncMain(_ program: @escaping @Sendable () async -> Void) -> Never {
    Task { @MainActor in
        await program()
        exit(0)
    }
    dispatchMain()
}
