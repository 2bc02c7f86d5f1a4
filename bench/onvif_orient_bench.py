"""Issue 24's "orient within the camera's step": the real dockd orients the project's ONVIF
emulator through each motion model, and the error is read on the emulator's true pose once the
orientation ended (those that failed are counted) and the head came to rest. Prints a Markdown table for BENCHMARKS.md.

Each run: a fresh camera (at pan 0, tilt 0) and dockd; motion.orient over 1.5 s to each of
TARGETS in turn. Per case: the |yaw error| and |pitch error| of every orientation, rad. The
emulator's step — the least change of position it reports, GetStatus's six decimals of the generic
space — is 1e-6 of a unit: 1.7e-4° pan (3.0e-6 rad), 6e-5° tilt (1.0e-6 rad) over its default
-170…170°, -30…90°.

    DOCK_BIN=.build/debug .venv/bin/python bench/onvif_orient_bench.py [--runs 3] [--only relative]

Real time, about 10 s a run. Not real hardware: the emulator turns at 100°/s pan, 60°/s tilt.
"""
import argparse
import math
import statistics
import time

from drivers_bench import dockd_with, onvif_emulator

TARGETS = [(-0.4, 0.3), (0.25, -0.1), (0.6, 0.45), (0.05, 0.0), (-0.9, 0.2)]
PAN_STEP = math.radians(340.0 / 2e6)  # rad per 1e-6 of the generic space
TILT_STEP = math.radians(120.0 / 2e6)
LAST_ORIENT = [0.0]  # when the last motion.orient went (monotonic)


def settle(c, cam, yaw, pitch, deadline=60):
    """motion.orient to (yaw, pitch): its motion.progress leaves running, then the head is still.
    Orientations go at least 0.5 s apart (dockd takes at most two a second)."""
    time.sleep(max(0.0, LAST_ORIENT[0] + 0.5 - time.monotonic()))
    LAST_ORIENT[0] = time.monotonic()
    reply = c.call("motion.orient", {"yaw": yaw, "pitch": pitch, "duration": 1.5})
    if "result" not in reply:
        raise RuntimeError(f"motion.orient to ({yaw}, {pitch}): {reply}")
    motion_id = reply["result"]["id"]
    end = time.monotonic() + deadline
    while True:
        done = [m for m in c.notifications if m.get("method") == "motion.progress"
                and m["params"]["id"] == motion_id and m["params"]["state"] != "running"]
        if done:
            c.notifications.clear()
            break
        if time.monotonic() > end:
            raise RuntimeError(f"orientation to ({yaw}, {pitch}) not ended in {deadline} s")
        c.notifications.append(c.read(timeout=deadline))
    while not cam.still():
        if time.monotonic() > end:
            raise RuntimeError("the head never came to rest")
        time.sleep(0.02)
    pan, tilt, _ = cam.pose()
    return done[0]["params"], abs(-math.radians(pan) - yaw), abs(math.radians(tilt) - pitch)


def run(motion, static=False, speed_space=True, no_position=False):
    with onvif_emulator(motion, static, speed_space, no_position) as (cam, device):
        def body(c, attached):
            if attached is None:
                raise RuntimeError("the camera did not connect")
            c.call("subscribe", {"topics": ["motion"], "motion_rate": 20})
            return [settle(c, cam, yaw, pitch) for yaw, pitch in TARGETS]
        return dockd_with(device, body, attach_timeout=30)


CASES = [
    ("continuous + absolute + relative", lambda: run(("continuous", "absolute", "relative"))),
    ("continuous only", lambda: run(("continuous",))),
    ("continuous only, GetStatus static while moving", lambda: run(("continuous",), static=True)),
    ("continuous only, GetStatus gives no position (dead-reckoned)", lambda: run(("continuous",), no_position=True)),
    ("absolute only", lambda: run(("absolute",))),
    ("relative only", lambda: run(("relative",))),
    ("absolute only, no speed space", lambda: run(("absolute",), speed_space=False)),
    ("relative only, no speed space", lambda: run(("relative",), speed_space=False)),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    a = ap.parse_args()
    print(f"| motion model | orientations (not completed) | yaw error median / max, rad | pitch error median / max, rad "
          f"| worst in emulator steps (yaw, pitch; 0: under half a step) |")
    print("|---|---|---|---|---|")
    for name, fn in CASES:
        if a.only and a.only not in name:
            continue
        results = [r for _ in range(a.runs) for r in fn()]
        yaw = [r[1] for r in results]
        pitch = [r[2] for r in results]
        failed = sum(r[0]["state"] != "completed" for r in results)
        print(f"| {name} | {len(results)} ({failed}) | {statistics.median(yaw):.2e} / {max(yaw):.2e} "
              f"| {statistics.median(pitch):.2e} / {max(pitch):.2e} | {max(yaw) / PAN_STEP:.0f}, {max(pitch) / TILT_STEP:.0f} |",
              flush=True)


if __name__ == "__main__":
    main()
