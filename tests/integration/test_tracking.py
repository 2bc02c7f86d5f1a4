"""System tracking through the real daemon, closed loop: a pinhole camera written here sees fixed
subjects from wherever the simulated stand points (read from dockd's motion stream), and feeds
what it sees back as observations at 20 Hz."""
import math
import time

import pytest

from conftest import Rig

HFOV, VFOV = 1.2, 0.75  # radians


class Scene:
    """Subjects at fixed world angles (yaw positive left, pitch positive up), seen by a camera on
    the stand. Boxes are normalized with an upper-left origin. The camera points where `pose()` says
    (yaw, pitch now) when the test can read the emulated head itself, else where dockd last reported
    (a simulated stand reporting at 100 Hz: a few ms old)."""

    def __init__(self, client, subjects, pose=None):
        self.c = client
        self.subjects = subjects
        self.pose = pose
        self.c.result("camera.set", {"camera": {"horizontal_fov": HFOV, "vertical_fov": VFOV}})
        self.c.result("subscribe", {"topics": ["motion"], "motion_rate": 50})

    def aim(self):
        if self.pose:
            return self.pose()
        p = self.c.latest("motion.state")["params"]["positions"]
        return p["yaw"], p["pitch"]

    @staticmethod
    def project(yaw, pitch, aim):
        u = 0.5 - math.tan(yaw - aim[0]) / (2 * math.tan(HFOV / 2))
        v = 0.5 - math.tan(pitch - aim[1]) / (2 * math.tan(VFOV / 2))
        return u, v

    def frame(self):
        aim = self.aim()
        stamp = time.monotonic()
        observations = []
        for s in self.subjects:
            u, v = self.project(s["yaw"], s["pitch"], aim)
            if not (0 < u < 1 and 0 < v < 1):
                continue
            w, h = 0.12, 0.45
            observations.append({"kind": "body", "rect": {"x": u - w / 2, "y": v - h / 2, "width": w, "height": h},
                                 "confidence": 0.95})
            # The face sits in the top of the body; speaking and attention are read from faces.
            observations.append({"kind": "face", "rect": {"x": u - 0.03, "y": v - h / 2 + 0.02, "width": 0.06, "height": 0.09},
                                 "confidence": 0.9, "speaking_confidence": s.get("speaking", 0.0),
                                 "looking_at_camera_confidence": 0.8})
        return self.c.call("tracking.observe", {"observations": observations, "origin": "upper_left", "timestamp": stamp})

    def run(self, seconds, rate=20):
        replies = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            start = time.monotonic()
            replies.append(self.frame())
            time.sleep(max(0, 1 / rate - (time.monotonic() - start)))
        return replies

    def image_position(self, subject):
        return self.project(subject["yaw"], subject["pitch"], self.aim())

    def centring(self, subject, seconds, within=0.05):
        """Tracks for `seconds`, looking every 0.25 s: each look's time and the subject's horizontal
        distance from the image's centre (|u - 0.5|), and the time of the first within `within`
        (None: never)."""
        started = time.monotonic()
        errors = []
        while time.monotonic() - started < seconds:
            self.run(0.25)
            errors.append((time.monotonic() - started, abs(self.image_position(subject)[0] - 0.5)))
        return errors, next((t for t, e in errors if e < within), None)


def test_center_framing_turns_the_stand_to_the_subject(rig):
    c = rig.client()
    rig.connected_stand(c)
    subject = {"yaw": 0.5, "pitch": 0.1}
    scene = Scene(c, [subject])
    c.result("tracking.framing", {"mode": "center"})
    replies = scene.run(4)
    assert all("result" in r for r in replies[2:]), [r for r in replies if "error" in r][:3]
    u, v = scene.image_position(subject)
    assert abs(u - 0.5) < 0.06, f"subject at u={u:.3f} after 4 s of center framing"
    yaw, _ = scene.aim()
    assert abs(yaw - 0.5) < 0.1


@pytest.mark.parametrize("mode, yaw, third", [("left", -0.3, 1 / 3), ("right", 0.3, 2 / 3)])
def test_left_and_right_framing_put_the_subject_on_that_third(rig, mode, yaw, third):
    c = rig.client()
    rig.connected_stand(c)
    subject = {"yaw": yaw, "pitch": 0.0}
    scene = Scene(c, [subject])
    c.result("tracking.framing", {"mode": mode})
    scene.run(4)
    u, _ = scene.image_position(subject)
    assert abs(u - third) < 0.07, f"subject at u={u:.3f}, the {mode} third is {third:.3f}"


def test_a_region_of_interest_keeps_the_subject_inside_it(rig):
    c = rig.client()
    rig.connected_stand(c)
    subject = {"yaw": 0.0, "pitch": 0.0}
    scene = Scene(c, [subject])
    c.result("tracking.framing", {"mode": "center"})
    roi = {"x": 0.05, "y": 0.2, "width": 0.3, "height": 0.6}  # the left part of the frame
    c.result("tracking.roi", {"rect": roi})
    scene.run(4)
    u, v = scene.image_position(subject)
    assert roi["x"] < u < roi["x"] + roi["width"], f"subject at u={u:.3f}, outside the ROI's {roi}"
    assert abs(u - (roi["x"] + roi["width"] / 2)) < 0.08, f"centered in the ROI: u={u:.3f}"
    # The whole frame again: the subject comes back to the center.
    c.result("tracking.roi", {"rect": {"x": 0, "y": 0, "width": 1, "height": 1}})
    scene.run(3)
    u, _ = scene.image_position(subject)
    assert abs(u - 0.5) < 0.07, f"subject at u={u:.3f} after the ROI was reset"


def test_a_still_subject_gets_a_still_camera(rig):
    c = rig.client()
    rig.connected_stand(c)
    subject = {"yaw": 0.2, "pitch": 0.0}
    scene = Scene(c, [subject])
    c.result("tracking.framing", {"mode": "center"})
    scene.run(3)
    before = scene.aim()
    scene.run(2)
    after = scene.aim()
    assert abs(after[0] - before[0]) < 0.01, f"camera hunted on a still subject: {before} -> {after}"


def test_selection_state_stream_and_overrides(rig):
    c = rig.client()
    rig.connected_stand(c)
    speaker = {"yaw": 0.15, "pitch": 0.0, "speaking": 0.95}
    listener = {"yaw": -0.15, "pitch": 0.0, "speaking": 0.0}
    scene = Scene(c, [speaker, listener])
    c.result("subscribe", {"topics": ["tracking"]})
    scene.run(2)
    state = c.latest("tracking.state")["params"]
    assert len(state["subjects"]) == 2
    ranks = sorted(state["subjects"], key=lambda s: s["saliency_rank"])
    assert [s["saliency_rank"] for s in ranks] == [1, 2]
    assert ranks[0]["speaking_confidence"] > ranks[1]["speaking_confidence"], "the speaker ranks first"
    # Select the listener by id: it becomes the one selected.
    chosen = ranks[1]["id"]
    assert c.result("tracking.select", {"ids": [chosen]})["ids"] == [chosen]
    scene.run(1)
    selected = [s["id"] for s in c.latest("tracking.state")["params"]["subjects"] if s["selected"]]
    assert selected == [chosen]
    # A point on the speaker selects the speaker.
    u, v = scene.image_position(speaker)
    assert len(c.result("tracking.select", {"x": u, "y": v})["ids"]) == 1
    scene.run(1)
    selected = [s for s in c.latest("tracking.state")["params"]["subjects"] if s["selected"]]
    assert [s["id"] for s in selected] == [ranks[0]["id"]], "the subject under the point is the one selected"
    # A point where nobody is: no subject found. Back to automatic with an empty list.
    assert c.call("tracking.select", {"x": 0.02, "y": 0.02})["error"]["code"] == -32006
    assert c.result("tracking.select", {"ids": []})["ids"] == []
    assert c.call("tracking.select", {"ids": ["not-an-id"]})["error"]["code"] == -32003


def test_frame_rates_outside_10_to_30_hz_are_refused(rig):
    c = rig.client()
    rig.connected_stand(c)
    scene = Scene(c, [{"yaw": 0.0, "pitch": 0.0}])
    fast = [scene.frame() for _ in range(12)]
    assert any(r.get("error", {}).get("code") == -32004 for r in fast), "bursts faster than 30 Hz"
    time.sleep(1.2)  # a pause starts a new stream
    slow = scene.run(1.5, rate=4)
    assert any(r.get("error", {}).get("code") == -32005 for r in slow), "4 Hz is too slow"
    # A stream that pauses for less than a second and goes on at 20 Hz loses no frame.
    time.sleep(1.2)
    scene.run(1, rate=20)
    time.sleep(0.6)
    resumed = scene.run(1, rate=20)
    assert all("result" in r for r in resumed), [r["error"] for r in resumed if "error" in r]


def test_vision_origin_and_portrait_orientation_are_turned_upright(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("camera.set", {"camera": {"horizontal_fov": HFOV, "vertical_fov": VFOV}})
    for _ in range(6):
        # Upright, upper-left: a body in the upper-left quadrant. In Vision's lower-left origin
        # that rect has y = 1 - 0.1 - 0.3 = 0.6; in a portrait buffer (upright turned 90° clockwise)
        # it sits at x' = 1 - (y + h) = 0.6, y' = x = 0.1 with width and height swapped.
        c.result("tracking.observe", {"observations": [{"kind": "body", "rect": {"x": 0.6, "y": 0.1, "width": 0.3, "height": 0.1}}],
                                      "origin": "upper_left", "orientation": "portrait"})
        time.sleep(0.06)
    rect = c.result("tracking.get")["subjects"][0]["rect"]
    assert rect["x"] < 0.5 and rect["y"] < 0.5, rect


def test_animation_pauses_tracking_and_it_resumes(rig):
    c = rig.client()
    rig.connected_stand(c)
    subject = {"yaw": 0.4, "pitch": 0.0}
    scene = Scene(c, [subject])
    c.result("tracking.framing", {"mode": "center"})
    scene.run(2)
    nod = c.result("animation.play", {"name": "yes"})
    replies = scene.run(2.5)
    done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == nod["id"]
                               and m["params"]["state"] != "running", timeout=5)
    assert done["params"]["state"] == "completed", "tracking did not pre-empt the animation"
    scene.run(2)
    u, _ = scene.image_position(subject)
    assert abs(u - 0.5) < 0.08, "tracking resumed after the animation"


def test_led_blinks_while_the_subject_is_in_frame(rig):
    c = rig.client()
    rig.connected_stand(c)
    scene = Scene(c, [{"yaw": 0.0, "pitch": 0.0}])
    scene.run(2)
    log = rig.sim_log()
    leds = [line for line in log.splitlines() if " in " in line and "LED mode" in line]
    assert any("LED mode 2" in line for line in leds), leds


def test_flip_turns_the_stand_half_a_turn(rig):
    c = rig.client()
    rig.connected_stand(c)
    scene = Scene(c, [])
    start = scene.aim()[0]
    rig.sim_command("press flip")
    time.sleep(3)
    yaw = scene.aim()[0]
    assert abs(abs(yaw - start) - math.pi) < 0.05, f"yaw {start:.3f} -> {yaw:.3f}"


@pytest.mark.parametrize("behaviour", ["home", "hold"])
def test_a_lost_subject_is_held_then_the_configured_lost_behaviour_runs(tmp_path, behaviour):
    # The rig's dockd reads this (missing by default) configuration file.
    (tmp_path / "none.conf").write_text(f'[tracking]\nlost_behaviour = "{behaviour}"\n')
    rig = Rig(tmp_path)
    try:
        c = rig.client()
        rig.connected_stand(c)
        subject = {"yaw": 0.5, "pitch": 0.0}
        scene = Scene(c, [subject])
        c.result("tracking.framing", {"mode": "center"})
        scene.run(3)
        tracked = scene.aim()[0]
        assert abs(tracked - 0.5) < 0.1
        scene.subjects = []  # gone; the camera keeps sending (empty) frames
        scene.run(1.5)
        assert abs(scene.aim()[0] - tracked) < 0.03, "the stand should hold while the subject's track is kept"
        scene.run(4.5)
        yaw = scene.aim()[0]
        if behaviour == "home":
            assert abs(yaw) < 0.1, f"not home 6 s after the subject left: yaw {yaw:.3f}"
        else:
            assert abs(yaw - tracked) < 0.03, f"moved from {tracked:.3f} to {yaw:.3f} with lost_behaviour = hold"
    finally:
        rig.stop()

