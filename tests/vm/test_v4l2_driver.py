"""The v4l2 driver under a real kernel: the real dockd, built on the host, owns kernel/vptz's
virtual PTZ webcam in the VM (tests/vm/run.sh) through the V4L2 control ioctls; dockctl orients it
and v4l2-ctl reads the pose the kernel holds; dockd stopped mid-move leaves the camera still, its stop
there soon after the signal (vptz counts the sets it receives and stamps the last). The
same for a camera with no absolute pan/tilt (steered by relative steps, its pose estimated) and for
one steered by speed. One boot; guest_dockd_v4l2.sh records, these tests judge."""
import json
import math
from pathlib import Path

import pytest

ARCSEC = 180 * 3600 / math.pi
STEP = 3600  # the tiny2 profile's pan/tilt step, arc-seconds
# The profile dockd matches to vptz's tiny2 card: the least time between two sets it may send.
COMMAND_INTERVAL = json.loads((Path(__file__).resolve().parents[2] / "profiles/v4l2/obsbot-tiny-2.json").read_text())["commandInterval"]
# Issue 23's target: the stop at the camera within one command interval of SIGTERM (a stop, like
# any set, waits for the interval since the last one). Under emulation it took 0.12-0.96 s mid-move,
# 0.06-0.55 s since the stands are stopped first and a repeated STOP sends nothing (BENCHMARKS.md):
# the VM's one emulated CPU, shared by dockd and the guest's script, runs at a fraction of a native
# one on a loaded host, and the signal's way to dockd's handler is many steps of it. Timed by the guest's clock, which runs
# in real time: a loaded host stretches everything it times. The bound allows 2 s more, twice the
# worst seen at host load 8-27.
STOP_MARGIN_S = 2.0
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def vm(boot, dock_bin):
    return boot("dockd-v4l2-vm", "guest_dockd_v4l2.sh", dock_bin)


def log(vm, name=None):
    path = vm / (f"dockd-{name}.log" if name else "dockd.log")
    return path.read_text(errors="replace")[-4000:] if path.exists() else f"(no {path.name})"


def test_dockd_connects_the_camera_with_its_ranges(vm):
    stands = json.loads((vm / "list.json").read_text().splitlines()[-1])
    stand = stands[0] if isinstance(stands, list) else stands
    text = json.dumps(stand)
    assert '"connected"' in text and "v4l2" in text, text + log(vm)
    assert "pose read back" in text, text


def test_the_cameras_own_tracking_is_switched_off_by_its_profile_and_put_back_at_exit(vm):
    stands = (vm / "list.json").read_text()
    assert "profile obsbot-tiny-2" in stands, stands
    assert (vm / "ai-mode-before.txt").read_text().strip() == "2", "vptz loads with its tracking on"
    assert (vm / "ai-mode-after.txt").read_text().strip() == "0", log(vm)
    # read before it was switched off (GET_CUR) and put back as it was when dockd exits
    assert (vm / "ai-mode-at-exit.txt").read_text().strip() == "2", log(vm)


def test_an_orientation_reaches_the_camera_within_its_step(vm):
    assert (vm / "orient.rc").read_text().strip() == "0", (vm / "orient.err").read_text() + log(vm)
    pan, tilt = (int(v) for v in (vm / "pose-after-orient.txt").read_text().split())
    # yaw 0.3 rad left is pan −0.3 rad; pitch 0.1 rad up is tilt +0.1 rad
    assert abs(pan - (-0.3 * ARCSEC)) <= STEP, (pan, log(vm))
    assert abs(tilt - 0.1 * ARCSEC) <= STEP, (tilt, log(vm))


def test_the_profiles_zoom_is_an_axis_read_back_in_magnification(vm):
    stands = json.loads((vm / "list.json").read_text().splitlines()[-1])
    stand = stands[0] if isinstance(stands, list) else stands
    assert "zoom by absolute" in json.dumps(stand), stand
    def axes_in(value):
        if isinstance(value, dict):
            if isinstance(value.get("axes"), list):
                return value["axes"]
            value = list(value.values())
        if isinstance(value, list):
            return next((found for v in value if (found := axes_in(v))), None)
        return None
    axes = {a["axis"]: a for a in axes_in(stand)}
    # obsbot-tiny-2: 4x at ZOOM_ABSOLUTE's top; vptz's tiny2 lists 100..400.
    assert axes["zoom"]["min"] == 1 and axes["zoom"]["max"] == 4, axes
    zooms = [json.loads(line).get("params", json.loads(line)).get("positions", {}).get("zoom")
             for line in (vm / "watch-zoom.json").read_text().splitlines() if '"positions"' in line]
    # zoom_absolute 250 set with v4l2-ctl: 1 + 150/300 × 3 = 2.5x
    assert zooms and zooms[-1] == pytest.approx(2.5, abs=1e-3), ((vm / "watch-zoom.json").read_text()[-1500:], log(vm))


def test_sigterm_mid_move_leaves_the_camera_still(vm):
    assert (vm / "dockd.rc").read_text().strip() == "0", log(vm)
    before = int((vm / "pan-before-term.txt").read_text())
    at_exit = int((vm / "pan-at-exit.txt").read_text())
    later = int((vm / "pan-2s-later.txt").read_text())
    assert before > -0.3 * ARCSEC + STEP, f"the second move had not started: pan {before}"
    # The move (to pan +1.5 rad, 309000″) was stopped: two seconds later it has not gone on.
    assert later == at_exit or abs(later - at_exit) <= 2 * STEP, (before, at_exit, later, log(vm))
    assert later < 1.5 * ARCSEC - 10 * STEP, (before, at_exit, later)
    stop = stop_after_sigterm(vm)
    print(f"\nabsolute: the stop reached the camera {stop:.3f} s after SIGTERM (command interval {COMMAND_INTERVAL} s)")
    assert 0 < stop <= COMMAND_INTERVAL + STOP_MARGIN_S, (stop, log(vm))


def stop_after_sigterm(vm, prefix=""):
    """Seconds from SIGTERM to the last control set vptz received (the stop), by the guest's clock
    (the signal's time read from /proc/uptime just before it, in 10 ms steps rounded down: up to
    10 ms more than it was); negative when no set came after the signal."""
    sent = float((vm / f"{prefix}term-uptime.txt").read_text())
    _count, last, _gap = (int(v) for v in (vm / f"{prefix}sets-at-exit.txt").read_text().split())
    return last / 1e9 - sent


def truth(vm, name):
    """/sys/module/vptz/parameters/pose: PAN TILT in arc-seconds, the module's own."""
    return tuple(int(v) for v in (vm / name).read_text().split())


def test_a_camera_without_absolute_controls_is_steered_by_relative_steps(vm):
    text = (vm / "list-relative.json").read_text()
    assert "pan by relative, tilt by relative" in text and "pose estimated" in text, text
    assert (vm / "orient-relative.rc").read_text().strip() == "0", (vm / "orient-relative.err").read_text() + log(vm, "relative")
    pan, tilt = truth(vm, "pose-relative.txt")
    # Steps land on the 3600″ step; the estimate it steps from adds at most a step more.
    assert abs(pan - (-0.3 * ARCSEC)) <= 2 * STEP, (pan, log(vm, "relative"))
    assert abs(tilt - 0.1 * ARCSEC) <= 2 * STEP, (tilt, log(vm, "relative"))
    assert (vm / "dockd-relative.rc").read_text().strip() == "0", log(vm, "relative")


def test_a_camera_steered_by_speed_reaches_its_target_and_stops_on_sigterm(vm):
    text = (vm / "list-speed.json").read_text()
    assert "pan by speed, tilt by speed" in text and "pose read back" in text, text
    assert (vm / "orient-speed.rc").read_text().strip() == "0", (vm / "orient-speed.err").read_text() + log(vm, "speed")
    pan, tilt = truth(vm, "pose-speed.txt")
    assert abs(pan - (-0.3 * ARCSEC)) <= 2 * STEP, (pan, log(vm, "speed"))
    assert abs(tilt - 0.1 * ARCSEC) <= 2 * STEP, (tilt, log(vm, "speed"))
    assert (vm / "dockd-speed.rc").read_text().strip() == "0", log(vm, "speed")
    before = int((vm / "speed-pan-before-term.txt").read_text())
    at_exit, _ = truth(vm, "speed-at-exit.txt")
    later, _ = truth(vm, "speed-2s-later.txt")
    assert before > -0.3 * ARCSEC + STEP, f"the second move had not started: pan {before}"
    # At 60°/s a camera left at its speed would have run 2 s × 216000″/s further, to its end stop.
    assert abs(later - at_exit) <= STEP, (before, at_exit, later, log(vm, "speed"))
    assert later < 1.5 * ARCSEC - 10 * STEP, (before, at_exit, later)
    stop = stop_after_sigterm(vm, "speed-")
    print(f"\nspeed: the stop reached the camera {stop:.3f} s after SIGTERM (command interval {COMMAND_INTERVAL} s)")
    assert 0 < stop <= COMMAND_INTERVAL + STOP_MARGIN_S, (stop, log(vm, "speed"))
