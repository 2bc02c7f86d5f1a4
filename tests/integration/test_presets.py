"""Presets through the real dockd: saved from the measured pose, recalled as a motion.orient is (a
motion id, leased, cancellable), kept in the state directory across a restart of dockd and a
stand's reconnect, on the native stand (dock-sim) and on a VISCA camera (tests/peers/visca_camera.py).
Recall must be repeatable to 0.1°: each test prints the worst miss it measured (BENCHMARKS.md)."""
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BIN, Client, Rig, wait_for

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
import visca_camera as vc  # noqa: E402

TENTH_OF_A_DEGREE = math.radians(0.1)
GENERIC = ROOT / "profiles" / "visca" / "generic-ptzoptics.json"
ELSEWHERE = [{"yaw": -0.6, "pitch": -0.2}, {"yaw": 0.9, "pitch": 0.3}, {"yaw": 0.05, "pitch": -0.35}, {"yaw": -0.2, "pitch": 0.4}]


@pytest.fixture
def rig(tmp_path):
    """dock-sim on a Unix socket, not a pty: beside two CPU hogs (load 16) the kernel's tty work,
    starved, held FEEDBACK back for over 250 ms and dockd rightly failed the motion ('no feedback
    from the stand for 0.853 s'), in 3 runs of 3; on a socket 0 of 3. Presets are what is tested
    here; the pty link is tested elsewhere (test_dockd, test_dock_sim)."""
    r = Rig(tmp_path, link="unix")
    yield r
    r.stop()


def dockctl(socket_path, *args):
    return subprocess.run([str(BIN / "dockctl"), *args, "--socket", str(socket_path)], capture_output=True, text=True, timeout=60)


def finish(c, started, timeout=20):
    """Waits for the motion `started` answered to end; its final state."""
    done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == started["id"]
                               and m["params"]["state"] != "running", timeout=timeout)
    return done["params"]["state"] + (f": {done['params']['reason']}" if done["params"].get("reason") else "")


def move(c, method, params):
    """Runs a motion to its end. One that fails for want of FEEDBACK is run again, once: beside
    the other builds on a 2-core machine dock-sim is sometimes not scheduled for a quarter second,
    and dockd rightly stops the stand; that says nothing about presets."""
    for attempt in range(2):
        reply = c.call(method, params)
        assert "error" not in reply, reply
        state = finish(c, reply["result"])
        if not state.startswith("failed: no feedback") or attempt:
            assert state == "completed", (method, params, state)
            return
        time.sleep(0.6)  # the 2 orientation calls per second allowed: the retry must not be refused for rate


def settled(c, timeout=10):
    """The measured pose once the stand has come to rest: the mean of ten motion.state in a row
    that agree to 0.05° (an encoder's last count flickers; a pose read mid-settle would make a
    good recall look bad, or the reverse). Only states dockd stamped from now on count: on a busy
    machine the socket still held a second of them from before the motion (`time` is dockd's
    CLOCK_MONOTONIC, as time.monotonic())."""
    c.notifications = [m for m in c.notifications if m.get("method") != "motion.state"]
    since = time.monotonic()
    deadline = since + timeout
    recent = []
    while time.monotonic() < deadline:
        state = c.wait_notification(lambda m: m.get("method") == "motion.state" and m["params"]["time"] >= since, timeout=5)
        recent = (recent + [state["params"]["positions"]])[-10:]
        if len(recent) == 10 and all(max(p[a] for p in recent) - min(p[a] for p in recent) < math.radians(0.05) for a in ("yaw", "pitch")):
            return {a: sum(p[a] for p in recent) / len(recent) for a in ("yaw", "pitch")}
    raise AssertionError(f"the stand did not come to rest: {recent[-3:]}")


def miss(pose, preset):
    return max(abs(pose["yaw"] - preset["yaw"]), abs(pose["pitch"] - preset["pitch"]))


def recall_misses(c, name, preset, times=len(ELSEWHERE)):
    """Sends the stand elsewhere and back to `name`, `times` times; each miss, rad."""
    misses = []
    for away in ELSEWHERE[:times]:
        move(c, "motion.orient", {**away, "duration": 1})
        move(c, "preset.recall", {"name": name, "duration": 1})
        misses.append(miss(settled(c), preset))
    return misses


def test_a_preset_is_recalled_to_a_tenth_of_a_degree_and_kept_across_a_restart_of_dockd(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 50})
    move(c, "motion.orient", {"yaw": 0.5, "pitch": 0.2, "duration": 1})
    here = settled(c)
    saved = dockctl(rig.socket_path, "preset", "save", "stage", "--json")
    assert saved.returncode == 0, saved.stderr
    printed = json.loads(saved.stdout)
    stage = {p["name"]: p for p in c.result("preset.list")}["stage"]
    assert printed["name"] == "stage" and printed["saved"] is True and printed["zoom"] is None
    assert abs(printed["yaw"] - stage["yaw"]) < 1e-6, "dockctl prints the float32 the stand measured"
    assert miss(here, stage) < math.radians(0.05), "saved from the measured pose (its last count flickers)"
    before = recall_misses(c, "stage", stage)
    print(f"\nnative (dock-sim): {len(before)} recalls from elsewhere, worst miss {math.degrees(max(before)):.4f}°")
    assert max(before) < TENTH_OF_A_DEGREE, [math.degrees(m) for m in before]
    stored = json.loads((rig.tmp / "state" / "presets.json").read_text())
    assert stored["stands"]["SIM-0001"]["stage"]["yaw"] == stage["yaw"]

    rig.restart_dockd()
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 50})
    listed = {p["name"]: p for p in c.result("preset.list")}
    assert listed["stage"] == stage
    move(c, "motion.orient", {"yaw": -0.7, "pitch": -0.3, "duration": 1})
    c.result("lease.release")  # dockctl's connection takes the stand
    went = dockctl(rig.socket_path, "preset", "go", "stage")
    assert went.returncode == 0 and "completed" in went.stdout, (went.stdout, went.stderr)
    after = miss(settled(c), stage)
    print(f"native (dock-sim), after a restart of dockd: miss {math.degrees(after):.4f}°")
    assert after < TENTH_OF_A_DEGREE


def test_presets_are_kept_across_a_reconnect_of_the_stand(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["motion", "stands"], "motion_rate": 50})
    move(c, "motion.orient", {"yaw": -0.3, "pitch": 0.1, "duration": 1})
    desk = c.result("preset.save", {"name": "desk"})
    rig.sim_command("unplug 0.5")
    c.wait_notification(lambda m: m.get("method") == "stand.disconnected", timeout=5)
    assert c.call("preset.recall", {"name": "desk"})["error"]["code"] == -32001, "no stand to turn while it is away"
    c.wait_notification(lambda m: m.get("method") == "stand.connected", timeout=15)
    move(c, "motion.orient", {"yaw": 0.4, "pitch": -0.1, "duration": 1})
    move(c, "preset.recall", {"name": "desk"})
    assert miss(settled(c), desk) < TENTH_OF_A_DEGREE


def test_home_is_the_home_pose_until_a_client_saves_its_own(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 50})
    assert c.result("preset.list") == [{"name": "home", "yaw": 0, "pitch": 0, "zoom": None, "camera": None, "saved": False}]
    move(c, "motion.orient", {"yaw": 0.6, "pitch": -0.25, "duration": 1})
    move(c, "preset.recall", {"name": "home", "duration": 1})
    assert miss(settled(c), {"yaw": 0, "pitch": 0}) < TENTH_OF_A_DEGREE
    move(c, "motion.orient", {"yaw": 0.3, "pitch": 0.1, "duration": 1})
    mine = c.result("preset.save", {"name": "home"})
    assert mine["saved"] is True and abs(mine["yaw"] - 0.3) < 0.01
    assert c.result("preset.delete", {"name": "home"}) == {"ok": True}
    assert c.result("preset.list")[0]["saved"] is False, "the built-in home again"
    gone = c.call("preset.delete", {"name": "home"})["error"]
    assert gone["code"] == -32003 and gone["data"]["field"] == "name", gone
    listed = dockctl(rig.socket_path, "preset", "list")
    assert listed.returncode == 0 and listed.stdout == "home: yaw 0, pitch 0 rad (built in)\n", listed


def test_bad_names_are_refused_with_the_field_and_a_missing_preset_is_an_error(rig):
    c = rig.client()
    rig.connected_stand(c)
    for method in ("preset.save", "preset.recall", "preset.delete"):
        for name in ("", "a/b", "x" * 33, "-rf", "é", 5, None):
            reply = c.call(method, {} if name is None else {"name": name})
            assert reply["error"]["code"] == -32602 and reply["error"]["data"]["field"] == "name", (method, name, reply)
    for method in ("preset.recall", "preset.delete"):
        missing = c.call(method, {"name": "nowhere"})["error"]
        assert missing["code"] == -32003 and missing["data"]["field"] == "name" and "nowhere" in missing["message"], missing
    assert c.call("preset.list", {"stand": "NO-SUCH"})["error"]["code"] == -32001
    refused = dockctl(rig.socket_path, "preset", "go", "nowhere")
    assert refused.returncode == 2 and "no preset 'nowhere'" in refused.stderr, refused
    assert c.result("preset.save", {"name": "x" * 32})["name"] == "x" * 32


def test_recall_is_leased_refused_and_cancelled_as_motion_orient_is(rig):
    a, b = rig.client(), rig.client()
    rig.connected_stand(a)
    a.result("subscribe", {"topics": ["motion"], "motion_rate": 50})
    a.result("preset.save", {"name": "door"})
    move(a, "motion.orient", {"yaw": 1.0, "duration": 1})
    busy = b.call("preset.recall", {"name": "door"})["error"]
    assert busy["code"] == -32008 and busy["data"]["holder_client"] is not None, busy
    taken = b.result("preset.recall", {"name": "door", "duration": 3, "force": True})
    a.result("motion.stop")
    held = b.call("preset.recall", {"name": "home"})["error"]
    assert held["code"] == -32009 and "stopped_by_client" in held["data"], held
    b.result("motion.resume")
    started = b.result("preset.recall", {"name": "door", "duration": 3})
    assert started["id"] > taken["id"]
    b.result("motion.cancel", {"id": started["id"]})
    assert finish(a, started).startswith("cancelled")


# -- a VISCA camera (the emulator in tests/peers), configured as a user would, with its state directory

class ViscaDockd:
    def __init__(self, tmp_path, link):
        self.state = tmp_path / "state"
        self.state.mkdir()
        self.socket = tmp_path / "d.sock"
        config = tmp_path / "dockd.conf"
        config.write_text(f'[daemon]\nstate_directory = "{self.state}"\n\n[[device]]\npath = "{link.path}"\ndriver = "visca"\n'
                          f'profile = "{GENERIC}"\nname = "ptz-1"\n')
        self.argv = [str(BIN / "dockd"), "--config", str(config), "--socket", str(self.socket), "--socket-group", "", "--no-hotplug"]
        self.log = tmp_path / "dockd.err"
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen(self.argv, stderr=open(self.log, "ab"))
        wait_for(self.socket.exists, 10, "dockd's socket")
        c = Client(self.socket)
        wait_for(lambda: any(s["state"] == "connected" for s in c.result("stands.list")), 15, "the camera")
        c.result("subscribe", {"topics": ["motion"], "motion_rate": 50})
        return c

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture
def visca(tmp_path):
    cam = vc.Camera(vc.load_profile(GENERIC))
    link = vc.PtyLink(cam).start()
    dockd = ViscaDockd(tmp_path, link)
    yield cam, dockd
    dockd.stop()
    link.stop()


def truth(cam):
    """Where the emulated camera really points, in dockd's terms (pan grows right, yaw left)."""
    pan, tilt = cam.degrees()
    return {"yaw": -math.radians(pan), "pitch": math.radians(tilt)}


def test_a_visca_camera_returns_to_its_preset_to_a_tenth_of_a_degree_and_after_a_restart(visca):
    cam, dockd = visca
    c = Client(dockd.socket)
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 50})
    move(c, "motion.orient", {"yaw": 0.4, "pitch": 0.15, "duration": 1})
    settled(c)
    stage = c.result("preset.save", {"name": "stage"})
    at_save = truth(cam)
    assert miss(at_save, stage) < TENTH_OF_A_DEGREE, (at_save, stage)
    misses, true_misses = [], []
    for away in ELSEWHERE:
        move(c, "motion.orient", {**away, "duration": 1})
        move(c, "preset.recall", {"name": "stage", "duration": 1})
        misses.append(miss(settled(c), stage))
        true_misses.append(miss(truth(cam), at_save))
    print(f"\nVISCA (emulator, generic profile): {len(misses)} recalls, worst miss {math.degrees(max(misses)):.4f}° as dockd "
          f"measures it, {math.degrees(max(true_misses)):.4f}° in the camera's own position")
    assert max(misses) < TENTH_OF_A_DEGREE and max(true_misses) < TENTH_OF_A_DEGREE, (misses, true_misses)
    c.close()

    dockd.stop()
    c = dockd.start()
    assert {p["name"]: p for p in c.result("preset.list")}["stage"] == stage
    move(c, "motion.orient", {"yaw": -0.5, "pitch": -0.2, "duration": 1})
    move(c, "preset.recall", {"name": "stage", "duration": 1})
    settled(c)
    after = miss(truth(cam), at_save)
    print(f"VISCA after a restart of dockd: miss {math.degrees(after):.4f}° in the camera's own position")
    assert after < TENTH_OF_A_DEGREE
    assert json.loads((dockd.state / "presets.json").read_text())["stands"]["ptz-1"]["stage"] == {k: stage[k] for k in ("yaw", "pitch", "zoom", "camera")}
    c.close()


def test_going_to_the_preset_the_stand_is_at_completes_at_once(rig):
    """Nowhere to go: the motion completes in the step that accepts it, and dockd sends its progress
    before the reply; `dockctl preset go` must not wait for it forever (it did: the README's
    `dockctl preset go stage` right after `dockctl stop` hung)."""
    c = rig.client()
    rig.connected_stand(c)
    c.result("motion.stop")
    c.close()
    went = dockctl(rig.socket_path, "preset", "go", "home")
    assert went.returncode == 0 and went.stdout == "motion 1 completed\n", (went.stdout, went.stderr)
