"""The lost-subject policy, sweeps and tours through the real dockd and dock-sim: a camera written
in test_tracking (Scene) streams what it sees at 20 Hz while its subject leaves and comes back;
each test waits for dockd's tracking.phase notifications (with generous deadlines), never for a
fixed time. Bad values are refused with data.field; dockctl reaches each method."""
import math
import subprocess
import time

from conftest import BIN, Rig
from test_tracking import Scene


def phases(c):
    """The tracking.phase notifications kept so far, in order (they stay kept)."""
    return [m["params"]["phase"] for m in c.notifications if m.get("method") == "tracking.phase"]


def stream_until(scene, phase, timeout=20):
    """Streams the scene's frames until dockd says the stand is in `phase`; the seconds it took."""
    start = time.monotonic()
    while phase not in phases(scene.c):
        assert time.monotonic() - start < timeout, f"no phase {phase} within {timeout} s: {phases(scene.c)}"
        scene.run(0.1)
    return time.monotonic() - start


def wait_phase(c, phase, timeout=20):
    if phase not in phases(c):
        c.notifications.append(c.wait_notification(lambda m: m.get("method") == "tracking.phase" and m["params"]["phase"] == phase, timeout))


def save_preset(c, name, yaw, pitch):
    """Turns the stand to (yaw, pitch) and saves it as `name`. A move that fails for want of FEEDBACK
    is made again, once, as in test_presets: beside the other builds on a 2-core machine dock-sim is
    sometimes not scheduled for a quarter second, and dockd rightly stops the stand."""
    c.result("subscribe", {"topics": ["motion"]})
    for attempt in range(2):
        reply = c.result("motion.orient", {"yaw": yaw, "pitch": pitch, "duration": 1})
        done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == reply["id"]
                                   and m["params"]["state"] != "running", timeout=15)["params"]
        if done["state"] == "completed":
            return c.result("preset.save", {"name": name})
        assert attempt == 0 and "no feedback" in (done.get("reason") or ""), done
        c.wait_notification(lambda m: m.get("method") == "motion.state", timeout=5)  # the stand reports again
    raise AssertionError("unreachable")


def framing(rig, policy):
    """A client that saved the preset `stage`, set `policy`, and frames a subject at yaw 0.3."""
    c = rig.client()
    rig.connected_stand(c)
    stage = save_preset(c, "stage", -0.4, 0.0)
    save_preset(c, "start", 0.1, 0.0)  # the subject in view
    c.result("subscribe", {"topics": ["events"]})
    c.result("tracking.lost_policy", policy)
    subject = {"yaw": 0.3, "pitch": 0.05}
    scene = Scene(c, [subject])
    scene.run(4)
    yaw, _ = scene.aim()
    assert abs(yaw - 0.3) < 0.1, f"framing the subject: yaw {yaw:.3f}"
    assert c.result("tracking.get")["phase"] == "tracking"
    return c, scene, stage


def test_a_subject_that_leaves_for_good_is_given_up_for_the_preset(rig):
    c, scene, stage = framing(rig, {"policy": "preset", "after": 1.5, "preset": "stage"})
    scene.subjects = []
    seconds = stream_until(scene, "at-preset", timeout=20)
    yaw, pitch = scene.aim()
    assert abs(yaw - stage["yaw"]) < 0.02 and abs(pitch - stage["pitch"]) < 0.02, (yaw, pitch, stage)
    assert phases(c) == ["lost-holding", "returning", "at-preset"]
    print(f"left for good: at the preset {seconds:.1f} s after the subject left (after 1.5 s, 0.7 rad away)")
    control = c.result("stand.get")["control"]
    assert control["lost_policy"] == {"policy": "preset", "after": 1.5, "preset": "stage", "search_seconds": 0}


def test_a_subject_that_comes_back_during_the_search_is_tracked_again(rig):
    c, scene, _ = framing(rig, {"policy": "search", "after": 0.5, "search_seconds": 30, "preset": "stage"})
    subject = scene.subjects[0]
    scene.subjects = []
    stream_until(scene, "lost-searching", timeout=10)
    scene.subjects = [subject]
    seconds = stream_until(scene, "tracking", timeout=15)
    print(f"leaves and re-enters: tracking again {seconds:.1f} s after the subject came back")
    deadline = time.monotonic() + 10  # framing it again: streamed until the camera is on it
    while abs(scene.aim()[0] - 0.3) >= 0.1:
        assert time.monotonic() < deadline, f"not framing the subject again: yaw {scene.aim()[0]:.3f}; phases {phases(c)}"
        scene.run(0.1)


def test_a_sweep_turns_at_its_rate_between_its_ends_until_stopped(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["events", "motion"], "motion_rate": 50})
    c.result("sweep.start", {"from": -0.3, "to": 0.3, "rate": 0.4, "repeat": True})
    wait_phase(c, "sweeping")
    pan = c.result("stand.get")["control"]["pan"]
    assert pan == {"kind": "sweep", "from": -0.3, "to": 0.3, "rate": 0.4, "repeat": True}
    turns, previous, seen, speeds = 0, 0.0, [], []
    deadline = time.monotonic() + 20
    while turns < 3:
        assert time.monotonic() < deadline, f"turned back {turns} times"
        state = c.wait_notification(lambda m: m.get("method") == "motion.state", timeout=5)["params"]
        speed = state["velocities"]["yaw"]
        if abs(speed) > 0.3:  # moving at the sweep's rate: a direction opposite to the last such is a turn
            if speed * previous < 0:
                turns += 1
            previous = speed
        if turns:  # from the first turn on: the sweep itself, not the way to its start
            seen.append(state["positions"]["yaw"])
            speeds.append(abs(speed))
    assert -0.36 < min(seen) and max(seen) < 0.36, (min(seen), max(seen))
    steady = [s for s in speeds if s > 0.3]
    assert max(steady) < 0.42, max(steady)
    print(f"sweep at 0.4 rad/s between ±0.3 rad: {min(seen):.3f}…{max(seen):.3f} rad, fastest {max(steady):.3f} rad/s")
    c.result("sweep.stop")
    wait_phase(c, "tracking")
    assert c.result("stand.get")["control"]["pan"] is None


def test_a_tour_visits_its_presets_and_the_lease_end_reverts(rig):
    c = rig.client()
    rig.connected_stand(c)
    save_preset(c, "left", 0.5, 0.1)
    save_preset(c, "right", -0.5, -0.1)
    watcher = rig.client()
    watcher.result("subscribe", {"topics": ["events"]})
    c.result("tour.start", {"stops": [{"preset": "left", "dwell": 1}, {"preset": "right", "dwell": 1}], "repeat": True})
    wait_phase(watcher, "touring")
    stops = set()
    deadline = time.monotonic() + 20
    while stops != {0, 1}:
        assert time.monotonic() < deadline, stops
        stops.add(watcher.result("stand.get")["control"]["pan"]["stop"])
        time.sleep(0.2)  # polls stand.get until both stops were seen, within the deadline
    c.close()
    wait_phase(watcher, "tracking")
    assert watcher.result("stand.get")["control"]["pan"] is None


def test_bad_values_are_refused_with_their_field(rig):
    c = rig.client()
    rig.connected_stand(c)

    def refused(method, params):
        reply = c.call(method, params)
        assert "error" in reply, reply
        return reply["error"]["code"], reply["error"].get("data", {}).get("field")

    assert refused("tracking.lost_policy", {"policy": "preset", "preset": "nowhere"}) == (-32003, "preset")
    assert refused("tracking.lost_policy", {"policy": "wander"}) == (-32602, "policy")
    assert refused("tracking.lost_policy", {"policy": "hold", "preset": "home"}) == (-32003, "preset")
    assert refused("tracking.lost_policy", {"policy": "search", "after": -1}) == (-32602, "after")
    assert refused("sweep.start", {"from": 0.2, "to": 0.2, "rate": 0.1}) == (-32003, "to")
    assert refused("sweep.start", {"from": 0, "to": 1, "rate": 0}) == (-32602, "rate")
    assert refused("tour.start", {"stops": []}) == (-32602, "stops")
    assert refused("tour.start", {"stops": [{"preset": "home", "dwell": 1}, {"preset": "gone", "dwell": 1}]}) == (-32003, "stops[1].preset")
    assert refused("tour.start", {"stops": [{"preset": "home"}]}) == (-32602, "stops[0].dwell")


def test_the_custom_button_starts_and_ends_the_configured_sweep(tmp_path):
    config = tmp_path / "dockd.conf"
    (tmp_path / "state").mkdir()
    config.write_text(f'[daemon]\nstate_directory = "{tmp_path / "state"}"\n[sweep]\nbutton = 3\nfrom_deg = -20\nto_deg = 20\nrate_deg_s = 10\n')
    rig = Rig(tmp_path, dockd_config=config)
    try:
        c = rig.client()
        rig.connected_stand(c)
        c.result("subscribe", {"topics": ["events"]})
        rig.sim_command("button 3 press")
        wait_phase(c, "sweeping")
        rig.sim_command("button 3 release")
        rig.sim_command("button 3 press")
        wait_phase(c, "tracking")
        assert phases(c) == ["sweeping", "tracking"]
    finally:
        rig.stop()


def dockctl(rig, *args):
    return subprocess.run([str(BIN / "dockctl"), *args, "--socket", str(rig.socket_path)], capture_output=True, text=True, timeout=30)


def test_dockctl_sets_the_policy_and_names_a_bad_preset(rig):
    c = rig.client()
    rig.connected_stand(c)
    bad = dockctl(rig, "lost-policy", "preset", "--preset", "nowhere")
    assert bad.returncode != 0 and "no preset 'nowhere'" in bad.stderr, bad
    good = dockctl(rig, "lost-policy", "search", "--after", "2", "--json")
    assert good.returncode == 0 and '"ok":true' in good.stdout.replace(" ", ""), good
    tour = dockctl(rig, "tour", "start", "home")
    assert tour.returncode != 0 and "PRESET:DWELL" in tour.stderr, tour
