"""Body keypoints with observations (`keypoints` on a body in tracking.observe, api 1.6), through the
real dockd: refused with the field named when malformed; framing by the head they place when no face
is detected."""
import math
import time

import pytest

import openrpc_check
from test_tracking import HFOV, VFOV, Scene


def keypoints(u, top, height):
    """A frontal standing person's head and shoulders, normalized, upper-left origin: nose at u."""
    return {"nose": {"x": u, "y": top + 0.1 * height, "visibility": 0.99},
            "left_eye": {"x": u + 0.012, "y": top + 0.085 * height},
            "right_eye": {"x": u - 0.012, "y": top + 0.085 * height},
            "left_ear": {"x": u + 0.025, "y": top + 0.09 * height, "visibility": 0.9},
            "right_ear": {"x": u - 0.025, "y": top + 0.09 * height, "visibility": 0.9},
            "left_shoulder": {"x": u + 0.05, "y": top + 0.2 * height},
            "right_shoulder": {"x": u - 0.05, "y": top + 0.2 * height}}


class ArmOutScene(Scene):
    """One person whose right arm stretches out to the image's right: the body box reaches far
    right of the head, and no face detector finds the face. With `with_keypoints`, the body carries
    its keypoints."""

    def __init__(self, client, subject, with_keypoints):
        super().__init__(client, [subject])
        self.with_keypoints = with_keypoints

    def frame(self):
        (u, v), height = self.project(self.subjects[0]["yaw"], self.subjects[0]["pitch"], self.aim()), 0.5
        top = v - 0.1 * height  # the subject's angles are the nose's
        body = {"kind": "body", "rect": {"x": u - 0.06, "y": top, "width": 0.3, "height": height}, "confidence": 0.9}
        if self.with_keypoints:
            body["keypoints"] = keypoints(u, top, height)
        return self.c.call("tracking.observe", {"observations": [body], "origin": "upper_left", "timestamp": time.monotonic()})


@pytest.mark.parametrize("with_keypoints", [True, False])
def test_without_a_face_the_head_from_keypoints_is_framed(rig, with_keypoints):
    c = rig.client()
    rig.connected_stand(c)
    subject = {"yaw": 0.3, "pitch": 0.05}
    scene = ArmOutScene(c, subject, with_keypoints)
    c.result("tracking.framing", {"mode": "center"})
    replies = scene.run(5)
    assert all("result" in r for r in replies[2:]), [r for r in replies if "error" in r][:3]
    u, v = scene.image_position(subject)
    if with_keypoints:
        # The head goes where a face goes: centred across, on the face line (0.35).
        assert abs(u - 0.5) < 0.04, f"head at u={u:.3f}"
        assert abs(v - 0.35) < 0.05, f"head at v={v:.3f}"
    else:
        # The body's box alone: its middle is centred, the head left of it.
        assert u < 0.45, f"head at u={u:.3f}"


BODY = {"kind": "body", "rect": {"x": 0.4, "y": 0.2, "width": 0.2, "height": 0.6}}


@pytest.mark.parametrize("observation, field", [
    ({**BODY, "keypoints": {"tail": {"x": 0.5, "y": 0.5}}}, "observations[0].keypoints.tail"),
    ({**BODY, "keypoints": {"nose": {"x": 7, "y": 0.5}}}, "observations[0].keypoints.nose.x"),
    ({**BODY, "keypoints": {"nose": {"x": 0.5}}}, "observations[0].keypoints.nose.y"),
    ({**BODY, "keypoints": {"nose": {"x": 0.5, "y": 0.3, "visibility": 1.5}}}, "observations[0].keypoints.nose.visibility"),
    ({**BODY, "keypoints": {"nose": [0.5, 0.3]}}, "observations[0].keypoints.nose"),
    ({**BODY, "keypoints": [{"x": 0.5, "y": 0.3}]}, "observations[0].keypoints"),
    ({**BODY, "kind": "face", "keypoints": {"nose": {"x": 0.5, "y": 0.3}}}, "observations[0].keypoints"),
])
def test_malformed_keypoints_are_refused_naming_the_field(rig, observation, field):
    c = rig.client()
    rig.connected_stand(c)
    reply = c.call("tracking.observe", {"observations": [observation], "origin": "upper_left"})
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["field"] == field, reply


def test_dockd_takes_exactly_the_joints_the_document_declares(rig):
    declared = openrpc_check.load_document()["components"]["schemas"]["ObservationIn"]["properties"]["keypoints"]["propertyNames"]["enum"]
    c = rig.client()
    rig.connected_stand(c)
    every = {**BODY, "keypoints": {name: {"x": 0.5, "y": 0.3, "visibility": 0.9} for name in declared}}
    assert "result" in c.call("tracking.observe", {"observations": [every], "origin": "upper_left"})
    refused = c.call("tracking.observe", {"observations": [{**BODY, "keypoints": {"neck": {"x": 0.5, "y": 0.3}}}]})["error"]
    named = refused["message"].split("(")[-1].rstrip(")").split(", ")
    assert named == declared, refused


def test_keypoints_in_vision_coordinates_are_turned_upright(rig):
    """A head from keypoints sent with Vision's lower-left origin is reported (as face_rect) at the
    body's top, where the nose is."""
    c = rig.client()
    rig.connected_stand(c)
    c.result("camera.set", {"camera": {"horizontal_fov": HFOV, "vertical_fov": VFOV}})
    # Upright, upper-left: body from y 0.1 to 0.7, nose at y 0.16. Lower-left: y' = 1 - y.
    points = {name: {**p, "y": 1 - p["y"]} for name, p in keypoints(0.5, 0.1, 0.6).items()}
    for _ in range(6):
        c.result("tracking.observe", {"observations": [{"kind": "body", "rect": {"x": 0.4, "y": 0.3, "width": 0.2, "height": 0.6},
                                                         "keypoints": points}]})
        time.sleep(0.06)
    subject = c.result("tracking.get")["subjects"][0]
    body, face = subject["rect"], subject["face_rect"]
    # The stand may have begun to turn: where the head is, is measured from the body's top.
    assert face is not None and math.isclose(face["y"] + face["height"] / 2 - body["y"], 0.06, abs_tol=0.015), subject


def side_keypoints(u, top, height):
    """The same person turned sideways: one eye and ear, shoulders one behind the other."""
    return {"nose": {"x": u, "y": top + 0.1 * height, "visibility": 0.95},
            "left_eye": {"x": u - 0.005, "y": top + 0.085 * height, "visibility": 0.9},
            "right_eye": {"x": u - 0.008, "y": top + 0.085 * height, "visibility": 0.1},
            "left_shoulder": {"x": u - 0.01, "y": top + 0.2 * height},
            "right_shoulder": {"x": u - 0.02, "y": top + 0.2 * height},
            "left_hip": {"x": u - 0.01, "y": top + 0.5 * height}}


def test_tracking_state_says_how_squarely_each_subject_faces_the_camera(rig):
    """`facing` (api 1.7): from a body's keypoints, from a face's yaw, null when neither says."""
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["tracking"]})
    frontal = {**keypoints(0.2, 0.2, 0.6), "left_hip": {"x": 0.23, "y": 0.2 + 0.5 * 0.6}, "right_hip": {"x": 0.17, "y": 0.2 + 0.5 * 0.6}}
    people = [
        {"kind": "body", "rect": {"x": 0.1, "y": 0.2, "width": 0.2, "height": 0.6}, "keypoints": frontal},
        {"kind": "body", "rect": {"x": 0.4, "y": 0.2, "width": 0.2, "height": 0.6}, "keypoints": side_keypoints(0.5, 0.2, 0.6)},
        {"kind": "face", "rect": {"x": 0.66, "y": 0.2, "width": 0.08, "height": 0.12}, "face_yaw": math.pi / 4},
        {"kind": "body", "rect": {"x": 0.85, "y": 0.2, "width": 0.1, "height": 0.6}},
    ]
    deadline = time.monotonic() + 10
    subjects = []
    while time.monotonic() < deadline and len(subjects) < 4:
        c.result("tracking.observe", {"observations": people, "origin": "upper_left", "timestamp": time.monotonic()})
        time.sleep(0.05)
        state = c.latest("tracking.state")
        subjects = state["params"]["subjects"] if state else []
    assert len(subjects) == 4, subjects
    # The stand may turn toward a subject meanwhile: left to right is the order either way.
    facing = [s["facing"] for s in sorted(subjects, key=lambda s: s["rect"]["x"])]
    assert facing[0] > 0.8, facing
    assert facing[1] < 0.3, facing
    assert math.isclose(facing[2], 0.5, abs_tol=0.05), facing
    assert facing[3] is None, facing
