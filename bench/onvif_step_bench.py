"""Issue 24's "the camera's step" for a velocity-only ONVIF camera: what ContinuousMove + Stop can
reach is the camera's slowest speed times the spread of when each request acts at the camera, not
the least change GetStatus shows. The real dockd orients the emulator (continuous moves only) to
onvif_orient_bench.py's targets; the emulator logs when each ContinuousMove and Stop arrived. A
move is sent at most once a command interval (0.1 s), after the request in flight (a Stop only
after the request in flight), so a command decided at a tick acts anywhere from at once to the
time between two moves at the camera later: its 95th percentile is the spread taken. Prints it, and the reachable step at the emulator's slowest
speed (its six-decimal velocity: 1e-6 of 100°/s pan, of 60°/s tilt) and at a few coarser ones.

    cd bench && DOCK_BIN=../.build/debug ../.venv/bin/python onvif_step_bench.py [--runs 2]
"""
import argparse
import math
import statistics

from drivers_bench import dockd_with, onvif_emulator
from onvif_orient_bench import TARGETS, settle


def intervals(runs):
    gaps = []
    for _ in range(runs):
        with onvif_emulator(("continuous",)) as (cam, device):
            def body(c, attached):
                if attached is None:
                    raise RuntimeError("the camera did not connect")
                c.call("subscribe", {"topics": ["motion"], "motion_rate": 20})
                cam.moves.clear()
                for yaw, pitch in TARGETS:
                    settle(c, cam, yaw, pitch)
            dockd_with(device, body, attach_timeout=30)
            times = [t for t, action, _ in cam.moves if action in ("ContinuousMove", "Stop")]
            # Moves of one motion (a gap over 0.5 s is a pause between motions).
            gaps += [b - a for a, b in zip(times, times[1:]) if b - a < 0.5]
    return sorted(gaps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2)
    gaps = intervals(ap.parse_args().runs)
    q = lambda p: gaps[min(len(gaps) - 1, int(p * len(gaps)))]  # noqa: E731
    spread = q(0.95)
    print(f"{len(gaps)} intervals between moves at the camera, s: min {gaps[0]:.3f}, median {statistics.median(gaps):.3f}, "
          f"95th percentile {q(0.95):.3f}, max {gaps[-1]:.3f}; spread {spread:.3f} s")
    for name, speed in [("emulator's slowest pan, 1e-6 of 100°/s", 1e-6 * 100), ("1°/s", 1.0), ("a speed level of 100°/s / 64", 100 / 64)]:
        print(f"reachable step at {name}: {math.radians(speed) * spread:.1e} rad")


if __name__ == "__main__":
    main()
