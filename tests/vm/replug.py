"""vptz unplugged and plugged in again under dockd (in the VM, Debian's python3).

    replug.py SOCKET DEVICE OUT.json

While dockd holds the camera, someone else sets it turning (v4l2-ctl pan_speed=-20: 7.5°/s left),
and it is unplugged (/sys/module/vptz/parameters/plugged = 0); the camera goes on turning (vptz keeps
its pose and its speed, as a camera with its own power would). Once dockd has seen it go
(stand.disconnected) and it has been away 2 s, it is plugged in again, and the times dockd's
stand.connected arrives are measured on CLOCK_MONOTONIC. Then v4l2-ctl reads pan_absolute 1 s and
3 s after the reconnect: dockd stops the camera on every connect. Writes OUT.json with the
times (s, monotonic) and the pans (arc-seconds); exit 0 when every step happened in time.
"""
import json
import subprocess
import sys
import time

from dockd_rpc import Connection
from vptz_camera import PLUGGED, true_pose, v4l2_ctl_pan

AWAY_S = 2.0


def wait_until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)


def is_connected(message):
    """The subscription's snapshot of a connected stand, or a stand connecting."""
    return message["method"] == "stand.connected" or (message["method"] == "stand.state" and message["params"].get("state") == "connected")


def main(socket_path, device, out_path):
    result = {}
    try:
        dockd = Connection(socket_path)
        dockd.call("subscribe", {"topics": ["stands"]})
        dockd.notification(is_connected, timeout=90)
        subprocess.run(["v4l2-ctl", "-d", device, "-c", "pan_speed=-20"], check=True)
        result["pan_at_unplug"] = true_pose()[0]
        with open(PLUGGED, "w") as f:
            f.write("0")
        result["unplugged"] = time.monotonic()
        dockd.notification(lambda m: m["method"] == "stand.disconnected", timeout=60)
        result["disconnected"] = time.monotonic()
        wait_until(lambda: time.monotonic() - result["unplugged"] >= AWAY_S, 30, "away")
        result["pan_while_away"] = true_pose()[0]
        with open(PLUGGED, "w") as f:
            f.write("1")
        result["replugged"] = time.monotonic()
        dockd.notification(lambda m: m["method"] == "stand.connected", timeout=60)
        result["connected"] = time.monotonic()
        result["reattach_s"] = result["connected"] - result["replugged"]
        wait_until(lambda: time.monotonic() - result["connected"] >= 1, 30, "1 s after")
        result["pan_1s_after"] = v4l2_ctl_pan(device)
        wait_until(lambda: time.monotonic() - result["connected"] >= 3, 30, "3 s after")
        result["pan_3s_after"] = v4l2_ctl_pan(device)
        return 0
    except Exception as error:  # the test reads what happened up to here
        result["error"] = f"{type(error).__name__}: {error}"
        return 1
    finally:
        with open(out_path, "w") as f:
            json.dump(result, f)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
