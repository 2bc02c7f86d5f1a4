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


def test_the_trace_counts_the_samples_not_in_frame_by_cause(tmp_path):
    """loop_trace.py's last line: why the samples not `in` were not, coasting (no box sent in
    those frames) or measured, the verdict, the view inside the video or over its edge. The person stands in the middle until
    video frame 5, then the reference has them no more; dockd's subject is measured on them until
    0.2 s, coasts over them at 0.3 s (its box beside them: held, still `in`), and coasts on after
    they are gone (0.5 s to 0.9 s)."""
    import json
    import subprocess

    reference = {str(n): [[7, 364, 238, 40, 100]] for n in range(5)}
    log = []
    for i in range(10):
        t = i / 10
        log.append({**frame(t), "observations": []})
        u = 0.9 if i == 3 else 0.5
        rect = {"x": u - 0.05, "y": 0.4, "width": 0.1, "height": 0.2}
        subject = {"id": "a1b2c3", "selected": True, "saliency_rank": 1, "rect": rect, "last_seen": min(t, 0.2)}
        log.append({"tracking": {"capture_time": t, "subjects": [subject]}, "capture_local": t})
    (tmp_path / "reference.json").write_text(json.dumps(reference))
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))
    out = subprocess.run([sys.executable, str(ROOT / "camera" / "bench" / "loop_trace.py"), str(tmp_path / "reference.json"),
                          str(tmp_path / "log.jsonl")], check=True, capture_output=True, text=True).stdout.splitlines()
    assert out[-2] == "in 5 (50 %); person gone 5 (50 %)"
    assert out[-1] == "not in: coasting with no box sent, person gone, view inside 5 (50 %)"
