"""dockd's loop closed on real V4L2 controls under a real kernel: the real dockd owns kernel/vptz's
virtual PTZ webcam in the VM (tests/vm/run.sh) and is driven through its API — a zoom by
motion.orient, a walking subject by tracking.observe, an unplug and a replug — while v4l2-ctl, a
second open of the same device, reads what the camera did. One boot; guest_dockd_loop.sh records,
these tests judge."""
import json
import math
from pathlib import Path

import pytest

ARCSEC = 180 * 3600 / math.pi
STEP = 3600  # the tiny2 profile's pan/tilt step, arc-seconds
# The profile dockd matches to vptz's tiny2 card: the least time between two sets it may send.
COMMAND_INTERVAL = json.loads((Path(__file__).resolve().parents[2] / "profiles/v4l2/obsbot-tiny-2.json").read_text())["commandInterval"]
# dockd's link thread and vptz read the same CLOCK_MONOTONIC: the slack is for rounding only.
GAP_TOLERANCE_S = 0.001
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def vm(boot, dock_bin):
    return boot("dockd-loop-vm", "guest_dockd_loop.sh", dock_bin)


def text(vm, name):
    path = vm / name
    return path.read_text(errors="replace") if path.exists() else f"(no {name})"


def log(vm):
    return text(vm, "dockd.log")[-4000:]


def test_motion_orient_with_zoom_sets_zoom_absolute(vm):
    # tiny2: ZOOM_ABSOLUTE 100..400 is 1x..4x
    assert text(vm, "zoom-3.rc").strip() == "0", text(vm, "zoom-3.err") + text(vm, "zoom-3.json") + log(vm)
    assert int(text(vm, "zoom-3.txt")) == 300, text(vm, "zoom-3.txt") + log(vm)
    assert text(vm, "zoom-1.rc").strip() == "0", text(vm, "zoom-1.err") + text(vm, "zoom-1.json") + log(vm)
    assert int(text(vm, "zoom-1.txt")) == 100, text(vm, "zoom-1.txt") + log(vm)


# Hunted under emulation (in frame 25 % once; the pan swinging about the subject, or the tilt
# running off) until issue 23's fixes: reads starved by sets once the ioctl round trip reached the
# command interval, the rate's 0.09 rad leap between reads, frames refused for rate by their arrival
# (BENCHMARKS.md, "The hunting's causes, found"). Passed in every run after them, one beside a CPU hog.
def test_tracking_turns_the_camera_after_a_walking_subject(vm):
    lines = [json.loads(line) for line in text(vm, "walk.jsonl").splitlines() if line.startswith("{")]
    frames = [line for line in lines if "t" in line]
    summary = next((line for line in lines if "refused" in line), None)
    assert text(vm, "walk.rc").strip() == "0" and summary, (text(vm, "walk.err"), frames[-5:], log(vm))
    subject = frames[-1]["subject"] * ARCSEC  # 0.6 rad right, where the subject stands at the end
    # v4l2-ctl, beside dockd, saw the pan start at 0 and, while the subject stood, hold about it
    samples = [line.split() for line in text(vm, "walk-pan.txt").splitlines()]
    pans = [(float(when), int(pan)) for when, pan in (s for s in samples if len(s) == 2 and s[1].lstrip("-").isdigit())]
    assert pans and abs(pans[0][1]) <= 2 * STEP, pans[:5]
    standing = sorted(pan for when, pan in pans if summary["standing_from"] <= when <= summary["standing_to"])
    assert len(standing) >= 3, (pans, summary)
    # Generous: a slow VM makes the pan hunt about the subject (BENCHMARKS.md); a pan turned the
    # wrong way or not at all is 0.6 rad off.
    assert abs(standing[len(standing) // 2] - subject) <= 0.25 * ARCSEC, (standing, subject, log(vm))
    # The target is 99 % in frame (measured: BENCHMARKS.md); here a floor.
    in_frame = sum(f["in_frame"] for f in frames) / len(frames)
    assert in_frame >= 0.75, (in_frame, [f for f in frames if not f["in_frame"]][:5])


def test_tracking_never_sets_the_camera_faster_than_its_profiles_command_interval(vm):
    # vptz's own count of the sets it received during the walk and the least gap between two, by
    # the guest's CLOCK_MONOTONIC at the ioctl's arrival. Fewer than two sets read as a gap of -1:
    # they fail too. (41-117 sets where the walk tracked; 12 where the loaded VM starved its client.)
    count, _last, least_gap = (int(v) for v in text(vm, "walk-sets.txt").split())
    print(f"\nwalk: {count} sets, the least gap {least_gap / 1e9:.4f} s (command interval {COMMAND_INTERVAL} s)")
    assert least_gap / 1e9 >= COMMAND_INTERVAL - GAP_TOLERANCE_S, (count, least_gap, log(vm))


def test_dockd_reattaches_a_replugged_camera(vm):
    replug = json.loads(text(vm, "replug.json"))
    assert text(vm, "replug.rc").strip() == "0", (replug, text(vm, "replug.err"), log(vm))
    # The target, by the guest's clock: the node watch attaches the camera as its node
    # returns, 0.05-0.19 s after the replug here under load (BENCHMARKS.md); before it, the
    # reconnect backoff's next retry, up to 2.19 s, and once since (2.31 s) a node back between a
    # failed open and the wait, which the wait now sees.
    print(f"\nreattach: {replug['reattach_s']:.3f} s after the replug")
    assert replug["reattach_s"] <= 2, replug
    assert text(vm, "dockd.rc").strip() == "0", log(vm)


def test_a_camera_turning_when_it_returns_is_stopped_on_reattach(vm):
    replug = json.loads(text(vm, "replug.json"))
    assert "pan_3s_after" in replug, (replug, text(vm, "replug.err"), log(vm))
    # While away the camera went on at someone else's speed...
    assert replug["pan_at_unplug"] - replug["pan_while_away"] > 2 * STEP, replug
    # ...and dockd stopped it once it had it again: at 7.5°/s two seconds would be 54000″.
    assert abs(replug["pan_3s_after"] - replug["pan_1s_after"]) <= 2 * STEP, (replug, log(vm))
