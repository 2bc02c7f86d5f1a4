import dockctl

runDockctl()
