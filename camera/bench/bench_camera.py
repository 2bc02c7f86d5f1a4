"""`make bench-camera`: the camera client's figures, written as Markdown for BENCHMARKS.md.

1. Reference people in vtest.avi (ground_truth.py: background subtraction, no detector under test).
2. Per detector, offline: detection rate on the virtual camera's view of every 5th video frame.
3. Per detector, with dock-sim + the real dockd running and the stand tracking: dock-camera over the
   virtual camera asked for 30 frames/s: frames/s reached, capture → tracking.observe sent p50/p99,
   the detector's own time, CPU per frame.
4. Closed loop, default detector at 15 frames/s, 3 runs of 60 s each: dockd tracking; a fixed camera
   (dockd tracking with the stand pinned by motion.limits); the naive "centre the biggest box" client.
"""
import argparse
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CAMERA = HERE.parent
ROOT = CAMERA.parent
sys.path.insert(0, str(CAMERA))
sys.path.insert(0, str(HERE))

VIDEO = "/usr/share/doc/opencv-doc/examples/data/vtest.avi"
DEBIAN_PYTHON = "/usr/bin/python3"
VENV_DETECTORS = {"blazeface", "blazeface-short", "blazepose", "mtcnn", "yolo"}  # .venv-camera (yolo: its model)
VIEW_HFOV = 50.0
WIDE_HFOV = 90.0
RATE_PITCH = math.radians(10)  # the view for the detection rate looks a little up, where people walk


class Rig:
    """dock-sim on a pty and the real dockd on it (as tests/integration/conftest.py runs them)."""

    def __init__(self, binaries, directory):
        self.dir = Path(directory)
        self.socket = self.dir / "dockd.sock"
        link = self.dir / "stand"
        self.sim = subprocess.Popen([f"{binaries}/dock-sim", "--pty", "--link", str(link), "--seed", "1"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=open(self.dir / "sim.err", "wb"))
        self.sim.stdout.readline()
        wait(lambda: link.exists(), 5, "dock-sim's link")
        self.dockd = subprocess.Popen([f"{binaries}/dockd", "--ignore-missing-config", "--config", "/nonexistent",
                                       "--device", str(link), "--socket", str(self.socket), "--socket-group", ""],
                                      stderr=open(self.dir / "dockd.err", "wb"))
        wait(self.connected, 15, "a connected stand")

    def call(self, method, params=None):
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(self.socket))
            s.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}) + "\n").encode())
            data = b""
            while not data.endswith(b"\n"):
                data += s.recv(65536)
            return json.loads(data)

    def connected(self):
        try:
            return any(st["state"] == "connected" for st in self.call("stands.list")["result"])
        except OSError:
            return False

    def stop(self):
        for p in (self.dockd, self.sim):
            p.terminate()
        for p in (self.dockd, self.sim):
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()


def wait(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def load_average():
    """The 1-minute load average: these machines are shared, so each figure says how busy it was."""
    return float(open("/proc/loadavg").read().split()[0])


def python_for(detector, mediapipe_python):
    return mediapipe_python if any(n in VENV_DETECTORS for n in detector.split("+")) else DEBIAN_PYTHON


def detection_rate(detector_name, reference_path):
    """Runs inside the detector's interpreter, pinned to one core: recall and precision against the
    reference people on the view at (yaw 0, pitch 10°) of every 5th frame, and the CPU time of each
    detection."""
    import cv2
    import numpy as np
    from dock_camera import detectors
    from dock_camera.geometry import PanTiltView
    reference = json.load(open(reference_path))
    detector = detectors.make(detector_name)
    capture = cv2.VideoCapture(VIDEO)
    size = (640, 480)
    view = PanTiltView((768, 576), math.radians(WIDE_HFOV), size, math.radians(VIEW_HFOV))
    homography = np.array(view.view_to_wide(0.0, RATE_PITCH))
    people = found_people = frames_with_people = frames_found = detections = correct = 0
    cpu_ms = []
    number = -1
    while True:
        ok, image = capture.read()
        number += 1
        if not ok:
            break
        if number % 5:
            continue
        frame = cv2.warpPerspective(image, homography, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
        boxes = []
        for _, x, y, w, h in reference.get(str(number), []):
            c = view.wide_point_in_view(x + w / 2, y + h / 2, 0.0, RATE_PITCH)
            p0 = view.wide_point_in_view(x, y, 0.0, RATE_PITCH)
            p1 = view.wide_point_in_view(x + w, y + h, 0.0, RATE_PITCH)
            if c and 0 <= c[0] < size[0] and 0 <= c[1] < size[1]:
                boxes.append((p0[0], p0[1], p1[0], p1[1]))
        cpu = time.process_time()
        found = detector.detect(frame)
        cpu_ms.append(1000 * (time.process_time() - cpu))
        detections += len(found)
        hit = set()
        for d in found:
            cx, cy = d.x + d.width / 2, d.y + d.height / 2
            match = [i for i, (x0, y0, x1, y1) in enumerate(boxes)
                     if x0 - 0.15 * (x1 - x0) <= cx <= x1 + 0.15 * (x1 - x0) and y0 - 0.1 * (y1 - y0) <= cy <= y1]
            if match:
                correct += 1
                hit.update(match)
        people += len(boxes)
        found_people += len(hit)
        if boxes:
            frames_with_people += 1
            frames_found += bool(hit)
    return {"detector": detector_name, "frames": frames_with_people, "people": people,
            "recall": round(found_people / people, 3) if people else None,
            "frames_with_a_hit": round(frames_found / frames_with_people, 3) if frames_with_people else None,
            "precision": round(correct / detections, 3) if detections else None,
            "detections": detections,
            "one_core_cpu_ms": {"p50": round(statistics.median(cpu_ms), 1), "mean": round(statistics.fmean(cpu_ms), 1)}}


def run_camera(binaries, work, detector, python, seconds, fps, extra=()):
    """dock-camera over the virtual camera against a fresh rig; returns (stats, log path)."""
    rig = Rig(binaries, work)
    try:
        for call in extra:
            reply = rig.call(*call)
            if "error" in reply:
                raise RuntimeError(f"{call[0]}: {reply['error']}")
        stats, log = work / "stats.json", work / "log.jsonl"
        subprocess.run([python, str(CAMERA / "dock-camera"), "--source", f"virtual:{VIDEO}", "--socket",
                        str(rig.socket), "--detector", detector, "--fps", str(fps), "--seconds", str(seconds),
                        "--hfov", str(VIEW_HFOV), "--virtual-wide-fov", str(WIDE_HFOV), "--stats", str(stats),
                        "--log", str(log)], check=True, stderr=open(work / "camera.err", "wb"))
        return json.load(open(stats)), log
    finally:
        rig.stop()


def fixed_camera_loop(binaries, work, detector, python, seconds, fps):
    """dockd tracks, but the stand is pinned (motion.limits) at yaw 0, pitch 10° by a client that
    stays connected (limits revert when their lease ends)."""
    rig = Rig(binaries, work)
    try:
        with socket.socket(socket.AF_UNIX) as holder:
            holder.connect(str(rig.socket))
            reader = holder.makefile("rb")

            def call(i, method, params):
                holder.sendall((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
                while True:
                    reply = json.loads(reader.readline())
                    if reply.get("id") == i:
                        if "error" in reply:
                            raise RuntimeError(f"{method}: {reply['error']}")
                        return reply

            call(1, "motion.orient", {"yaw": 0.0, "pitch": RATE_PITCH, "duration": 1.0})
            wait(lambda: abs(current_pitch(rig) - RATE_PITCH) < 0.01, 10, "the stand at its pose")
            call(2, "motion.limits", {"axes": {"yaw": {"min": -0.001, "max": 0.001, "max_speed": 0.001},
                                               "pitch": {"min": RATE_PITCH - 0.001, "max": RATE_PITCH + 0.001,
                                                         "max_speed": 0.001}}})
            stats, log = work / "stats.json", work / "log.jsonl"
            subprocess.run([python, str(CAMERA / "dock-camera"), "--source", f"virtual:{VIDEO}", "--socket",
                            str(rig.socket), "--detector", detector, "--fps", str(fps), "--seconds", str(seconds),
                            "--hfov", str(VIEW_HFOV), "--virtual-wide-fov", str(WIDE_HFOV), "--stats", str(stats),
                            "--log", str(log)], check=True, stderr=open(work / "camera.err", "wb"))
            return json.load(open(stats)), log
    finally:
        rig.stop()


def current_pitch(rig):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(rig.socket))
        s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"topics":["motion"]}}\n')
        reader = s.makefile("rb")
        while True:
            message = json.loads(reader.readline())
            if message.get("method") == "motion.state":
                return message["params"]["positions"]["pitch"]


def naive_loop(binaries, work, detector, python, seconds, fps):
    rig = Rig(binaries, work)
    try:
        log = work / "log.jsonl"
        subprocess.run([python, str(HERE / "naive_client.py"), "--source", f"virtual:{VIDEO}", "--socket",
                        str(rig.socket), "--detector", detector, "--fps", str(fps), "--seconds", str(seconds),
                        "--hfov", str(VIEW_HFOV), "--virtual-wide-fov", str(WIDE_HFOV), "--log", str(log)],
                       check=True, stderr=open(work / "camera.err", "wb"))
        return log
    finally:
        rig.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bin", required=True, help="folder with dockd and dock-sim")
    p.add_argument("--out", default=str(ROOT / "out" / "camera"))
    p.add_argument("--detectors", default="hog,hog-fast,haar,blazeface,blazeface-short,blazepose,mtcnn,yolo,hog+blazeface,"
                                          "blazeface+blazepose,hog+blazepose")
    p.add_argument("--default", default="hog", help="the detector of the closed-loop runs (all three clients)")
    p.add_argument("--mediapipe-python", default=str(ROOT / ".venv-camera" / "bin" / "python"))
    p.add_argument("--seconds", type=float, default=20.0, help="per-detector run")
    p.add_argument("--loop-seconds", type=float, default=60.0, help="per closed-loop run")
    p.add_argument("--loop-runs", type=int, default=3, help="closed-loop runs per client")
    p.add_argument("--loop-clients", default="dockd,fixed,naive",
                   help="which closed-loop clients to run (a comma list; a change to dockd's tracking needs only dockd)")
    p.add_argument("--rate-only", metavar="DETECTOR", help=argparse.SUPPRESS)
    p.add_argument("--reference", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.rate_only:  # the child that runs in the detector's interpreter
        print(json.dumps(detection_rate(args.rate_only, args.reference)))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for previous in out.glob("bench-camera-*"):  # the last run's logs: each run keeps only its own
        shutil.rmtree(previous)
    reference = out / "vtest-reference.json"
    if not reference.exists():
        subprocess.run([DEBIAN_PYTHON, str(HERE / "ground_truth.py"), VIDEO, str(reference)], check=True)
    results = {"detectors": [], "loops": {}, "loop_seconds": args.loop_seconds, "loop_detector": args.default}
    names = [d for d in args.detectors.split(",") if d]
    for name in names:
        python = python_for(name, args.mediapipe_python)
        if not os.path.exists(python):
            print(f"bench-camera: skipping {name}: {python} is missing (make camera-venv)", file=sys.stderr)
            continue
        print(f"bench-camera: {name}: detection rate", file=sys.stderr)
        # On one core (taskset -c 0): every thread a detector starts shares it, so its CPU time per
        # frame is what it costs a machine that has one core for it.
        child = subprocess.run(["taskset", "-c", "0", python, __file__, "--bin", args.bin, "--rate-only", name, "--reference",
                                str(reference)], check=True, capture_output=True, text=True)
        rate = json.loads(child.stdout.strip().splitlines()[-1])  # a package may print on import
        print(f"bench-camera: {name}: {args.seconds:g} s with dockd", file=sys.stderr)
        work = Path(tempfile.mkdtemp(prefix=f"bench-camera-{name}-", dir=out))
        load = load_average()
        stats, _ = run_camera(args.bin, work, name, python, args.seconds, 30)
        stats["load_average"] = [load, load_average()]
        results["detectors"].append({"detector": name, "python": python, "rate": rate, "live": stats})
    from loop_metrics import load_log, samples_from_dockd, samples_from_naive, score_split
    from dock_camera.geometry import PanTiltView
    geometry = PanTiltView((768, 576), math.radians(WIDE_HFOV), (640, 480), math.radians(VIEW_HFOV))
    ref = json.load(open(reference))
    loop_python = python_for(args.default, args.mediapipe_python)
    for mode in [m for m in args.loop_clients.split(",") if m]:
        runs = []
        for run in range(args.loop_runs):
            print(f"bench-camera: closed loop, {mode}, run {run + 1} of {args.loop_runs}, {args.loop_seconds:g} s",
                  file=sys.stderr)
            work = Path(tempfile.mkdtemp(prefix=f"bench-camera-loop-{mode}-", dir=out))
            load = load_average()
            results.setdefault("logs", {}).setdefault(mode, []).append(str(work / "log.jsonl"))
            if mode == "dockd":
                stats, log = run_camera(args.bin, work, args.default, loop_python, args.loop_seconds, 15)
                frames, states = load_log(log)
                samples = samples_from_dockd(frames, states)
            elif mode == "fixed":
                stats, log = fixed_camera_loop(args.bin, work, args.default, loop_python, args.loop_seconds, 15)
                frames, states = load_log(log)
                samples = samples_from_dockd(frames, states)
            else:
                log = naive_loop(args.bin, work, args.default, loop_python, args.loop_seconds, 15)
                frames, _ = load_log(log)
                samples = samples_from_naive(frames)
                stats = None
            figures = score_split(samples, ref, geometry, args.loop_seconds, frames)
            figures["load_average"] = [load, load_average()]
            runs.append({"figures": figures, "stats": stats})
        results["loops"][mode] = runs
    json.dump(results, open(out / "results.json", "w"), indent=1)
    from report import render
    (out / "summary.md").write_text(render(results, f"{os.cpu_count()} cores") + "\n")
    print((out / "summary.md").read_text())


if __name__ == "__main__":
    main()
