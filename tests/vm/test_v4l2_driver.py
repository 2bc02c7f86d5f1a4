"""The v4l2 driver under a real kernel: the real dockd, built on the host, owns kernel/vptz's
virtual PTZ webcam in the VM (tests/vm/run.sh) through the V4L2 control ioctls; dockctl orients it
and v4l2-ctl reads the pose the kernel holds; dockd stopped mid-move leaves the camera still. One
boot; guest_dockd_v4l2.sh records, these tests judge."""
import json
import math
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
BIN = Path(os.environ.get("DOCK_BIN", ROOT / ".build" / "debug"))
ARCSEC = 180 * 3600 / math.pi
STEP = 3600  # the tiny2 profile's pan/tilt step, arc-seconds
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def vm(tmp_path_factory):
    out = tmp_path_factory.mktemp("dockd-v4l2-vm")
    run = subprocess.run(["bash", str(HERE / "run.sh"), "--rw", str(out), "--timeout", "400", "--console", str(out / "console.txt"),
                          "--", "sh", str(HERE / "guest_dockd_v4l2.sh"), str(out), str(BIN)],
                         cwd=ROOT, capture_output=True, text=True, timeout=580)
    if run.returncode != 0:
        pytest.fail(f"run.sh exited {run.returncode}\nstdout: {run.stdout[-3000:]}\nstderr: {run.stderr[-3000:]}")
    return out


def log(vm):
    return (vm / "dockd.log").read_text(errors="replace")[-4000:]


def test_dockd_connects_the_camera_with_its_ranges(vm):
    stands = json.loads((vm / "list.json").read_text().splitlines()[-1])
    stand = stands[0] if isinstance(stands, list) else stands
    text = json.dumps(stand)
    assert '"connected"' in text and "v4l2" in text, text + log(vm)
    assert "pose read back" in text, text


def test_an_orientation_reaches_the_camera_within_its_step(vm):
    assert (vm / "orient.rc").read_text().strip() == "0", (vm / "orient.err").read_text() + log(vm)
    pan, tilt = (int(v) for v in (vm / "pose-after-orient.txt").read_text().split())
    # yaw 0.3 rad left is pan −0.3 rad; pitch 0.1 rad up is tilt +0.1 rad
    assert abs(pan - (-0.3 * ARCSEC)) <= STEP, (pan, log(vm))
    assert abs(tilt - 0.1 * ARCSEC) <= STEP, (tilt, log(vm))


def test_sigterm_mid_move_leaves_the_camera_still(vm):
    assert (vm / "dockd.rc").read_text().strip() == "0", log(vm)
    before = int((vm / "pan-before-term.txt").read_text())
    at_exit = int((vm / "pan-at-exit.txt").read_text())
    later = int((vm / "pan-2s-later.txt").read_text())
    assert before > -0.3 * ARCSEC + STEP, f"the second move had not started: pan {before}"
    # The move (to pan +1.5 rad, 309000″) was stopped: two seconds later it has not gone on.
    assert later == at_exit or abs(later - at_exit) <= 2 * STEP, (before, at_exit, later, log(vm))
    assert later < 1.5 * ARCSEC - 10 * STEP, (before, at_exit, later)
