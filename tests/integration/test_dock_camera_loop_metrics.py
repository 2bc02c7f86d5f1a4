"""The closed-loop bench's scoring (camera/bench/loop_metrics.py) on made-up runs: a reference person
standing in the middle of the video, a camera looking at them, and dockd's reports of what it
selected. Pure: no video, no dockd."""
import math
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "camera"))
sys.path.insert(0, str(ROOT / "camera" / "bench"))

from dock_camera.geometry import PanTiltView  # noqa: E402
from loop_metrics import in_frame_every_frame, score  # noqa: E402

GEOMETRY = PanTiltView((768, 576), math.radians(90), (640, 480), math.radians(50))
# One person, id 7, in the middle of the video in every video frame.
REFERENCE = {str(n): [[7, 364, 238, 40, 100]] for n in range(100)}


def frame(t, yaw=0.0):
    return {"capture_time": t, "view": {"yaw": yaw, "pitch": 0.0, "video_frame": int(t * 10)}}


def test_a_stretch_dockd_refused_counts_against_the_selection_it_left():
    """dockd reports a selection (the person, centred) for the frames it takes; it refuses the
    frames from 2 s to 6 s (-32005) and reports nothing, while the camera has turned away (yaw 40°).
    Per report the person is always in frame; over every camera frame, not in those 4 s."""
    frames = [frame(i / 10, yaw=math.radians(40) if 2 <= i / 10 < 6 else 0.0) for i in range(80)]
    taken = [f for f in frames if not 2 <= f["capture_time"] < 6]
    samples = [(f, "subject", 0.5, 0.5) for f in taken]
    assert score(samples, REFERENCE, GEOMETRY, 8)["in_frame"] == 1.0
    assert in_frame_every_frame(frames, samples, REFERENCE, GEOMETRY) == 0.5


def test_every_frame_takes_the_selection_last_reported_and_none_once_it_is_stale():
    """Reports every 0.5 s with the camera on the person throughout: every frame counts while the
    newest report is under 1 s old; after the last report at 2 s, frames more than 1 s later count
    as no selection."""
    frames = [frame(i / 10) for i in range(50)]
    samples = [(f, "subject", 0.5, 0.5) for f in frames if f["capture_time"] in (0.0, 0.5, 1.0, 1.5, 2.0)]
    assert in_frame_every_frame(frames, samples, REFERENCE, GEOMETRY) == 0.62  # 0 … 3.0 s of 0 … 4.9 s
