"""dock-camera sends a body's pose keypoints with it (`keypoints` in tracking.observe): BlazePose's
landmarks by joint name, normalized like the rect, kept with the body that stands for the person
when another detector's body replaces the pose's. No model needed: landmarks and detections are
made here; the sending path runs under Debian's Python, which has OpenCV, as dock-camera does."""
import sys
from dataclasses import dataclass
from types import SimpleNamespace

from conftest import ROOT
from test_dock_camera import run_in_camera

sys.path.insert(0, str(ROOT / "camera"))

from dock_camera.fusion import one_box_per_person  # noqa: E402
from dock_camera.keypoints import blazepose_joints, normalized  # noqa: E402


def test_blazepose_landmarks_become_named_joints_in_pixels():
    landmarks = [SimpleNamespace(x=i / 100, y=0.5, visibility=0.9) for i in range(33)]
    joints = blazepose_joints(landmarks, 640, 480)
    assert len(joints) == 17
    assert joints["nose"] == (0.0, 240.0, 0.9)
    assert joints["left_eye"][0] == 0.02 * 640 and joints["right_ankle"][0] == 0.28 * 640


def test_keypoints_are_normalized_and_points_out_of_reach_left_out():
    points = normalized({"nose": (320, 120, 0.99), "left_ankle": (320, 1200, 0.1), "right_eye": (300, 110, 1.2)}, 640, 480)
    assert points == {"nose": {"x": 0.5, "y": 0.25, "visibility": 0.99},
                      "right_eye": {"x": 300 / 640, "y": 110 / 480, "visibility": 1.0}}
    assert normalized({"left_ankle": (320, 1200, 0.5)}, 640, 480) is None


@dataclass
class Found:
    kind: str
    x: float
    y: float
    width: float
    height: float
    from_keypoints: bool = False
    keypoints: dict = None


def test_the_body_that_replaces_the_pose_body_takes_its_keypoints():
    pose = Found("body", 100, 50, 120, 300, from_keypoints=True, keypoints={"nose": (160, 80, 0.9)})
    hog = Found("body", 90, 40, 140, 330)
    kept = one_box_per_person([pose, hog])
    assert [(b.from_keypoints, b.keypoints) for b in kept] == [(False, {"nose": (160, 80, 0.9)})]


def test_bodies_are_sent_with_their_keypoints():
    script = ("import json\n"
              "from dock_camera.cli import observations\n"
              "from dock_camera.detectors import Detection\n"
              "found = [Detection('body', 100, 50, 200, 400, 0.8, 'blazepose', True, {'nose': (200, 90, 0.99), 'left_ear': (210, 85, 0.4)}),\n"
              "         Detection('face', 180, 70, 40, 40, 0.7, 'blazepose', True)]\n"
              "print(json.dumps(observations(found, (400, 500))))\n")
    body, face = run_in_camera(script)
    assert body["keypoints"] == {"nose": {"x": 0.5, "y": 0.18, "visibility": 0.99},
                                 "left_ear": {"x": 210 / 400, "y": 0.17, "visibility": 0.4}}
    assert "keypoints" not in face


def test_a_pose_is_sent_as_its_body_with_keypoints_and_no_head_box_of_its_own():
    """dockd places the head from the keypoints where no face came (KeypointHead): dock-camera sends
    the body and its keypoints only, so the head has one source and a face detector's face is the
    only face dock-camera sends."""
    script = ("import json\n"
              "from types import SimpleNamespace as P\n"
              "from dock_camera.detectors import pose_detections\n"
              "hidden = P(x=0.5, y=0.5, visibility=0.1)\n"
              "landmarks = [hidden] * 33\n"
              "for i, (x, y) in {0: (0.5, 0.2), 2: (0.49, 0.19), 5: (0.51, 0.19), 7: (0.47, 0.2), 8: (0.53, 0.2),\n"
              "                  11: (0.44, 0.3), 12: (0.56, 0.3), 23: (0.46, 0.55), 24: (0.54, 0.55)}.items():\n"
              "    landmarks[i] = P(x=x, y=y, visibility=0.95)\n"
              "print(json.dumps([[d.kind, sorted(n for n, p in (d.keypoints or {}).items() if p[2] > 0.5)]\n"
              "                  for d in pose_detections(landmarks, 640, 480)]))\n")
    assert run_in_camera(script) == [["body", ["left_ear", "left_eye", "left_hip", "left_shoulder", "nose",
                                                 "right_ear", "right_eye", "right_hip", "right_shoulder"]]]
