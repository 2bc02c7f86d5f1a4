"""Closed-loop figures from a run's log and the reference people (ground_truth.py).

A sample is one moment the client had a subject: dockd's `tracking.state` (its top-ranked selected
subject, at the frame it was computed from) or, for the naive client, each frame's chosen box. The
subject's box centre goes back into the wide video through the view's pose; the reference person
whose box contains it (grown by a quarter) is "the selected person" — and stays so for that subject
while the subject is not matched again (a coasting track). Then, with the person's reference box at
that video frame: inside the frame (its centre in the view), inside the central third (horizontally),
the aim error (angle from the view's centre to the person's centre), and how often the person
changes. Samples without a selection or without a matching person count as not in frame."""
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dock_camera.geometry import PanTiltView, apply  # noqa: E402

GROW = 0.25


def load_log(path):
    frames, states = [], []
    for line in open(path):
        record = json.loads(line)
        (states if "tracking" in record else frames).append(record)
    return frames, states


def person_at(reference, video_frame, x, y):
    for person_id, bx, by, bw, bh in reference.get(str(video_frame), []):
        gx, gy = GROW * bw, GROW * bh
        if bx - gx <= x <= bx + bw + gx and by - gy <= y <= by + bh + gy:
            return person_id
    return None


def person_box(reference, video_frame, person_id):
    for pid, bx, by, bw, bh in reference.get(str(video_frame), []):
        if pid == person_id:
            return bx, by, bw, bh
    return None


def samples_from_dockd(frames, states):
    """(frame record, subject id, centre u, v normalized) per tracking.state with a selection."""
    by_time = sorted(frames, key=lambda f: f["capture_time"])
    times = [f["capture_time"] for f in by_time]
    import bisect
    out = []
    for record in states:
        local = record.get("capture_local")
        state = record["tracking"]
        if local is None or not times:
            continue
        i = bisect.bisect_left(times, local)
        near = [j for j in (i - 1, i) if 0 <= j < len(times)]
        j = min(near, key=lambda k: abs(times[k] - local))
        if abs(times[j] - local) > 0.02:
            continue
        selected = [s for s in state["subjects"] if s["selected"]]
        if selected:
            s = min(selected, key=lambda s: s["saliency_rank"])
            r = s["rect"]
            out.append((by_time[j], s["id"], r["x"] + r["width"] / 2, r["y"] + r["height"] / 2))
        else:
            out.append((by_time[j], None, None, None))
    return out


def samples_from_naive(frames):
    out = []
    for f in frames:
        r = (f.get("naive") or {}).get("rect")
        if r is None:
            out.append((f, None, None, None))
        else:
            out.append((f, "box", r["x"] + r["width"] / 2, r["y"] + r["height"] / 2))
    return out


def score(samples, reference, geometry: PanTiltView, seconds):
    w, h = geometry.view_size
    in_frame = central = matched = 0
    errors = []
    changes = 0
    previous_person = None
    subject_person = {}
    for frame, subject, u, v in samples:
        view = frame["view"]
        yaw, pitch, video_frame = view["yaw"], view["pitch"], view["video_frame"]
        if subject is None:
            continue
        H = geometry.view_to_wide(yaw, pitch)
        p = apply(H, [u * w, v * h, 1.0])
        person = person_at(reference, video_frame, p[0] / p[2], p[1] / p[2]) if p[2] > 0 else None
        if person is not None and subject != "box":
            subject_person[subject] = person
        elif person is None:
            person = subject_person.get(subject)
        if person is None:
            continue
        box = person_box(reference, video_frame, person)
        if box is None:
            continue
        matched += 1
        if previous_person is not None and person != previous_person:
            changes += 1
        previous_person = person
        cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2
        seen = geometry.wide_point_in_view(cx, cy, yaw, pitch)
        if seen and 0 <= seen[0] <= w and 0 <= seen[1] <= h:
            in_frame += 1
            if w / 3 <= seen[0] <= 2 * w / 3:
                central += 1
        person_yaw, person_pitch = geometry.wide_point_angles(cx, cy)
        errors.append(math.degrees(math.hypot(person_yaw - yaw, person_pitch - pitch)))
    n = len(samples)
    return {
        "samples": n,
        "matched_to_a_person": round(matched / n, 3) if n else None,
        "in_frame": round(in_frame / n, 3) if n else None,
        "central_third": round(central / n, 3) if n else None,
        "aim_error_deg": {"p50": round(statistics.median(errors), 1) if errors else None,
                          "p90": round(sorted(errors)[int(0.9 * (len(errors) - 1))], 1) if errors else None},
        "selection_changes_per_min": round(changes / (seconds / 60), 1) if seconds else None,
    }


def view_inside_video(frame, geometry: PanTiltView):
    """Whether the whole view lies inside the wide video (no black border): the edge of the virtual
    world, where people walk out of the video, is outside."""
    w, h = geometry.view_size
    width, height = geometry.wide_size
    H = geometry.view_to_wide(frame["view"]["yaw"], frame["view"]["pitch"])
    for corner in ((0, 0), (w, 0), (0, h), (w, h)):
        x, y, z = apply(H, [corner[0], corner[1], 1.0])
        if z <= 0 or not (0 <= x / z <= width and 0 <= y / z <= height):
            return False
    return True


def score_split(samples, reference, geometry, seconds):
    """score() over every sample, plus the share of samples whose view lay inside the video and
    score() over those alone."""
    inside = [s for s in samples if view_inside_video(s[0], geometry)]
    figures = score(samples, reference, geometry, seconds)
    figures["view_inside_video"] = round(len(inside) / len(samples), 3) if samples else None
    figures["inside"] = score(inside, reference, geometry, seconds * len(inside) / max(1, len(samples)))
    return figures
