"""dock-camera's head from pose keypoints as a person's face, when no face detector found it (BlazePose,
from the mediapipe wheel in .venv-camera). Real pictures from Debian's opencv-doc: messi5.jpg (a
footballer running, his face 30 px high), vtest.avi (walkers whose 15–25 px faces BlazeFace misses).

The detectors run under .venv-camera/bin/python (`make camera-venv`), as dock-camera runs mediapipe;
those tests are skipped where it has not been built. The head's geometry is pure and runs anywhere."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from test_dock_camera import VIDEO, needs_video

sys.path.insert(0, str(ROOT / "camera"))

from dock_camera.head import head_box  # noqa: E402

DATA = Path("/usr/share/doc/opencv-doc/examples/data")
FOOTBALLER = DATA / "messi5.jpg"
VENV_PYTHON = ROOT / ".venv-camera" / "bin" / "python"
needs_camera_venv = pytest.mark.skipif(not VENV_PYTHON.exists(), reason="make camera-venv builds .venv-camera")


def run_in(python, script):
    """Runs `script` in the detectors' interpreter, with camera/ importable; its last line is JSON."""
    done = subprocess.run([str(python), "-c", script], cwd=ROOT / "camera", capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- the head from keypoints (pure) ----------------------------------------------------------------

FRONTAL = {0: (100, 100), 1: (94, 92), 2: (91, 92), 3: (85, 92), 4: (106, 92), 5: (109, 92), 6: (115, 92),
           7: (75, 97), 8: (125, 97), 11: (40, 170), 12: (160, 170)}


def test_head_box_of_a_frontal_face_spans_ear_to_ear_centred_on_the_nose():
    x, y, size = head_box(FRONTAL)
    assert size == pytest.approx(50)  # the ears' span; eyes (1.6 × 30) and shoulders (0.4 × 120) say 48
    assert (x + size / 2, y + size / 2) == pytest.approx((100, 100))


def test_head_box_of_a_head_turned_aside_keeps_a_head_width():
    """Turned to its right: one ear, eyes close together. The eyes' span alone would give a box half
    as wide; nose to ear and the shoulders keep it a head wide, centred between the ear and the nose."""
    turned = {0: (118, 100), 1: (112, 92), 2: (110, 92), 3: (107, 92), 4: (119, 92), 5: (121, 92), 6: (122, 92),
              7: (85, 97), 11: (40, 170), 12: (160, 170)}
    x, y, size = head_box(turned)
    assert size == pytest.approx(max(1.5 * math.dist((118, 100), (85, 97)), 0.4 * 120))
    assert x + size / 2 == pytest.approx((118 + 85) / 2)
    assert x <= 85 and x + size >= 122  # ear to the far eye inside


def test_no_head_box_without_the_nose_or_an_eye():
    assert head_box({7: (75, 97), 8: (125, 97), 11: (40, 170), 12: (160, 170)}) is None


# ---- pose and face detectors together (.venv-camera) -----------------------------------------------

@needs_camera_venv
@pytest.mark.timeout(300)
def test_a_found_face_is_sent_once_not_again_as_the_head_from_pose():
    """BlazeFace finds the footballer's face; BlazePose's head box of the same person is dropped, so
    dockd sees one person with one face, not a second, face-only person."""
    found = run_in(VENV_PYTHON, f"""
import json, cv2
from dock_camera import detectors
image = cv2.imread({str(FOOTBALLER)!r})
found = detectors.make("blazeface+blazepose").detect(image)
print(json.dumps([[d.kind, d.source, d.x, d.y, d.width, d.height] for d in found]))
""")
    faces = [f for f in found if f[0] == "face"]
    bodies = [f for f in found if f[0] == "body"]
    assert len(bodies) == 1, found
    assert [f[1] for f in faces] == ["blazeface"], found


def paired_by_dockd(face, body):
    """dockd's PersonPairing rule: the face's centre within the body's width and in its top 40 %,
    and the face narrower than the body."""
    fx, fy = face[0] + face[2] / 2, face[1] + face[3] / 2
    return body[0] <= fx <= body[0] + body[2] and body[1] <= fy <= body[1] + 0.4 * body[3] and face[2] <= body[2]


def detections(name):
    """What the detector `name` finds in every third of vtest.avi's first 300 frames, at 640×480:
    per frame, [kind, source, x, y, width, height] per box."""
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
    out.append([[d.kind, d.source, d.x, d.y, d.width, d.height] for d in found])
print(json.dumps(out))
""")


@needs_camera_venv
@needs_video
@pytest.mark.timeout(300)
def test_the_head_from_pose_is_the_face_of_a_person_whose_face_is_not_found():
    """vtest.avi's walkers, their faces too small for BlazeFace: every person BlazePose finds gets one
    face, its head box, where dockd pairs it with the body, a head wide: a head is about a twelfth of
    a standing person's height wide, and BlazePose's body box is 1.2 times the landmarks' span (a
    margin around the face landmarks made it twice that)."""
    frames = detections("blazeface+blazepose")
    with_body = [f for f in frames if any(d[0] == "body" for d in f)]
    assert len(with_body) >= 20, f"BlazePose found someone in {len(with_body)} of {len(frames)} frames"
    for found in with_body:
        body = next(d[2:] for d in found if d[0] == "body")
        faces = [d for d in found if d[0] == "face"]
        assert len(faces) == 1, found
        assert faces[0][1] == "blazepose", found
        assert paired_by_dockd(faces[0][2:], body), found
    standing = [f for f in with_body if next(d for d in f if d[0] == "body")[5] > 60]
    ratios = sorted(next(d for d in f if d[0] == "face")[4] / next(d for d in f if d[0] == "body")[5]
                    for f in standing)
    assert 1 / 18 <= ratios[len(ratios) // 2] <= 1 / 11, ratios


@needs_camera_venv
@needs_video
@pytest.mark.timeout(300)
def test_beside_hog_the_pose_adds_the_head_not_a_second_body():
    """hog+blazepose on vtest.avi's walkers, BlazePose following one at a time. A person both find is
    sent with one body, HOG's, and BlazePose's head box as its face, where dockd pairs it with that
    body, so dockd frames that person's head."""
    frames = detections("hog+blazepose")

    def centre_in(a, b):
        cx, cy = a[0] + a[2] / 2, a[1] + a[3] / 2
        return b[0] <= cx <= b[0] + b[2] and b[1] <= cy <= b[1] + b[3]

    heads_on_hog_bodies = 0
    for found in frames:
        hog_bodies = [d[2:] for d in found if d[0] == "body" and d[1] == "hog"]
        for pose_body in (d[2:] for d in found if d[0] == "body" and d[1] == "blazepose"):
            assert not any(centre_in(pose_body, b) or centre_in(b, pose_body) for b in hog_bodies), found
        heads = [d[2:] for d in found if d[0] == "face"]
        heads_on_hog_bodies += sum(any(paired_by_dockd(h, b) for b in hog_bodies) for h in heads)
    # The whole scene at 640×480: walkers 70–100 px tall, under HOG's 128-px window, so HOG finds
    # BlazePose's person in about one frame in ten (where it does not, BlazePose's body is sent).
    assert heads_on_hog_bodies >= 5, heads_on_hog_bodies
