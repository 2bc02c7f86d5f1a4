"""Optical zoom through the real daemon (issue 25): dock-sim with a zoom axis (protocol 1.1), a
pinhole camera written here whose field of view follows the zoom dockd reports, and framing's shot
keeping the subject's face at the shot's size."""
import math
import re
import subprocess
import time

from conftest import BIN, Rig, wait_for

HFOV, VFOV = 1.2, 0.75  # radians, at the widest zoom
HEAD_FACE = 0.35  # ShotSettings.headFace: the face's share of the frame's height in a head shot


class ZoomScene:
    """One subject at fixed world angles; its face is `face` rad tall. The camera points and zooms
    where dockd's motion stream says."""

    def __init__(self, client, yaw, pitch, face=0.05):
        self.c, self.yaw, self.pitch, self.face = client, yaw, pitch, face
        self.c.result("camera.set", {"camera": {"horizontal_fov": HFOV, "vertical_fov": VFOV}})
        self.c.result("subscribe", {"topics": ["motion"], "motion_rate": 50})

    def pose(self):
        p = self.c.latest("motion.state")["params"]["positions"]
        return p["yaw"], p["pitch"], p.get("zoom", 1.0)

    def face_rect(self):
        yaw, pitch, zoom = self.pose()
        half_w, half_h = math.tan(HFOV / 2) / zoom, math.tan(VFOV / 2) / zoom
        u = 0.5 - math.tan(self.yaw - yaw) / (2 * half_w)
        top = 0.5 - math.tan(self.pitch + self.face / 2 - pitch) / (2 * half_h)
        bottom = 0.5 - math.tan(self.pitch - self.face / 2 - pitch) / (2 * half_h)
        width = (bottom - top) * 0.75
        return {"x": u - width / 2, "y": top, "width": width, "height": bottom - top}

    def run(self, seconds, rate=20):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            start = time.monotonic()
            face = self.face_rect()
            inside = 0 < face["x"] and face["x"] + face["width"] < 1 and 0 < face["y"] and face["y"] + face["height"] < 1
            observations = [{"kind": "face", "rect": face, "confidence": 0.9}] if inside else []
            self.c.call("tracking.observe", {"observations": observations, "origin": "upper_left", "timestamp": start})
            time.sleep(max(0, 1 / rate - (time.monotonic() - start)))


def zoom_rig(tmp_path):
    """dock-sim with a zoom, on a Unix socket: beside a CPU hog the zoom never reached 3x within
    10 s in 2 of 4 runs on a pty (starved tty work, conftest.Rig), 0 of 5 on the socket."""
    return Rig(tmp_path, sim_args=("--zoom", "8", "--zoom-speed", "2"), link="unix")


def test_a_zoom_stand_declares_and_reports_its_zoom(tmp_path):
    rig = zoom_rig(tmp_path)
    try:
        c = rig.client()
        rig.connected_stand(c)
        axes = {a["axis"]: a for a in c.result("stand.get")["capabilities"]["axes"]}
        assert (axes["zoom"]["min"], axes["zoom"]["max"]) == (1.0, 8.0)
        c.result("subscribe", {"topics": ["motion"]})
        assert abs(c.latest("motion.state")["params"]["positions"]["zoom"] - 1.0) < 0.01  # wide at power-up
        watched = subprocess.run([str(BIN / "dockctl"), "watch", "motion", "--rate", "5", "--seconds", "1", "--socket", str(rig.socket_path)],
                                 capture_output=True, text=True, timeout=30).stdout.splitlines()
        # Wide, within the feedback's noise (a line read 0.999x once: the check for " zoom 1" failed).
        zooms = [float(re.search(r" zoom (\d+\.\d+)×", line).group(1)) for line in watched]
        assert zooms and all(abs(z - 1.0) < 0.01 for z in zooms), watched
        c.result("tracking.set", {"enabled": False})
        c.result("motion.orient", {"zoom": 3.0})
        wait_for(lambda: abs(c.latest("motion.state")["params"]["positions"]["zoom"] - 3.0) < 0.02, 10, "zoom at 3x")
        beyond = c.call("motion.orient", {"zoom": 9.0})["error"]  # beyond the tele end
        assert beyond["code"] == -32003
        # A magnification, not an angle.
        assert "zoom target 9.000× is outside the limits 1.000…8.000×" in beyond["message"], beyond

        # The preset keeps the zoom measured when it was saved (within 0.02 of the 3× asked for, as
        # waited above); the recall comes back to that saved zoom, not to 3× exactly.
        saved = c.result("preset.save", {"name": "tele"})["zoom"]
        assert abs(saved - 3.0) < 0.02
        c.result("motion.orient", {"zoom": 1.5})
        wait_for(lambda: abs(c.latest("motion.state")["params"]["positions"]["zoom"] - 1.5) < 0.02, 10, "zoom at 1.5x")
        c.result("preset.recall", {"name": "tele"})
        wait_for(lambda: abs(c.latest("motion.state")["params"]["positions"]["zoom"] - saved) < 0.01, 10, "the preset's zoom")
    finally:
        rig.stop()


def test_a_stand_without_zoom_refuses_a_zoom_and_takes_a_shot_that_changes_nothing(rig):
    c = rig.client()
    rig.connected_stand(c)
    assert c.call("motion.orient", {"zoom": 2.0})["error"]["code"] == -32002
    c.result("tracking.framing", {"shot": "upper_body"})
    assert c.result("stand.get")["control"]["shot"] == "upper_body"


def test_a_head_shot_zooms_in_until_the_face_is_its_size_and_a_zoom_limit_holds_it(tmp_path):
    rig = zoom_rig(tmp_path)
    try:
        c = rig.client()
        rig.connected_stand(c)
        scene = ZoomScene(c, yaw=0.2, pitch=0.0)
        c.result("tracking.framing", {"shot": "head"})
        assert c.result("stand.get")["control"]["shot"] == "head"
        scene.run(8)
        yaw, _, zoom = scene.pose()
        assert zoom > 3, zoom
        assert abs(scene.face_rect()["height"] / HEAD_FACE - 1) < 0.15, scene.face_rect()
        assert abs(yaw - 0.2) < 0.05, yaw  # the tracker's angles stayed right while zooming

        c.result("motion.limits", {"axes": {"zoom": {"max": 2.0}}})
        scene.run(4)
        assert scene.pose()[2] <= 2.05
    finally:
        rig.stop()
