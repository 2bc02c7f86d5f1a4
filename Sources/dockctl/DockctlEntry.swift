/// dockctl's entry point: run by its own executable, and by dockd's when called by the name dockctl
/// (the package installs one binary under every tool's name: Sources/dockd/main.swift).
public func runDockctl() { Dockctl.main() }
