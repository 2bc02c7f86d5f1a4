"""Closed-loop figures from a run's log and the reference people (ground_truth.py).

A sample is one moment the client had a subject: dockd's `tracking.state` (its top-ranked selected
subject, at the frame it was computed from) or, for the naive client, each frame's chosen box. The
subject's box centre goes back into the wide video through the view's pose; the reference person
whose box contains it (grown by a quarter) is "the selected person" — and stays so for that subject
while the subject is not matched again (a coasting track). Then, with the person's reference box at
that video frame: inside the frame (its centre in the view), inside the central third (horizontally),
the aim error (angle from the view's centre to the person's centre), and how often the person
changes. Samples without a selection or without a matching person count as not in frame."""
import bisect
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


def selected_person(sample, reference, geometry: PanTiltView, subject_person):
    """The reference person a sample's subject stands for: the one its box centre falls on, else the
    one that subject last fell on (`subject_person`, kept across samples); None without either."""
    frame, subject, u, v = sample
    if subject is None:
        return None
    w, h = geometry.view_size
    view = frame["view"]
    p = apply(geometry.view_to_wide(view["yaw"], view["pitch"]), [u * w, v * h, 1.0])
    person = person_at(reference, view["video_frame"], p[0] / p[2], p[1] / p[2]) if p[2] > 0 else None
    if person is not None and subject != "box":
        subject_person[subject] = person
    elif person is None:
        person = subject_person.get(subject)
    return person


def person_in_view(reference, geometry: PanTiltView, frame, person):
    """Whether `person`'s reference box centre lies in `frame`'s view; None when the reference has no
    box for them at that video frame."""
    view = frame["view"]
    box = person_box(reference, view["video_frame"], person)
    if box is None:
        return None
    w, h = geometry.view_size
    seen = geometry.wide_point_in_view(box[0] + box[2] / 2, box[1] + box[3] / 2, view["yaw"], view["pitch"])
    return bool(seen and 0 <= seen[0] <= w and 0 <= seen[1] <= h)


# A selection dockd last reported longer ago than this (s) is none: its stream has stopped.
STALE = 1.0


def in_frame_every_frame(frames, samples, reference, geometry: PanTiltView):
    """The share of the frames the camera captured in which the person dockd last selected was in the
    view: time-weighted, where samples (tracking.state) come only for the observations dockd took, so
    a stretch of refused frames would otherwise be left out of the count. Each frame takes the newest
    sample computed from a frame captured no later, no more than STALE old."""
    subject_person = {}
    selections = sorted(((sample[0]["capture_time"], selected_person(sample, reference, geometry, subject_person))
                         for sample in samples), key=lambda s: s[0])
    times = [t for t, _ in selections]
    hits = 0
    for frame in frames:
        i = bisect.bisect_right(times, frame["capture_time"] + 1e-6) - 1
        if i < 0 or frame["capture_time"] - times[i] > STALE or selections[i][1] is None:
            continue
        hits += bool(person_in_view(reference, geometry, frame, selections[i][1]))
    return round(hits / len(frames), 3) if frames else None


def score(samples, reference, geometry: PanTiltView, seconds):
    w, h = geometry.view_size
    in_frame = central = matched = 0
    errors = []
    changes = 0
    previous_person = None
    subject_person = {}
    for sample in samples:
        frame = sample[0]
        view = frame["view"]
        yaw, pitch, video_frame = view["yaw"], view["pitch"], view["video_frame"]
        person = selected_person(sample, reference, geometry, subject_person)
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


def score_split(samples, reference, geometry, seconds, frames=None):
    """score() over every sample, plus the share of samples whose view lay inside the video and
    score() over those alone; with the run's `frames`, in_frame_every_frame() too."""
    inside = [s for s in samples if view_inside_video(s[0], geometry)]
    figures = score(samples, reference, geometry, seconds)
    if frames is not None:
        figures["in_frame_every_frame"] = in_frame_every_frame(frames, samples, reference, geometry)
    figures["view_inside_video"] = round(len(inside) / len(samples), 3) if samples else None
    figures["inside"] = score(inside, reference, geometry, seconds * len(inside) / max(1, len(samples)))
    return figures
