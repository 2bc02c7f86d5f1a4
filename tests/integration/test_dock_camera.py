"""dock-camera, the camera client: real frames (Debian's vtest.avi, people walking), a real detector
(OpenCV's HOG people detector from Debian's python3-opencv), the real dockd and dock-sim.

dock-camera runs under Debian's /usr/bin/python3 (which has python3-opencv); the pure parts
(geometry, the stand's pose from motion.state, the benchmark's scoring) are imported here directly.
V4L2 capture is NOT tested on a device: these machines have no /dev/video* and cannot load
v4l2loopback (no kernel modules); only its error path is."""
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BIN, ROOT, Rig, wait_for

sys.path.insert(0, str(ROOT / "camera"))
sys.path.insert(0, str(ROOT / "camera" / "bench"))

from dock_camera.geometry import PanTiltView, apply  # noqa: E402
from dock_camera.stand_pose import StandPose  # noqa: E402
from dock_camera.stand_choice import stand_for_source  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"
VIDEO = "/usr/share/doc/opencv-doc/examples/data/vtest.avi"
DOCK_CAMERA = ROOT / "camera" / "dock-camera"

needs_video = pytest.mark.skipif(not (os.path.exists(VIDEO) and os.path.exists(DEBIAN_PYTHON)),
                                 reason="make deps installs opencv-doc and python3-opencv")


def run_in_camera(script):
    """What a script run in camera/ under Debian's Python (OpenCV, as dock-camera runs) prints, as JSON."""
    done = subprocess.run([DEBIAN_PYTHON, "-c", script], cwd=ROOT / "camera", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def start_camera(tmp_path, socket_path, *args, name="camera"):
    err = open(tmp_path / f"{name}.err", "wb")
    return subprocess.Popen([DEBIAN_PYTHON, str(DOCK_CAMERA), "--socket", str(socket_path), *args], stderr=err)


def camera_log(tmp_path, name="camera"):
    return (tmp_path / f"{name}.err").read_text(errors="replace")


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        raise


# ---- pure parts -------------------------------------------------------------------------------

def test_virtual_view_turns_the_way_dockd_counts_angles():
    view = PanTiltView((768, 576), math.radians(90), (640, 480), math.radians(50))
    centre = lambda yaw, pitch: apply(view.view_to_wide(yaw, pitch), [320, 240, 1])
    x, y, z = centre(0.3, 0.0)
    assert x / z < 384 - 50  # yaw positive is to the left: the view's centre moves left in the video
    x, y, z = centre(0.0, 0.2)
    assert y / z < 288 - 50  # pitch positive is up
    for yaw, pitch in ((0.0, 0.0), (0.25, -0.1), (-0.4, 0.2)):
        cx, cy, cz = centre(yaw, pitch)
        assert view.wide_point_angles(cx / cz, cy / cz) == pytest.approx((yaw, pitch), abs=1e-9)
        assert view.wide_point_in_view(cx / cz, cy / cz, yaw, pitch) == pytest.approx((320, 240), abs=1e-6)


def test_stand_pose_takes_the_smallest_delay_as_the_clock_offset_and_interpolates():
    pose = StandPose()
    assert pose.at(5.0) == (0.0, 0.0)  # home before any report
    state = lambda t, yaw, rate=0.0: {"time": t, "positions": {"yaw": yaw, "pitch": 0.0},
                                      "velocities": {"yaw": rate, "pitch": 0.0}}
    pose.record(100.030, state(1.0, 0.0))   # arrived 30 ms after it was stamped
    pose.record(100.105, state(1.1, 0.1))   # 5 ms: the better estimate
    pose.record(100.220, state(1.2, 0.2, rate=1.0))
    assert pose.offset == pytest.approx(99.005)
    assert pose.at(99.005 + 1.15)[0] == pytest.approx(0.15)
    assert pose.at(99.005 + 1.25)[0] == pytest.approx(0.25)  # extrapolated with the rate
    assert pose.at(99.005 + 9.0)[0] == pytest.approx(0.35)  # but not far


def test_stand_pose_forgets_a_restarted_dockd_clock():
    pose = StandPose()
    pose.record(50.0, {"time": 40.0, "positions": {"yaw": 0.5}, "velocities": {}})
    pose.record(51.0, {"time": 0.5, "positions": {"yaw": -0.2}, "velocities": {}})  # a new dockd
    assert pose.offset == pytest.approx(50.5)
    assert pose.at(51.0)[0] == pytest.approx(-0.2)


@needs_video
def test_virtual_source_waits_for_a_delivery_time_that_passes_while_it_decodes():
    """The delivery time is due in 10 ms when checked and past when the wait is computed (a loaded
    machine descheduled dock-camera in between): the source delivers at once. In one CI run it
    read the clock twice, slept a negative time and dock-camera died (ValueError)."""
    script = f"""
import json, time
from dock_camera import sources
from dock_camera.stand_pose import StandPose
clock = [100.0]
def monotonic():
    clock[0] += 0.02  # every reading of the clock is 20 ms after the one before
    return clock[0]
slept = []
sources.time.monotonic = monotonic
sources.time.sleep = slept.append
source = sources.VirtualPanTiltSource({VIDEO!r}, (320, 240), 15, 0.9, 1.6, 0.03, StandPose())
frame = source.read()
print(json.dumps({{"capture_time": frame.capture_time, "slept": slept}}))
"""
    got = run_in_camera(script)
    assert got["capture_time"] == pytest.approx(100.02) and all(s >= 0 for s in got["slept"]), got


# ---- the systemd unit -------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_a_ptz_webcam_is_its_own_stand_by_its_device():
    """Without --stand, observations from /dev/videoN go to the stand dockd drives through that
    same device (by real path: a by-id link names it too), and to no stand in particular (dockd's
    first) when none is attached there."""
    links = {"/dev/v4l/by-id/usb-OBSBOT_Tiny_2-video-index0": "/dev/video2"}

    def realpath(path):
        return links.get(path, path)
    stands = [{"id": "SIM-0001", "endpoint": "serial:/dev/dock/SIM-0001@115200"},
              {"id": "", "endpoint": "video:/dev/video0"},  # not handshaken yet: no id
              {"id": "obsbot", "endpoint": "video:/dev/v4l/by-id/usb-OBSBOT_Tiny_2-video-index0"}]
    assert stand_for_source(stands, "/dev/video2", realpath) == "obsbot"
    assert stand_for_source(stands, "/dev/v4l/by-id/usb-OBSBOT_Tiny_2-video-index0", realpath) == "obsbot"
    assert stand_for_source(stands, "/dev/video0", realpath) is None
    assert stand_for_source(stands, "/dev/video4", realpath) is None
    assert stand_for_source(stands, "virtual:/usr/share/doc/vtest.avi", realpath) is None


def test_camera_unit_is_valid_and_hardened(tmp_path):
    """The template, instantiated for video0, passes `systemd-analyze verify` (but for the installed
    binary, which does not exist here) and keeps its exposure low. Not run under systemd here."""
    unit = tmp_path / "dock-camera@video0.service"
    unit.write_text((ROOT / "systemd" / "dock-camera@.service").read_text())
    verify = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    problems = [line for line in (verify.stdout + verify.stderr).splitlines()
                if line.strip() and "/usr/local/bin/dock-camera is not executable" not in line]
    assert not problems, problems
    out = subprocess.run(["systemd-analyze", "security", "--offline=true", str(unit)],
                         capture_output=True, text=True, timeout=60)
    match = re.search(r"Overall exposure level for dock-camera@video0.service: ([0-9.]+)", out.stdout + out.stderr)
    assert match, out.stdout[-500:] + out.stderr[-500:]
    assert float(match.group(1)) <= 1.5, f"exposure {match.group(1)} > 1.5"


def test_relay_framing_follows_the_subject_smoothly_within_the_frame():
    from dock_camera.relay import Framer, selected_subject
    framer = Framer(fill=0.6, max_zoom=3.0, time_constant=0.6, deadband=0.04)
    whole = framer.update(None, 0.0)
    assert whole == (0.0, 0.0, 1.0, 1.0)
    person = {"x": 0.70, "y": 0.30, "width": 0.10, "height": 0.30}  # right of centre: height/0.6 = a 0.5 window
    t, windows = 0.0, [whole]
    for i in range(150):  # 5 s at 30 fps, the box wandering by ±1.5 % of the frame once a second
        t += 1 / 30
        jitter = 0.015 * math.sin(2 * math.pi * t)
        windows.append(framer.update({"rect": dict(person, x=person["x"] + jitter, y=person["y"] - jitter)}, t))
    for x, y, size, _ in windows:  # always inside the frame
        assert 0 <= x and 0 <= y and x + size <= 1 + 1e-9 and y + size <= 1 + 1e-9
    x, y, size, _ = windows[-1]
    assert abs(size - 0.5) < 0.01 and abs(x + size / 2 - 0.75) < 0.01 and abs(y + size / 2 - 0.45) < 0.01, windows[-1]
    # no jitter once settled: the wandering box moves the window by less than a pixel of 1280 (the
    # smoothing alone would follow it by ±5 px: the deadband holds it)
    settled = windows[-30:]
    assert max(w[0] for w in settled) - min(w[0] for w in settled) < 1 / 1280, settled
    # and no leap from the whole frame to the subject: at most a time constant's share of the way per frame
    steps = [abs(b[0] - a[0]) for a, b in zip(windows, windows[1:])]
    assert max(steps) < 0.05, max(steps)
    # a subject at the edge: the window stops at the frame's edge instead of centring on it
    for i in range(90):
        t += 1 / 30
        x, y, size, _ = framer.update({"rect": {"x": 0.95, "y": 0.0, "width": 0.05, "height": 0.2}}, t)
    assert size == pytest.approx(1 / 3, abs=0.01) and x + size == pytest.approx(1.0, abs=1e-3) and y < 0.01, (x, y, size)
    # the subject gone: back to the whole frame
    for i in range(150):
        t += 1 / 30
        window = framer.update(None, t)
    assert window[2] > 0.99
    state = {"subjects": [{"id": "a", "rect": person, "selected": False},
                          {"id": "b", "rect": dict(person, x=0.1), "selected": True, "saliency_rank": 1}]}
    assert selected_subject(state)["id"] == "b" and selected_subject({"subjects": []}) is None


def test_relay_framing_takes_a_shot_size_from_the_face_or_the_body():
    from dock_camera.relay import Framer

    def settled(framer, subject):
        window = None
        for i in range(300):  # 10 s at 30 fps: long past the 0.6 s lag
            window = framer.update(subject, i / 30)
        return window

    face = {"x": 0.45, "y": 0.30, "width": 0.06, "height": 0.08}
    person = {"rect": {"x": 0.40, "y": 0.25, "width": 0.16, "height": 0.60}, "face_rect": face}
    # head: the face 35 % of the window's height, its centre 0.42 down the window
    x, y, size, _ = settled(Framer(max_zoom=8, shot="head"), person)
    assert face["height"] / size == pytest.approx(0.35, abs=0.005), size
    assert (face["y"] + face["height"] / 2 - y) / size == pytest.approx(0.42, abs=0.01), (y, size)
    assert (face["x"] + face["width"] / 2 - x) / size == pytest.approx(0.5, abs=0.01), (x, size)
    # upper_body: the face 14 % of the height, on the upper third
    x, y, size, _ = settled(Framer(max_zoom=8, shot="upper_body"), person)
    assert face["height"] / size == pytest.approx(0.14, abs=0.005), size
    assert (face["y"] + face["height"] / 2 - y) / size == pytest.approx(1 / 3, abs=0.01), (y, size)
    # full_body: the body 75 %, centred
    x, y, size, _ = settled(Framer(max_zoom=8, shot="full_body"), person)
    body = person["rect"]
    assert body["height"] / size == pytest.approx(0.75, abs=0.005), size
    assert (body["y"] + body["height"] / 2 - y) / size == pytest.approx(0.5, abs=0.01), (y, size)
    # a face shot without a measured face: the subject framed whole (its box at 60 %), not the frame
    x, y, size, _ = settled(Framer(max_zoom=8, shot="head"), {"rect": body, "face_rect": None})
    assert body["height"] / size == pytest.approx(0.6, abs=0.005), size
    # never tighter than max_zoom: a head shot of a small face stops at a third of the frame
    x, y, size, _ = settled(Framer(max_zoom=3, shot="head"), person)
    assert size == pytest.approx(1 / 3, abs=0.005), size
    with pytest.raises(ValueError):
        Framer(shot="close_up")


RELAY_PIXELS = """
import numpy as np
from dock_camera.relay import to_pixels
image = np.zeros((4, 4, 3), np.uint8)
image[:, 2:] = 255  # black left half, white right half
i420 = to_pixels(image, "YU12")
assert i420.shape == (6, 4) and i420[:4, :2].max() <= 17 and i420[:4, 2:].min() >= 234, i420  # limited range
yuyv = to_pixels(image, "YUYV")
assert yuyv.shape == (4, 8), yuyv.shape
assert (yuyv[:, 0::2] == i420[:4]).all(), yuyv  # the same luma; a gray picture's chroma is 128
assert abs(int(yuyv[0, 1]) - 128) <= 2 and abs(int(yuyv[0, 3]) - 128) <= 2, yuyv
"""


@needs_video
def test_relay_pixels_are_i420_and_yuyv_of_the_same_picture():
    done = subprocess.run([DEBIAN_PYTHON, "-c", RELAY_PIXELS], cwd=ROOT / "camera", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


# ---- bad input: a clear error, nothing started --------------------------------------------------

@needs_video
@pytest.mark.parametrize("args, status, message", [
    (["--source", "/dev/video99"], 66, "/dev/video99: no such device"),
    (["--source", "/nonexistent.avi"], 66, "no such file or device"),
    (["--source", "virtual:/nonexistent.avi"], 66, "no such video for the virtual camera"),
    (["--source", VIDEO, "--size", "big"], 64, "is not WIDTHxHEIGHT"),
    (["--source", VIDEO, "--detector", "ssd"], 64, "unknown detector 'ssd'"),
    (["--source", VIDEO, "--preview", "/nonexistent/p.png"], 73,
     "--preview /nonexistent/p.png: cannot create it: no such directory /nonexistent"),
    (["--source", VIDEO, "--log", "/tmp"], 73, "--log /tmp: cannot create it: is a directory"),
    (["--source", VIDEO, "--stats", "/proc/stats.json"], 73, "--stats /proc/stats.json: cannot create it: no such file or directory"),
    (["--source", VIDEO, "--preview", "p.jpg"], 2, "--preview p.jpg: name a .png, .avi, .mkv file"),
    (["--source", f"virtual:{VIDEO}", "--hfov", "100", "--virtual-wide-fov", "90"], 66, "must be wider"),
    (["--source", VIDEO, "--relay", "/dev/video99"], 69, "/dev/video99: no such device — v4l2loopback is not loaded"),
    (["--source", VIDEO, "--relay", "/dev/null"], 69, "/dev/null: not a video4linux device"),
    (["--source", VIDEO, "--relay-crop"], 2, "--relay-crop needs --relay"),
    (["--source", VIDEO, "--relay", "/dev/null", "--relay-crop", "close_up"], 2, "invalid choice: 'close_up'"),
])
def test_bad_arguments_get_a_clear_error(tmp_path, args, status, message):
    done = subprocess.run([DEBIAN_PYTHON, str(DOCK_CAMERA), "--socket", str(tmp_path / "none.sock"), *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == status, done.stderr
    assert message in done.stderr


@needs_video
def test_the_check_of_the_output_files_leaves_nothing_behind(tmp_path):
    """The files are checked before the run by opening them: one that was not there is gone again when
    a later one fails, one that was there keeps what it held, a link keeps pointing where it did."""
    kept = tmp_path / "kept.jsonl"
    kept.write_text("an earlier run\n")
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "nowhere.json")
    done = subprocess.run([DEBIAN_PYTHON, str(DOCK_CAMERA), "--socket", str(tmp_path / "none.sock"), "--source", VIDEO,
                           "--preview", str(tmp_path / "new.png"), "--log", str(kept), "--stats", str(link),
                           "--relay", "/dev/null"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 69, done.stderr  # the relay refused, after the files were checked
    assert not (tmp_path / "new.png").exists()
    assert kept.read_text() == "an earlier run\n"
    assert link.is_symlink() and os.readlink(link) == str(tmp_path / "nowhere.json")


# ---- the real loop ----------------------------------------------------------------------------

def subscribe(client, topics):
    client.result("subscribe", {"topics": topics, "motion_rate": 20})


def pitch_now(client):
    return client.latest("motion.state")["params"]["positions"]["pitch"]


@pytest.fixture(scope="module")
def reference_people(tmp_path_factory):
    """Where the people in vtest.avi are, from background subtraction (camera/bench/ground_truth.py),
    independent of the detector under test."""
    path = tmp_path_factory.mktemp("reference") / "vtest.json"
    subprocess.run([DEBIAN_PYTHON, str(ROOT / "camera" / "bench" / "ground_truth.py"), VIDEO, str(path)],
                   check=True, timeout=120, capture_output=True)
    return json.loads(path.read_text())


@needs_video
@pytest.mark.timeout(300)
def test_virtual_camera_loop_turns_the_stand_toward_the_people(tmp_path, reference_people):
    """The stand starts looking down at the grass, the people walking at the top edge of the view and
    above it. With real HOG detections on the real video, dockd must tilt the stand up to them and keep
    the person it follows in the frame (checked against the reference people, not the detector)."""
    from loop_metrics import load_log, samples_from_dockd, score
    rig = Rig(tmp_path)
    camera = None
    try:
        client = rig.client()
        rig.connected_stand(client)
        subscribe(client, ["motion", "tracking"])
        start_pitch = -0.15  # 9° down: the walkers' heads are above the view, HOG finds a few of them
        moved = client.result("motion.orient", {"pitch": start_pitch, "duration": 0.5})
        client.wait_notification(lambda m: m.get("method") == "motion.progress"
                                 and m["params"]["id"] == moved["id"] and m["params"]["state"] == "completed", 10)
        client.result("lease.release")  # the orientation stays; tracking is the camera's again
        seconds = 30
        camera = start_camera(tmp_path, rig.socket_path, "--source", f"virtual:{VIDEO}", "--detector", "hog",
                              "--fps", "15", "--seconds", str(seconds), "--log", str(tmp_path / "log.jsonl"),
                              "--stats", str(tmp_path / "stats.json"), "--preview", str(tmp_path / "preview.png"))
        with_subjects = client.wait_notification(
            lambda m: m.get("method") == "tracking.state" and m["params"]["subjects"], 60)
        assert with_subjects["params"]["subjects"][0]["kind"] == "person"
        wait_for(lambda: pitch_now(client) > start_pitch + 0.1, 60, "the stand tilting up toward the people")
        assert camera.wait(seconds + 60) == 0, camera_log(tmp_path)
        stats = json.loads((tmp_path / "stats.json").read_text())
        # A busy machine may make a frame late (-32005) now and then; most must be taken.
        assert stats["replies"].get("ok", 0) >= 0.8 * stats["frames"] >= 0.8 * 10 * seconds, stats
        frames, states = load_log(tmp_path / "log.jsonl")
        view = PanTiltView((768, 576), math.radians(90), (640, 480), math.radians(50))
        figures = score(samples_from_dockd(frames, states), reference_people, view, seconds)
        assert figures["samples"] >= 5 * seconds, figures
        print("closed loop:", figures)
        assert figures["in_frame"] >= 0.6, figures
        assert (tmp_path / "preview.png").stat().st_size > 10_000
    finally:
        if camera is not None and camera.poll() is None:
            camera.kill()
        rig.stop()


def restart_dockd(rig):
    rig.dockd.terminate()
    rig.dockd.wait(10)
    rig.dockd = subprocess.Popen(
        [str(BIN / "dockd"), "--ignore-missing-config", "--config", str(rig.tmp / "none.conf"), "--device",
         str(rig.link), "--socket", str(rig.socket_path), "--socket-group", ""],
        stderr=open(rig.tmp / "dockd2.err", "wb"))
    wait_for(rig.accepting, 15, "the new dockd's socket")


@needs_video
@pytest.mark.timeout(300)
def test_follows_a_dockd_restart(tmp_path):
    """dockd stops and a new one starts on the same socket: dock-camera reconnects by itself and its
    observations reach the new dockd."""
    rig = Rig(tmp_path)
    camera = None
    try:
        client = rig.client()
        rig.connected_stand(client)
        camera = start_camera(tmp_path, rig.socket_path, "--source", f"virtual:{VIDEO}", "--fps", "15",
                              "--stats", str(tmp_path / "stats.json"))
        subscribe(client, ["tracking"])
        client.wait_notification(lambda m: m.get("method") == "tracking.state" and m["params"]["subjects"], 60)
        client.close()
        rig.clients.remove(client)
        restart_dockd(rig)
        fresh = rig.client()
        rig.connected_stand(fresh, timeout=20)
        subscribe(fresh, ["tracking"])
        fresh.wait_notification(lambda m: m.get("method") == "tracking.state" and m["params"]["subjects"], 60)
        wait_for(lambda: "connected to dockd again" in camera_log(tmp_path), 10, "dock-camera's reconnect message")
        assert camera.poll() is None, camera_log(tmp_path)
        assert stop(camera) == 0
        stats = json.loads((tmp_path / "stats.json").read_text())
        assert stats["connections"] >= 2, stats  # more when it reached the old dockd while it was exiting
    finally:
        if camera is not None and camera.poll() is None:
            camera.kill()
        rig.stop()


@needs_video
@pytest.mark.timeout(300)
def test_file_source_streams_at_the_files_rate(tmp_path):
    """A video file (here vtest.avi re-encoded at 15 frames/s, Motion-JPEG) is played at its own
    rate, as a camera would deliver it: each frame's capture time is its place in the file (k/15 s
    from the first), none is taken before it is due, and a frame the loop was too slow for is
    skipped. Judged on the file's timeline, not by how many frames the detector kept up with:
    beside a CPU hog (load 20) HOG took
    334 ms a frame and 15 of 90 were detected, at 2.4 frames/s, which dockd rightly refused as too
    slow (-32005). How fast the loop keeps up is measured by make bench-camera (frames/s kept)."""
    import_cv2 = ("import cv2\n"
                  f"r = cv2.VideoCapture({VIDEO!r})\n"
                  f"w = cv2.VideoWriter({str(tmp_path / 'clip.avi')!r}, cv2.VideoWriter_fourcc(*'MJPG'), 15, (768, 576))\n"
                  "for _ in range(90):\n    ok, f = r.read(); w.write(f)\nw.release()\n")
    subprocess.run([DEBIAN_PYTHON, "-c", import_cv2], check=True, timeout=60)
    rig = Rig(tmp_path)
    try:
        client = rig.client()
        rig.connected_stand(client)
        started = time.monotonic()
        done = subprocess.run([DEBIAN_PYTHON, str(DOCK_CAMERA), "--socket", str(rig.socket_path), "--source",
                               str(tmp_path / "clip.avi"), "--no-loop", "--hfov", "60", "--log", str(tmp_path / "log.jsonl"),
                               "--stats", str(tmp_path / "stats.json")], capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        assert time.monotonic() - started >= 89 / 15, "the file played faster than its rate"
        stats = json.loads((tmp_path / "stats.json").read_text())
        frames = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
        frames = [f for f in frames if "frame" in f]
        assert len(frames) == stats["frames"] and stats["frames"] + stats["dropped_by_source"] == 90, stats
        first = frames[0]["capture_time"]
        places = [(f["capture_time"] - first) * 15 for f in frames]
        assert all(abs(p - round(p)) < 1e-6 for p in places), places
        places = [round(p) for p in places]
        assert places == sorted(set(places)) and places[-1] <= 89, places
        assert all(f["sent"] is not None and f["sent"] >= f["capture_time"] for f in frames), "a frame taken before it was due"
        # The detector ran on the file's pictures: it found people in them. How many a frame depends
        # on the level the machine's load set (the whole 768×576 scene scaled to 640×480: walkers are
        # 60–75 px tall, under HOG's 128-px window; a cheaper level shrinks them further): 0.47 a
        # frame on a quiet run, 0.12 in one CI run beside builds, whose test asked for 0.3 and
        # failed. What each level finds: test_hog_finds_the_same_people_in_the_frames_pixels_at_each_level.
        found = sum(len(f["observations"]) for f in frames)
        print(f"\n{found} people found in {len(frames)} frames; frames per level {stats['frames_per_detector_level']}")
        assert found > 0, stats
    finally:
        rig.stop()


@needs_video
@pytest.mark.timeout(300)
def test_waits_for_dockd_started_after_it(tmp_path):
    """Started before dockd (a boot where the camera unit wins the race): it waits for the socket."""
    camera = start_camera(tmp_path, tmp_path / "dockd.sock", "--source", f"virtual:{VIDEO}", "--fps", "15")
    rig = None
    try:
        wait_for(lambda: "cannot connect to dockd" in camera_log(tmp_path), 30, "dock-camera waiting for dockd")
        rig = Rig(tmp_path)
        client = rig.client()
        rig.connected_stand(client)
        subscribe(client, ["tracking"])
        client.wait_notification(lambda m: m.get("method") == "tracking.state" and m["params"]["subjects"], 60)
        assert stop(camera) == 0
    finally:
        if camera.poll() is None:
            camera.kill()
        if rig is not None:
            rig.stop()


@needs_video
def test_says_once_why_dockd_refuses_observations(tmp_path):
    """dockd without a connected stand refuses every observation (-32001): dock-camera says why once
    and keeps going."""
    socket_path = tmp_path / "dockd.sock"
    dockd = subprocess.Popen([str(BIN / "dockd"), "--ignore-missing-config", "--config", str(tmp_path / "none.conf"),
                              "--device", str(tmp_path / "no-stand"), "--socket", str(socket_path),
                              "--socket-group", ""], stderr=open(tmp_path / "dockd.err", "wb"))
    try:
        wait_for(socket_path.exists, 15, "dockd's socket")
        done = subprocess.run([DEBIAN_PYTHON, str(DOCK_CAMERA), "--socket", str(socket_path), "--source",
                               f"virtual:{VIDEO}", "--fps", "15", "--seconds", "4",
                               "--stats", str(tmp_path / "stats.json")], capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        assert done.stderr.count("dockd refused an observation") == 1, done.stderr
        stats = json.loads((tmp_path / "stats.json").read_text())
        assert stats["replies"].get("-32001", 0) >= 20, stats
    finally:
        dockd.terminate()
        dockd.wait(10)


@needs_video
@pytest.mark.timeout(300)
def test_keeps_feeding_across_a_stand_reconnect(tmp_path):
    """The stand's link drops for a second (dock-sim `unplug`) and dockd reconnects it: dock-camera
    keeps its connection to dockd and tracking resumes on the reconnected stand."""
    rig = Rig(tmp_path)
    camera = None
    try:
        client = rig.client()
        rig.connected_stand(client)
        subscribe(client, ["stands", "tracking"])
        camera = start_camera(tmp_path, rig.socket_path, "--source", f"virtual:{VIDEO}", "--fps", "15",
                              "--stats", str(tmp_path / "stats.json"))
        client.wait_notification(lambda m: m.get("method") == "tracking.state" and m["params"]["subjects"], 60)
        rig.sim_command("unplug 1")
        client.wait_notification(lambda m: m.get("method") == "stand.disconnected", 20)
        client.wait_notification(lambda m: m.get("method") == "stand.connected", 30)
        client.notifications.clear()
        client.wait_notification(lambda m: m.get("method") == "tracking.state" and m["params"]["subjects"], 60)
        assert stop(camera) == 0
        stats = json.loads((tmp_path / "stats.json").read_text())
        assert stats["connections"] == 1, stats
    finally:
        if camera is not None and camera.poll() is None:
            camera.kill()
        rig.stop()
