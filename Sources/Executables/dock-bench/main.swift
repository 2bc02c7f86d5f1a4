import dock_bench

runDockBench()
