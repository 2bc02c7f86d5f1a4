import dock_driver_probe

await runDockDriverProbe()
