// dockd is also every tool the package ships: it installs this one binary as dockd and the tools as
// its other names (symlinks), so the Swift runtime and the libraries are in the package once. The
// name it is called by picks the program; any name but a tool's is dockd.
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import DockIO
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
default: runDockd()
}

/// dockd reads SIGTERM and SIGINT on its event loop (`TerminationSignals`): they are blocked here,
/// before any thread exists, so that every thread blocks them, and the main thread is not handed to
/// Dispatch: `dispatchMain` parks it in sigsuspend with nothing blocked, where it would take them
/// first (and die of them). dockd runs nothing on the main actor. Its one-shot modes (--check-config
/// and the like) take milliseconds; a signal meanwhile waits, then goes with the process.
func runDockd() -> Never {
    TerminationSignals.blockInEveryThread()
    Task.detached {
        await DockdCommand.main()
        exit(0)
    }
    while true { pause() }  // back to sleep after a handler runs here (Dispatch's, for SIGHUP)
}

/// Runs an async program as `@main` runs one: on the main actor, the main thread handed to Dispatch.
/// dock-driver-probe goes through it; dockd (`runDockd`) and the other tools keep the main thread,
/// as their own executables do (dock-sim blocks its exit signals in it before any other thread
/// exists).
func runAsyncMain(_ program: @escaping @Sendable () async -> Void) -> Never {
    Task { @MainActor in
        await program()
        exit(0)
    }
    dispatchMain()
}
