"""Closed-loop step response of dockd's motion controller (DockCore) through each hardware
driver, against the test peers (VISCA camera emulator, pymavlink gimbal), in real time via
dock-driver-probe. Prints a Markdown table for BENCHMARKS.md.

    DOCK_BIN=.build/release .venv/bin/python bench/drivers_bench.py [--runs 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
import mavlink_gimbal as mg  # noqa: E402
import visca_camera as vc  # noqa: E402

BIN = Path(os.environ.get("DOCK_BIN", ROOT / ".build" / "debug"))
PROFILES = ROOT / "profiles" / "visca"


def run(driver, endpoint, options, seconds=3.5):
    cmd = [str(BIN / "dock-driver-probe"), "--driver", driver, "--endpoint", endpoint, "--seconds", str(seconds),
           "--orient", "yaw=0.5,pitch=0.2", "--orient-duration", "1.5"]
    for k, v in options.items():
        cmd += ["--option", f"{k}={v}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    return [json.loads(line) for line in out.splitlines() if '"summary"' in line][0]


def visca(profile, link_kind, transport):
    cam = vc.Camera(vc.load_profile(PROFILES / f"{profile}.json"))
    link = vc.PtyLink(cam).start() if link_kind == "pty" else vc.UdpLink(cam, "127.0.0.2", 52381, raw=(link_kind == "raw")).start()
    try:
        endpoint = link.path + "@9600" if link_kind == "pty" else "udp:127.0.0.2:52381"
        return run("visca", endpoint, {"profile": PROFILES / f"{profile}.json", "transport": transport})
    finally:
        link.stop()


def mavlink(link_kind):
    g = (mg.PtyGimbal() if link_kind == "pty" else mg.UdpGimbal()).start()
    try:
        return run("mavlink", g.path + "@115200" if link_kind == "pty" else f"udp:127.0.0.1:{g.port}", {})
    finally:
        g.stop()


CASES = [
    ("visca, serial (pty), generic-ptzoptics", lambda: visca("generic-ptzoptics", "pty", "serial")),
    ("visca, VISCA-over-IP (UDP), generic-ptzoptics", lambda: visca("generic-ptzoptics", "udp", "ip")),
    ("visca, raw UDP, sony-brc-x400", lambda: visca("sony-brc-x400", "raw", "raw-udp")),
    ("mavlink, serial (pty)", lambda: mavlink("pty")),
    ("mavlink, UDP", lambda: mavlink("udp")),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    print("| driver, link, peer profile | feedback Hz | completed (s) | settled ≤ 0.01 rad (s) | final error (mrad) | overshoot (mrad) | bytes out/s |")
    print("|---|---|---|---|---|---|---|")
    for name, fn in CASES:
        rs = [fn() for _ in range(a.runs)]
        med = lambda f: statistics.median(f(r) for r in rs)  # noqa: E731
        print(f"| {name} | {med(lambda r: r['feedback_hz']):.1f} | {med(lambda r: r['orient']['completed_s']):.2f} "
              f"| {med(lambda r: r['orient'].get('settled_s', float('nan'))):.2f} "
              f"| {med(lambda r: r['orient']['final_error_rad']) * 1000:.1f} | {med(lambda r: r['orient']['overshoot_rad']) * 1000:.1f} "
              f"| {med(lambda r: r['bytes_out'] / r['t']):.0f} |")


if __name__ == "__main__":
    main()
