"""Why a closed-loop run lost its person: one line per sample of a bench run's log (bench_camera.py
keeps each run's log.jsonl under out/camera), in the terms loop_metrics.py scores it.

    python3 camera/bench/loop_trace.py out/camera/vtest-reference.json out/camera/bench-camera-loop-dockd-XXXX/log.jsonl

(XXXX: one run's folder; the bench keeps one per run.)

Each line: seconds into the run, the video frame, where the stand pointed (yaw, pitch, degrees),
whether the view lay inside the video, how many boxes dock-camera sent, the selected subject (its
id's first characters, its rank, how long since dockd last measured it), its box centre in the view,
the reference person it stands for and the verdict: `in`, `out` (the person outside the view),
`no person` (the box on no reference person and its subject never on one), `person gone` (the
subject's person no longer in the reference: walked out of the video, or the reference lost them),
`none` (nothing selected); `(held)` when the person comes from an earlier match of that subject.
`--subjects` adds every subject dockd reported and every box sent. The last lines count verdicts,
then the samples not `in` by cause: the subject coasting (with or without boxes sent in that frame) or
measured, the verdict, the view inside the video or over its edge."""
import argparse
import bisect
import json
import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dock_camera.geometry import PanTiltView, apply  # noqa: E402
from loop_metrics import load_log, person_at, person_box, view_inside_video  # noqa: E402


def nearest_frame(frames, times, local):
    i = bisect.bisect_left(times, local)
    j = min((k for k in (i - 1, i) if 0 <= k < len(times)), key=lambda k: abs(times[k] - local))
    return frames[j] if abs(times[j] - local) <= 0.02 else None


def verdict(geometry, reference, frame, subject, held):
    """(person, verdict) for a selected subject in `frame`, as loop_metrics.score counts it."""
    w, h = geometry.view_size
    view = frame["view"]
    r = subject["rect"]
    u, v = r["x"] + r["width"] / 2, r["y"] + r["height"] / 2
    p = apply(geometry.view_to_wide(view["yaw"], view["pitch"]), [u * w, v * h, 1.0])
    person = person_at(reference, view["video_frame"], p[0] / p[2], p[1] / p[2]) if p[2] > 0 else None
    note = ""
    if person is not None:
        held[subject["id"]] = person
    elif subject["id"] in held:
        person, note = held[subject["id"]], " (held)"
    if person is None:
        return None, "no person"
    box = person_box(reference, view["video_frame"], person)
    if box is None:
        return person, "person gone" + note
    seen = geometry.wide_point_in_view(box[0] + box[2] / 2, box[1] + box[3] / 2, view["yaw"], view["pitch"])
    inside = seen is not None and 0 <= seen[0] <= w and 0 <= seen[1] <= h
    return person, ("in" if inside else "out") + note


# A selected subject last measured longer ago than this (s) is coasting: its box is a prediction
# (two frames at 15 frames/s, and a little for the capture times' jitter).
COASTING = 0.15


def cause(said, unseen, inside, boxes):
    """Why a sample did not have its person in the view, for the summary line: no selection; the
    selected subject coasting (not measured in this frame: with boxes sent in the frame, someone
    else was detected) or measured; the verdict; and whether the view lay inside the video or over
    its edge."""
    where = f"view {'inside' if inside else 'over the edge'}"
    if said == "none":
        return f"no selection, {where}"
    measured = (f"coasting with {'boxes' if boxes else 'no box'} sent" if unseen > COASTING else "measured")
    return f"{measured}, {said.replace(' (held)', '')}, {where}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("reference", help="vtest-reference.json (ground_truth.py)")
    p.add_argument("log", help="a dockd or fixed run's log.jsonl")
    p.add_argument("--subjects", action="store_true", help="every subject and every box sent, too")
    args = p.parse_args()
    geometry = PanTiltView((768, 576), math.radians(90), (640, 480), math.radians(50))
    reference = json.load(open(args.reference))
    frames, states = load_log(args.log)
    frames.sort(key=lambda f: f["capture_time"])
    if not frames:
        sys.exit(f"{args.log}: no frames")
    times = [f["capture_time"] for f in frames]
    start = times[0]
    held, counts, causes = {}, Counter(), Counter()
    for record in states:
        state, local = record["tracking"], record.get("capture_local")
        frame = nearest_frame(frames, times, local) if local is not None else None
        if frame is None:
            continue
        view = frame["view"]
        selected = [s for s in state["subjects"] if s["selected"]]
        line = (f"{local - start:7.2f} video {view['video_frame']:3d} yaw {math.degrees(view['yaw']):6.1f} "
                f"pitch {math.degrees(view['pitch']):5.1f} {'inside ' if view_inside_video(frame, geometry) else 'edge   '}"
                f"boxes {len(frame['observations'])}")
        if selected:
            s = min(selected, key=lambda s: s["saliency_rank"])
            person, said = verdict(geometry, reference, frame, s, held)
            r = s["rect"]
            line += (f"  {s['id'][:4]} rank {s['saliency_rank']} seen {state['capture_time'] - s['last_seen']:4.2f} s ago "
                     f"at ({r['x'] + r['width'] / 2:5.2f}, {r['y'] + r['height'] / 2:4.2f}) person {person}: {said}")
        else:
            said = "none"
            line += "  none"
        counts[said.replace(" (held)", "")] += 1
        if said.replace(" (held)", "") != "in":
            causes[cause(said, selected and state["capture_time"] - s["last_seen"], view_inside_video(frame, geometry),
                         len(frame["observations"]))] += 1
        print(line)
        if args.subjects:
            for s in state["subjects"]:
                r = s["rect"]
                print(f"          subject {s['id'][:4]} rank {s['saliency_rank']} {'selected' if s['selected'] else '        '} "
                      f"({r['x']:.2f}, {r['y']:.2f}, {r['width']:.2f}×{r['height']:.2f}) "
                      f"seen {state['capture_time'] - s['last_seen']:.2f} s ago")
            for o in frame["observations"]:
                r = o["rect"]
                print(f"          box ({r['x']:.2f}, {r['y']:.2f}, {r['width']:.2f}×{r['height']:.2f}) {o['confidence']:.2f}")
    total = sum(counts.values())
    print("; ".join(f"{k} {v} ({100 * v / total:.0f} %)" for k, v in counts.most_common()) if total else "no samples")
    if causes:
        print("not in: " + "; ".join(f"{k} {v} ({100 * v / total:.0f} %)" for k, v in causes.most_common()))


if __name__ == "__main__":
    main()
