"""results.json (bench_camera.py) → the Markdown section `camera` of BENCHMARKS.md."""
import json
import sys


def cell(value, suffix=""):
    return "–" if value is None else f"{value}{suffix}"


def load(stats):
    before, after = stats.get("load_average", (None, None))
    return "–" if before is None else f"{before:.1f} → {after:.1f}"


def default_rate(results):
    """The default detector at its default 15 frames/s, from the closed-loop runs through dockd."""
    stats = [r["stats"] for mode in ("dockd", "fixed") for r in results["loops"].get(mode, []) if r.get("stats")]
    if not stats:
        return ""
    fps = ", ".join(f"{s['fps']:g}" for s in stats)
    p50 = ", ".join(f"{s['latency_ms']['p50']:g}" for s in stats)
    p99 = ", ".join(f"{s['latency_ms']['p99']:g}" for s in stats)
    cpu = ", ".join(f"{s['cpu_ms_per_frame']:g}" for s in stats)
    refused = ", ".join(f"{s['replies'].get('-32005', 0)} of {s['frames']}" for s in stats)
    levels = "; ".join(", ".join(f"{n}" for _, n in sorted(s.get("frames_per_detector_level", {}).items())) for s in stats)
    return (f" In those runs with dockd (the dockd and fixed rows), dock-camera with `{stats[0]['detector']}` asked for 15 "
            f"frames/s kept {fps} frames/s; capture → sent p50 {p50} ms, p99 {p99} ms; CPU per frame {cpu} ms; "
            f"refused by dockd as too slow (-32005): {refused} frames; frames at each detector setting "
            f"(camera/dock_camera/pace.py, its own first): {levels}.")


def spread(runs, get, show):
    values = [get(f) for f in runs if get(f) is not None]
    if not values:
        return "–"
    mean = sum(values) / len(values)
    return show(mean) if len(values) == 1 else f"{show(mean)} ({show(min(values))}–{show(max(values))})"


def loop_runs(results):
    return max((len(runs) for runs in results["loops"].values()), default=0)


def one_core(rate):
    cpu = rate.get("one_core_cpu_ms")
    return "–" if cpu is None else f"{cpu['p50']:g} / {cpu['mean']:g} ms"


def pct(value):
    return "–" if value is None else f"{100 * value:.0f} %"


def render(results, machine_note):
    lines = [
        "Measured by `make bench-camera` (camera/bench/bench_camera.py; debug dockd and dock-sim, "
        f"{machine_note}). Video: Debian opencv-doc's vtest.avi (768×576, 10 frames/s, 795 frames), "
        "seen through dock-camera's virtual pan/tilt camera: 640×480, 50° wide, inside the video taken "
        "as 90° wide, 30 ms capture latency.",
        "",
        "**Reference people** (camera/bench/ground_truth.py): vtest.avi was filmed by a still camera, "
        "so OpenCV's MOG2 background subtractor (not one of the detectors compared) separates the "
        "walkers; person-sized foreground blobs are the reference boxes, linked into identities by "
        "overlap. Audited by eye on frames 50, 300 and 600: 18 people visible, 16 inside a reference box; "
        "one box covers two people walking together, one person standing still and one behind the "
        "sign post are missed. A detector's hit on a person the reference missed counts against its "
        "precision.",
        "",
        "**Detectors.** Detection rate: the view at yaw 0, pitch 10° of every 5th frame (155 frames, "
        "all with people) against the reference people; a person counts as found when a "
        "detection's centre falls in their box (grown 15 % sideways, 10 % up). Live: dock-camera "
        "asked for 30 frames/s with dock-sim and dockd running and the stand tracking, "
        "`--seconds 20`. Capture → sent: from the frame's capture timestamp to the "
        "`tracking.observe` line written to dockd's socket (the 30 ms capture latency, the "
        "detector, the JSON). CPU: dock-camera's process CPU time (all threads) per frame. One core: "
        "the detector alone, pinned with `taskset -c 0` (all its threads on one core), its process CPU "
        "time per frame over the detection-rate frames, median and mean.",
        "",
        "| detector | people found | frames with a hit | precision | one core: ms per frame p50 / mean | frames/s (asked 30) | capture → sent p50 / p99 | detector p50 | CPU per frame | dockd's replies | load average |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for d in results["detectors"]:
        r, live = d["rate"], d["live"]
        replies = ", ".join(f"{k} {v}" for k, v in sorted(live["replies"].items()))
        lines.append(
            f"| `{d['detector']}` | {pct(r['recall'])} of {r['people']} | {pct(r['frames_with_a_hit'])} | "
            f"{pct(r['precision'])} | {one_core(r)} | {live['fps']} | {cell(live['latency_ms']['p50'])} / "
            f"{cell(live['latency_ms']['p99'], ' ms')} | {cell(live['detect_ms']['p50'], ' ms')} | "
            f"{cell(live['cpu_ms_per_frame'], ' ms')} | {replies} | {load(live)} |")
    lines += [
        "",
        "Command per row: `dock-camera --source virtual:vtest.avi --detector NAME --fps 30 --seconds 20 "
        "--hfov 50 --stats FILE` against dock-sim + dockd (the mediapipe rows under "
        "`.venv-camera/bin/python`); detection rate and one core: `taskset -c 0 bench_camera.py --rate-only NAME`.",
        "",
        f"**Closed loop** ({loop_runs(results)} runs of {results.get('loop_seconds', 60):g} s per client, "
        f"`{results.get('loop_detector', 'hog')}` at 15 frames/s, a fresh dock-sim + dockd per "
        "run, the stand starting at home). *dockd*: dock-camera feeding dockd's tracking; *fixed*: "
        "the same, with the stand pinned by `motion.limits` at yaw 0, pitch 10° (the view the "
        "detection rate uses); *naive*: camera/bench/naive_client.py, tracking off, each frame "
        "`motion.velocity` toward the biggest box (2 rad/s per rad, ≤ 1 rad/s). Samples: dockd's "
        "`tracking.state` (top-ranked selected subject) at about 10 Hz; the naive client's every frame. "
        "The selected subject is mapped back into the video through the frame's pose and matched "
        "to a reference person; in frame / central third use that person's reference box at that "
        "moment; the aim error is the angle from the view's centre to the person's centre. dockd sends "
        "`tracking.state` only for the observations it takes, so a stretch of frames it refuses (-32005, too "
        "slow) leaves no sample; *every camera frame* counts over every frame dock-camera detected on and "
        "sent instead, each with the selection dockd last reported (from a frame captured no later, at most 1 s "
        "before; older is no selection). Not time-weighted: frames the source skipped while the detector was "
        "late are not counted, so slow stretches weigh less than their time. For the naive client the two are the same. The video is the "
        "whole world: a view turned past its edge shows black there, and people walk out of it; the "
        "last three columns say how often each client's view lay wholly inside the video and the "
        "figures over those samples alone.",
        "",
        "Each cell: the mean of the runs, then (lowest–highest)." + default_rate(results),
        "",
        "| client | runs × samples | selection is a real person | person in frame | person in frame, every camera frame | in the central third | aim error p50 / p90 | person changes per minute | view inside the video | there: person in frame | there: central third | load average at each start |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, label in (("dockd", "dockd tracking"), ("fixed", "fixed camera"), ("naive", "naive: centre the biggest box")):
        runs = [r["figures"] for r in results["loops"].get(mode, [])]
        if not runs:
            continue
        starts = ", ".join(f"{f['load_average'][0]:.1f}" for f in runs)
        lines.append(f"| {label} | {len(runs)} × {sum(f['samples'] for f in runs) // len(runs)} | "
                     f"{spread(runs, lambda f: f['matched_to_a_person'], pct)} | {spread(runs, lambda f: f['in_frame'], pct)} | "
                     f"{spread(runs, lambda f: f.get('in_frame_every_frame'), pct)} | "
                     f"{spread(runs, lambda f: f['central_third'], pct)} | "
                     f"{spread(runs, lambda f: f['aim_error_deg']['p50'], lambda v: f'{v:.1f}°')} / "
                     f"{spread(runs, lambda f: f['aim_error_deg']['p90'], lambda v: f'{v:.1f}°')} | "
                     f"{spread(runs, lambda f: f['selection_changes_per_min'], lambda v: f'{v:.0f}')} | "
                     f"{spread(runs, lambda f: f['view_inside_video'], pct)} | "
                     f"{spread(runs, lambda f: f['inside']['in_frame'], pct)} | "
                     f"{spread(runs, lambda f: f['inside']['central_third'], pct)} | "
                     f"{starts} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(json.load(open(sys.argv[1])), sys.argv[2] if len(sys.argv) > 2 else "2 cores"))
