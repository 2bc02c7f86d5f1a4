"""dock-camera: turns camera frames into dockd `tracking.observe` calls (see camera/README.md)."""
