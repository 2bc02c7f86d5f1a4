import dock_sim

runDockSim()
