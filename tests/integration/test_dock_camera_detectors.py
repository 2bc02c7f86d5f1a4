"""dock-camera's pose detector beside a face or people detector (BlazePose, from the mediapipe wheel in
.venv-camera): each person one body carrying its keypoints, from which dockd places the head when no
face was found, and only a face detector's faces. Real pictures from Debian's opencv-doc:
messi5.jpg (a footballer running, his face 30 px high), vtest.avi (walkers whose 15–25 px faces
BlazeFace misses).

The detectors run under .venv-camera/bin/python (`make camera-venv`), as dock-camera runs mediapipe;
these tests are skipped where it has not been built."""
import json
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from test_dock_camera import VIDEO, needs_video

DATA = Path("/usr/share/doc/opencv-doc/examples/data")
FOOTBALLER = DATA / "messi5.jpg"
VENV_PYTHON = ROOT / ".venv-camera" / "bin" / "python"
needs_camera_venv = pytest.mark.skipif(not VENV_PYTHON.exists(), reason="make camera-venv builds .venv-camera")


def run_in(python, script):
    """Runs `script` in the detectors' interpreter, with camera/ importable; its last line is JSON."""
    done = subprocess.run([str(python), "-c", script], cwd=ROOT / "camera", capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- pose and face detectors together (.venv-camera) -----------------------------------------------

@needs_camera_venv
@pytest.mark.timeout(300)
def test_a_found_face_is_the_only_face_sent_beside_the_pose():
    """BlazeFace finds the footballer's face; BlazePose sends his body with its keypoints and no face
    of its own, so dockd sees one person with one face."""
    found = run_in(VENV_PYTHON, f"""
import json, cv2
from dock_camera import detectors
image = cv2.imread({str(FOOTBALLER)!r})
found = detectors.make("blazeface+blazepose").detect(image)
print(json.dumps([[d.kind, d.source, d.x, d.y, d.width, d.height, d.keypoints is not None] for d in found]))
""")
    faces = [f for f in found if f[0] == "face"]
    bodies = [f for f in found if f[0] == "body"]
    assert len(bodies) == 1 and bodies[0][6], found
    assert [f[1] for f in faces] == ["blazeface"], found


def head_where_dockd_pairs_it(keypoints, body):
    """Whether the head dockd places from `keypoints` (KeypointHead: on the nose, else the eyes)
    pairs with `body` (PersonPairing: within the body's width and in its top 40 %)."""
    head = keypoints.get("nose") or keypoints.get("left_eye") or keypoints.get("right_eye")
    return head is not None and body[0] <= head[0] <= body[0] + body[2] and body[1] <= head[1] <= body[1] + 0.4 * body[3]


def detections(name):
    """What the detector `name` finds in every third of vtest.avi's first 300 frames, at 640×480:
    per frame, [kind, source, x, y, width, height, {joint: [x, y]} of the keypoints seen] per box."""
    return run_in(VENV_PYTHON, f"""
import json, cv2
from dock_camera import detectors
detector = detectors.make({name!r})
capture = cv2.VideoCapture({VIDEO!r})
out = []
for number in range(300):
    ok, image = capture.read()
    if number % 3:
        continue
    found = detector.detect(cv2.resize(image, (640, 480)))
    out.append([[d.kind, d.source, d.x, d.y, d.width, d.height,
                 {{n: p[:2] for n, p in (d.keypoints or {{}}).items() if p[2] > 0.5}}] for d in found])
print(json.dumps(out))
""")


@needs_camera_venv
@needs_video
@pytest.mark.timeout(300)
def test_a_person_whose_face_is_not_found_is_sent_with_the_keypoints_of_the_head():
    """vtest.avi's walkers, their faces too small for BlazeFace: every person BlazePose finds is sent
    as one body and no face, carrying head keypoints from which dockd places the head where it pairs
    with that body."""
    frames = detections("blazeface+blazepose")
    with_body = [f for f in frames if any(d[0] == "body" for d in f)]
    assert len(with_body) >= 20, f"BlazePose found someone in {len(with_body)} of {len(frames)} frames"
    for found in with_body:
        assert not any(d[0] == "face" and d[1] == "blazepose" for d in found), found
        body = next(d for d in found if d[0] == "body")
        assert head_where_dockd_pairs_it(body[6], body[2:6]), found


@needs_camera_venv
@needs_video
@pytest.mark.timeout(300)
def test_beside_hog_the_pose_gives_its_keypoints_not_a_second_body():
    """hog+blazepose on vtest.avi's walkers, BlazePose following one at a time. A person both find is
    sent with one body, HOG's, carrying BlazePose's keypoints, so dockd frames that person's head."""
    frames = detections("hog+blazepose")

    def centre_in(a, b):
        cx, cy = a[0] + a[2] / 2, a[1] + a[3] / 2
        return b[0] <= cx <= b[0] + b[2] and b[1] <= cy <= b[1] + b[3]

    heads_on_hog_bodies = 0
    for found in frames:
        assert not any(d[0] == "face" for d in found), found
        hog_bodies = [d for d in found if d[0] == "body" and d[1] == "hog"]
        for pose_body in (d[2:6] for d in found if d[0] == "body" and d[1] == "blazepose"):
            assert not any(centre_in(pose_body, b[2:6]) or centre_in(b[2:6], pose_body) for b in hog_bodies), found
        heads_on_hog_bodies += sum(head_where_dockd_pairs_it(b[6], b[2:6]) for b in hog_bodies)
    # The whole scene at 640×480: walkers 70–100 px tall, under HOG's 128-px window, so HOG finds
    # BlazePose's person in about one frame in ten (where it does not, BlazePose's body is sent).
    assert heads_on_hog_bodies >= 5, heads_on_hog_bodies
