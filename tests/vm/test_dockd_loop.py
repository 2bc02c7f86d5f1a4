"""dockd's loop closed on real V4L2 controls under a real kernel: the real dockd owns kernel/vptz's
virtual PTZ webcam in the VM (tests/vm/run.sh) and is driven through its API — a zoom by
motion.orient, a walking subject by tracking.observe, an unplug and a replug — while v4l2-ctl, a
second open of the same device, reads what the camera did. One boot; guest_dockd_loop.sh records,
these tests judge."""
import json
import math

import pytest

ARCSEC = 180 * 3600 / math.pi
STEP = 3600  # the tiny2 profile's pan/tilt step, arc-seconds
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


def test_dockd_reattaches_a_replugged_camera(vm):
    replug = json.loads(text(vm, "replug.json"))
    assert text(vm, "replug.rc").strip() == "0", (replug, text(vm, "replug.err"), log(vm))
    # The target is 2 s; 0.28-2.19 s measured (BENCHMARKS.md). The reconnect backoff
    # (0.25 s doubling to 8 s) decides it, so the bound here is the backoff's longest wait.
    assert replug["reattach_s"] < 10, replug
    assert text(vm, "dockd.rc").strip() == "0", log(vm)


def test_a_camera_turning_when_it_returns_is_stopped_on_reattach(vm):
    replug = json.loads(text(vm, "replug.json"))
    assert "pan_3s_after" in replug, (replug, text(vm, "replug.err"), log(vm))
    # While away the camera went on at someone else's speed...
    assert replug["pan_at_unplug"] - replug["pan_while_away"] > 2 * STEP, replug
    # ...and dockd stopped it once it had it again: at 7.5°/s two seconds would be 54000″.
    assert abs(replug["pan_3s_after"] - replug["pan_1s_after"]) <= 2 * STEP, (replug, log(vm))
