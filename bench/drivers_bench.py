"""Hardware drivers against the test peers (VISCA camera emulator, pymavlink gimbal), in real time.
Prints Markdown tables for BENCHMARKS.md.

Default: the closed-loop step response of dockd's motion controller (DockCore) through each driver,
via dock-driver-probe --orient.

--latency: issue 12's measurement, through the real dockd: the emulated VISCA camera answers every
message L ms late (L = 0, 35, 50, 150, 200, 450 by default); for each L, how long dockd takes to
attach, the orientation error and overshoot of motion.orient (yaw 0.5, pitch 0.2 rad, 1.5 s) measured
on the camera's true position, and tracking: a subject swaying ±0.25 rad (8 s period) seen by a
pinhole camera from where the emulated head truly points (20 Hz tracking.observe, center framing),
the image error over the last 6 of 10 s. Also the driver alone: one AbsolutePosition through
dock-driver-probe --position (the camera closes the loop), the error the daemon can reach once it
orients through `.position` (closesPositionLoop).

    DOCK_BIN=.build/release .venv/bin/python bench/drivers_bench.py [--runs 3]
    DOCK_BIN=.build/release .venv/bin/python bench/drivers_bench.py --latency [--latencies 0,35,50,150,200,450]
"""
import argparse
import contextlib
import json
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import mavlink_gimbal as mg  # noqa: E402
import onvif_camera as oc  # noqa: E402
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
    ("visca, raw UDP, sony-brc-h700", lambda: visca("sony-brc-h700", "raw", "raw-udp")),
    ("mavlink, serial (pty)", lambda: mavlink("pty")),
    ("mavlink, UDP", lambda: mavlink("udp")),
]


# -- --latency: replies late, through dockd

HFOV, VFOV = 1.2, 0.75  # the pinhole camera of the tracking runs (rad)
GENERIC = PROFILES / "generic-ptzoptics.json"


class Client:
    """Newline-delimited JSON-RPC on dockd's socket; keeps the notifications it reads."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(str(path))
        self.sock.settimeout(10)
        self.buffer, self.next_id, self.notifications = b"", 1, []

    def call(self, method, params=None):
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.next_id += 1
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        while True:
            message = self.read()
            if message.get("id") == request["id"]:
                return message
            self.notifications.append(message)

    def read(self, timeout=10):
        self.sock.settimeout(timeout)
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("dockd closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self):
        self.sock.close()


def true_aim(cam):
    """Where the emulated head points, in stand angles (yaw left-positive), rad."""
    pan, tilt = cam.degrees()
    return -math.radians(pan), math.radians(tilt)


def dockd_with(device, body, attach_timeout=10):
    """Runs the real dockd with one [[device]] section, calls body(client, attach_s): attach_s the
    seconds until the stand was connected, None if it was not within attach_timeout."""
    tmp = Path(tempfile.mkdtemp(prefix="drivers-bench-"))
    (tmp / "dockd.conf").write_text(f"[[device]]\n{device}")
    started = time.monotonic()
    dockd = subprocess.Popen([str(BIN / "dockd"), "--config", str(tmp / "dockd.conf"), "--socket", str(tmp / "d.sock"),
                              "--socket-group", "", "--no-hotplug"], stderr=open(tmp / "dockd.err", "wb"))
    try:
        c = None
        while c is None:
            try:
                c = Client(tmp / "d.sock")
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > started + attach_timeout:
                    raise
                time.sleep(0.02)
        attached = None
        while time.monotonic() < started + attach_timeout:
            if any(s["state"] == "connected" for s in c.call("stands.list").get("result", [])):
                attached = time.monotonic() - started
                break
            time.sleep(0.05)
        return body(c, attached)
    finally:
        dockd.send_signal(signal.SIGTERM)
        dockd.wait(20)


@contextlib.contextmanager
def onvif_emulator(motion, static=False, speed_space=True, no_position=False):
    """The ONVIF emulator (tests/peers/onvif_camera.py) with those motion models and quirks,
    WS-Security on, level (tilt 0° of -30…90°), served on loopback: (camera, the [[device]] lines
    that attach dockd to it, its password in a credentials file of mode 0600)."""
    password = "bench-password"
    cam = oc.Camera(motion=motion, position_static=static, auth="wsse", password=password, speed_space=speed_space,
                    no_position=no_position)
    cam.set_generic(0.0, -0.5)
    server = oc.Server(cam).start()
    credentials = Path(tempfile.mkdtemp(prefix="onvif-bench-cred-")) / "cam.cred"
    credentials.write_text(password + "\n")
    credentials.chmod(0o600)
    try:
        yield cam, f'onvif = "admin@127.0.0.1:{server.port}"\ndriver = "onvif"\ncredentials = "{credentials}"\n'
    finally:
        server.stop()


def with_dockd(cam, body, attach_timeout=10):
    """Runs the real dockd on the emulated VISCA camera (pty), calls body(client, attach_s)."""
    link = vc.PtyLink(cam).start()
    try:
        return dockd_with(f'path = "{link.path}"\ndriver = "visca"\nprofile = "{GENERIC}"\n', body, attach_timeout)
    finally:
        link.stop()


def orient_run(latency):
    cam = vc.Camera(vc.load_profile(GENERIC), latency=latency)

    def body(c, attached):
        if attached is None:
            return {"attach_s": None}
        c.call("subscribe", {"topics": ["motion"]})
        goal = (0.5, 0.2)
        reply = c.call("motion.orient", {"yaw": goal[0], "pitch": goal[1], "duration": 1.5})
        if "error" in reply:
            return {"attach_s": attached, "state": "refused: " + reply["error"]["message"]}
        motion_id, started = reply["result"]["id"], time.monotonic()
        state, ended, overshoot = None, None, 0.0
        while time.monotonic() < started + 12:
            aim = true_aim(cam)
            overshoot = max(overshoot, aim[0] - goal[0], aim[1] - goal[1])
            while c.notifications:
                m = c.notifications.pop(0)
                if m.get("method") == "motion.progress" and m["params"]["id"] == motion_id and m["params"]["state"] != "running":
                    state, ended = m["params"]["state"], time.monotonic()
            if ended and time.monotonic() > ended + 1:
                break
            try:
                c.notifications.append(c.read(0.01))
            except (socket.timeout, TimeoutError):
                pass
        aim = true_aim(cam)
        error = max(abs(aim[0] - goal[0]), abs(aim[1] - goal[1]))
        return {"attach_s": attached, "state": state or "none in 12 s", "done_s": ended and ended - started,
                "error_deg": math.degrees(error), "overshoot_deg": math.degrees(max(0.0, overshoot))}
    return with_dockd(cam, body)


def track_run(latency, seconds=10.0):
    cam = vc.Camera(vc.load_profile(GENERIC), latency=latency)

    def body(c, attached):
        if attached is None:
            return {"attach_s": None}
        c.call("camera.set", {"camera": {"horizontal_fov": HFOV, "vertical_fov": VFOV}})
        c.call("tracking.framing", {"mode": "center"})
        started, errors, refused = time.monotonic(), [], 0
        while time.monotonic() < started + seconds:
            t = time.monotonic() - started
            subject = (0.25 * math.sin(2 * math.pi * t / 8), 0.05)
            aim = true_aim(cam)
            u = 0.5 - math.tan(subject[0] - aim[0]) / (2 * math.tan(HFOV / 2))
            v = 0.5 - math.tan(subject[1] - aim[1]) / (2 * math.tan(VFOV / 2))
            observations = []
            if 0 < u < 1 and 0 < v < 1:
                w, h = 0.12, 0.45
                observations = [{"kind": "body", "rect": {"x": u - w / 2, "y": v - h / 2, "width": w, "height": h}, "confidence": 0.95},
                                {"kind": "face", "rect": {"x": u - 0.03, "y": v - h / 2 + 0.02, "width": 0.06, "height": 0.09},
                                 "confidence": 0.9, "looking_at_camera_confidence": 0.8}]
            reply = c.call("tracking.observe", {"observations": observations, "origin": "upper_left", "timestamp": time.monotonic()})
            refused += "error" in reply
            errors.append((t, abs(u - 0.5) if 0 < u < 1 else 0.5))
            time.sleep(max(0.0, 0.05 - (time.monotonic() - started - t)))
        late = [e for t, e in errors if t >= seconds - 6]
        return {"attach_s": attached, "rms": math.sqrt(sum(e * e for e in late) / len(late)), "worst": max(late),
                "lost": sum(e >= 0.5 for e in late) / len(late), "observe_refused": refused}
    return with_dockd(cam, body)


def position_run(latency):
    """The driver alone: one AbsolutePosition (the camera closes the loop), error on the camera's truth."""
    cam = vc.Camera(vc.load_profile(GENERIC), latency=latency)
    link = vc.PtyLink(cam).start()
    try:
        subprocess.run([str(BIN / "dock-driver-probe"), "--driver", "visca", "--endpoint", link.path + "@9600", "--seconds",
                        str(4 + 3 * latency), "--option", f"profile={GENERIC}", "--position", "yaw=0.5,pitch=0.2", "--duration", "1.5"],
                       capture_output=True, text=True, timeout=60)
        aim = true_aim(cam)
        return math.degrees(max(abs(aim[0] - 0.5), abs(aim[1] - 0.2)))
    finally:
        link.stop()


def fmt(value, spec, missing="–"):
    return missing if value is None else format(value, spec)


def latency_sweep(latencies, runs):
    print("| replies late (ms) | attach (s) | orient: state | orient: error (°) | orient: overshoot (°) | tracking: RMS error | tracking: worst | tracking: subject lost | driver alone, one AbsolutePosition: error (°) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for ms in latencies:
        o = [orient_run(ms / 1000) for _ in range(runs)]
        t = [track_run(ms / 1000) for _ in range(runs)]
        p = [position_run(ms / 1000) for _ in range(runs)]

        def med(rows, key):
            values = [r[key] for r in rows if r.get(key) is not None]
            return statistics.median(values) if values else None
        states = "/".join(sorted({r.get("state", "never attached") for r in o}))
        print(f"| {ms} | {fmt(med(o, 'attach_s'), '.2f', 'never')} | {states} | {fmt(med(o, 'error_deg'), '.2f')} "
              f"| {fmt(med(o, 'overshoot_deg'), '.1f')} | {fmt(med(t, 'rms'), '.3f')} | {fmt(med(t, 'worst'), '.3f')} "
              f"| {fmt(med(t, 'lost'), '.0%')} | {statistics.median(p):.2f} |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--latency", action="store_true", help="issue 12's sweep of late replies through dockd")
    ap.add_argument("--latencies", default="0,35,50,150,200,450", help="ms, comma-separated")
    a = ap.parse_args()
    if a.latency:
        latency_sweep([int(x) for x in a.latencies.split(",")], a.runs)
        return
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
