"""The naive baseline: a camera client that steers the stand itself, with dockd's tracking off. Each
frame it takes the biggest detected box and turns toward its centre with a proportional rate
(`motion.velocity`), no tracker, no selection memory, no prediction, no dead band. It logs the same
JSON lines as dock-camera (`"naive"` records hold the box it chose) for the benchmark."""
import argparse
import json
import math
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dock_camera import detectors  # noqa: E402
from dock_camera.cli import LockedPose, Shared, observations  # noqa: E402
from dock_camera.rpc import DockdLink, NotConnected  # noqa: E402
from dock_camera.sources import open_source, parse_size  # noqa: E402

GAIN = 2.0        # rad/s per rad of error
MAX_RATE = 1.0    # rad/s


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--source", required=True)
    p.add_argument("--socket", required=True)
    p.add_argument("--detector", default="hog")
    p.add_argument("--size", default="640x480")
    p.add_argument("--fps", type=float, default=15.0)
    p.add_argument("--hfov", type=float, default=50.0)
    p.add_argument("--virtual-wide-fov", type=float, default=90.0)
    p.add_argument("--capture-latency", type=float, default=0.03)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--log", required=True)
    args = p.parse_args()
    size = parse_size(args.size)
    detector = detectors.make(args.detector)
    shared = Shared()
    connected = threading.Event()
    link = DockdLink(args.socket, ["motion"], 100, shared.on_notification,
                     lambda: (shared.on_connect(), connected.set()), lambda t: print(t, file=sys.stderr))
    source = open_source(args.source, size, args.fps, "MJPG", math.radians(args.hfov),
                         math.radians(args.virtual_wide_fov), args.capture_latency, LockedPose(shared), True)
    link.start()
    connected.wait(10)
    reply = link.call("tracking.set", {"enabled": False})
    assert "error" not in reply, reply
    hfov = math.radians(args.hfov)
    vfov = 2 * math.atan(math.tan(hfov / 2) * size[1] / size[0])
    log = open(args.log, "w")
    started = time.monotonic()
    while time.monotonic() - started < args.seconds:
        frame = source.read()
        found = detector.detect(frame.image)
        boxes = [o for o in observations(found, size) if o["kind"] == "body"] or observations(found, size)
        chosen = max(boxes, key=lambda o: o["rect"]["width"] * o["rect"]["height"], default=None)
        yaw_rate = pitch_rate = 0.0
        if chosen is not None:
            r = chosen["rect"]
            # Angle of the box centre off the optical axis; yaw is positive to the left, pitch up.
            ex = math.atan((r["x"] + r["width"] / 2 - 0.5) * 2 * math.tan(hfov / 2))
            ey = math.atan((r["y"] + r["height"] / 2 - 0.5) * 2 * math.tan(vfov / 2))
            yaw_rate = max(-MAX_RATE, min(MAX_RATE, -GAIN * ex))
            pitch_rate = max(-MAX_RATE, min(MAX_RATE, -GAIN * ey))
        try:
            link.send("motion.velocity", {"yaw": yaw_rate, "pitch": pitch_rate})
        except NotConnected:
            pass
        log.write(json.dumps({"frame": frame.index, "capture_time": frame.capture_time, "view": frame.view,
                              "observations": observations(found, size), "naive": chosen}) + "\n")
    link.send("motion.stop", {})
    link.stop()
    log.close()


if __name__ == "__main__":
    main()
