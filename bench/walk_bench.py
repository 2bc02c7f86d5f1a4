"""A subject walking across the room, tracked by the real dockd through each hardware driver and
each ONVIF motion model, against the native stand (dock-sim) as the reference. Issue 24's target:
in frame ≥ 99 %, framing error ≤ 1.5× the native stand's. Prints a Markdown table for BENCHMARKS.md.

The subject stands 2 s, walks left at 0.3 rad/s for 3 s (a person at walking pace 4 m away),
stands 3 s, walks back, stands 3 s. A pinhole camera (drivers_bench's 1.2 × 0.75 rad) sees it
from where the head truly points — the emulator's pose for VISCA, MAVLink and ONVIF, dockd's own
motion.state (100 Hz from a simulated stand) for the native one — and sends its face and body
20 times a second (tracking.observe, center framing). Per run: the samples with the face wholly
in frame, and the framing error: the RMS of |u − 0.5| (fraction of the frame's width; a sample out
of frame counts 0.5), over the whole run but its first second.

    DOCK_BIN=.build/release .venv/bin/python bench/walk_bench.py [--runs 3] [--only onvif] [--trace DIR]

--trace DIR writes each run's samples (the subject, the camera's aim, the latest tracking.state's
subjects) to DIR/<case>-<run>.jsonl, and prints per run how many subjects dockd tracked and for how
many samples a selected subject was a prediction (not measured in its frame): what a run-off is
traced by.

Real time, about 20 s per run. Not real hardware: the peers are this project's emulators (the
ONVIF one turns at 100°/s, the VISCA one at its profile's table speeds) and pymavlink's gimbal.
"""
import argparse
import json
import math
import re
import statistics
import subprocess
import time
from pathlib import Path

from drivers_bench import BIN, GENERIC, HFOV, VFOV, dockd_with, mg, onvif_emulator, vc

STAND_S, WALK_S, SPEED = 2.0, 3.0, 0.3
FACE_W = 0.06


def subject_at(t):
    """Yaw of the walking subject (rad, left positive) at t s."""
    out = SPEED * min(WALK_S, max(0.0, t - STAND_S))
    back_from = 2 * STAND_S + WALK_S + 1.0
    return out - SPEED * min(WALK_S, max(0.0, t - back_from))


DURATION = 3 * STAND_S + 2 * WALK_S + 2.0


TRACE = {"dir": None, "name": ""}


def walk(c, aim):
    """Runs the walk through an attached stand; aim() -> (yaw, pitch) where the camera points."""
    c.call("camera.set", {"camera": {"horizontal_fov": HFOV, "vertical_fov": VFOV}})
    c.call("tracking.framing", {"mode": "center"})
    tracing = TRACE["dir"] is not None
    if tracing:
        c.call("subscribe", {"topics": ["tracking"]})
    state, samples = None, []
    started, errors, in_frame, refused = time.monotonic(), [], 0, 0
    while True:
        t = time.monotonic() - started
        if t > DURATION:
            break
        subject = (subject_at(t), 0.05)
        if tracing:
            states = [m for m in c.notifications if m.get("method") == "tracking.state"]
            c.notifications[:] = [m for m in c.notifications if m.get("method") != "tracking.state"]
            state = states[-1]["params"] if states else state
        yaw, pitch = aim()
        if tracing:
            samples.append({"t": round(t, 3), "subject": subject, "aim": [yaw, pitch], "tracking": state})
        u = 0.5 - math.tan(subject[0] - yaw) / (2 * math.tan(HFOV / 2))
        v = 0.5 - math.tan(subject[1] - pitch) / (2 * math.tan(VFOV / 2))
        observations = []
        seen = FACE_W / 2 < u < 1 - FACE_W / 2 and 0 < v < 1
        if seen:
            w, h = 0.12, 0.45
            observations = [{"kind": "body", "rect": {"x": u - w / 2, "y": v - h / 2, "width": w, "height": h}, "confidence": 0.95},
                            {"kind": "face", "rect": {"x": u - FACE_W / 2, "y": v - h / 2 + 0.02, "width": FACE_W, "height": 0.09},
                             "confidence": 0.9, "looking_at_camera_confidence": 0.8}]
        reply = c.call("tracking.observe", {"observations": observations, "origin": "upper_left", "timestamp": time.monotonic()})
        refused += "error" in reply
        if t >= 1.0:
            errors.append(abs(u - 0.5) if seen else 0.5)
            in_frame += seen
        time.sleep(max(0.0, 0.05 - (time.monotonic() - started - t)))
    if tracing:
        write_trace(samples)
    return {"in_frame": in_frame / len(errors), "rms": math.sqrt(sum(e * e for e in errors) / len(errors)),
            "worst": max(errors), "refused": refused}


def write_trace(samples):
    """One run's samples as JSON lines, and a line on what dockd tracked."""
    slug = re.sub(r"[^a-z0-9]+", "-", TRACE["name"].lower()).strip("-")
    run = len(list(TRACE["dir"].glob(f"{slug}-*.jsonl"))) + 1
    path = TRACE["dir"] / f"{slug}-{run}.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    ids, predicted = set(), 0
    for s in samples:
        state = s["tracking"] or {"subjects": [], "capture_time": None}
        ids.update(x["id"] for x in state["subjects"])
        predicted += any(x["selected"] and x["last_seen"] != state["capture_time"] for x in state["subjects"])
    worst = max((abs(s["aim"][0] - s["subject"][0]) for s in samples), default=0)
    print(f"  trace {path.name}: {len(ids)} subject(s), a selected one predicted in {predicted} of {len(samples)} samples, "
          f"worst |pan error| {worst:.2f} rad", flush=True)


def with_dockd(device, body, attach_timeout=20):
    """The real dockd with one [[device]] section; body(client) once the stand is connected."""
    def connected(c, attached):
        if attached is None:
            raise RuntimeError(f"no stand connected in {attach_timeout} s")
        return body(c)
    return dockd_with(device, connected, attach_timeout)


def native():
    """dock-sim on a pty; the aim is dockd's latest motion.state (100 Hz FEEDBACK, a few ms old)."""
    sim = subprocess.Popen([str(BIN / "dock-sim"), "--pty"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        path = sim.stdout.readline().split()[1]

        def body(c):
            c.call("subscribe", {"topics": ["motion"], "motion_rate": 50})
            latest = {"yaw": 0.0, "pitch": 0.0}

            def aim():
                for m in c.notifications:
                    if m.get("method") == "motion.state":
                        latest.update(m["params"]["positions"])
                c.notifications.clear()
                return latest["yaw"], latest["pitch"]
            return walk(c, aim)
        return with_dockd(f'path = "{path}"\n', body)
    finally:
        sim.kill()
        sim.wait()


def visca():
    cam = vc.Camera(vc.load_profile(GENERIC))
    link = vc.PtyLink(cam).start()
    try:
        def aim():
            pan, tilt = cam.degrees()
            return -math.radians(pan), math.radians(tilt)
        return with_dockd(f'path = "{link.path}"\ndriver = "visca"\nprofile = "{GENERIC}"\n', lambda c: walk(c, aim))
    finally:
        link.stop()


def mavlink():
    g = mg.PtyGimbal().start()
    try:
        def aim():
            _, yaw, pitch, _ = g.gimbal.advance()  # FRD: yaw positive right
            return -yaw, pitch
        return with_dockd(f'path = "{g.path}"\ndriver = "mavlink"\n', lambda c: walk(c, aim))
    finally:
        g.stop()


def onvif(motion, static=False, speed_space=True, no_position=False):
    with onvif_emulator(motion, static, speed_space, no_position) as (cam, device):
        def aim():
            pan, tilt, _ = cam.pose()
            return -math.radians(pan), math.radians(tilt)
        return with_dockd(device, lambda c: walk(c, aim))


CASES = [
    ("native (dock-sim, pty) — the reference", native),
    ("visca, serial (pty), generic-ptzoptics", visca),
    ("mavlink, serial (pty)", mavlink),
    ("onvif: continuous + absolute + relative", lambda: onvif(("continuous", "absolute", "relative"))),
    ("onvif: continuous only", lambda: onvif(("continuous",))),
    ("onvif: continuous only, GetStatus static while moving", lambda: onvif(("continuous",), static=True)),
    ("onvif: continuous only, GetStatus gives no position (dead-reckoned)", lambda: onvif(("continuous",), no_position=True)),
    ("onvif: absolute only", lambda: onvif(("absolute",))),
    ("onvif: relative only", lambda: onvif(("relative",))),
    ("onvif: absolute only, no speed space (moves at its top speed)", lambda: onvif(("absolute",), speed_space=False)),
    ("onvif: relative only, no speed space (moves at its top speed)", lambda: onvif(("relative",), speed_space=False)),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    ap.add_argument("--trace", type=Path, help="write each run's samples to this directory (JSON lines)")
    a = ap.parse_args()
    if a.trace:
        a.trace.mkdir(parents=True, exist_ok=True)
        TRACE["dir"] = a.trace
    print("| driver, motion model | in frame % (runs) | framing error RMS (runs) | ÷ native (median) | worst | observations refused |")
    print("|---|---|---|---|---|---|")
    reference = None
    for name, fn in CASES:
        if a.only and a.only not in name and "native" not in name:
            continue
        TRACE["name"] = name
        rs = [fn() for _ in range(a.runs)]
        rms = statistics.median(r["rms"] for r in rs)
        if reference is None:
            reference = rms
        frames = ", ".join(f"{100 * r['in_frame']:.1f}" for r in rs)
        errors = ", ".join(f"{r['rms']:.3f}" for r in rs)
        print(f"| {name} | {frames} | {errors} | {rms / reference:.2f}× | {max(r['worst'] for r in rs):.3f} "
              f"| {sum(r['refused'] for r in rs)} |", flush=True)


if __name__ == "__main__":
    main()
