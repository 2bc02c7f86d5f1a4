print("dock-mot: not built yet")
