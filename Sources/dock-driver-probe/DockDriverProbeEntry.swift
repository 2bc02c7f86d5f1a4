/// dock-driver-probe's entry point: run by its own executable, and by dockd's when called by the name
/// dock-driver-probe (the package installs one binary under every tool's name: Sources/dockd/main.swift).
public func runDockDriverProbe() async { await DockDriverProbe.main() }
