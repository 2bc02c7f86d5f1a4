"""Hotplug through real libudev in dockd, driven by a umockdev testbed (no udev daemon runs here)."""
import json
import shutil
import subprocess

import pytest

from conftest import BIN, ROOT


def in_testbed(script):
    """Runs a umockdev script (Debian's python, for gi) with the real dockd; what it saw, as its last JSON line."""
    out = subprocess.run(["umockdev-wrapper", "/usr/bin/python3", str(ROOT / "tests" / "integration" / script),
                          str(BIN / "dockd")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(shutil.which("umockdev-wrapper") is None, reason="needs umockdev (make deps installs it)")
def test_stands_attach_on_add_and_release_on_remove():
    seen = in_testbed("umockdev_hotplug.py")
    assert seen["at_start"] == ["serial:/dev/ttyACM0@115200"], seen
    assert seen["after_add"] == ["serial:/dev/ttyACM0@115200", "serial:/dev/ttyACM1@115200"], seen
    assert seen["after_remove"] == ["serial:/dev/ttyACM1@115200"], seen


@pytest.mark.skipif(shutil.which("umockdev-wrapper") is None, reason="needs umockdev (make deps installs it)")
def test_a_ptz_webcam_attaches_by_its_usb_descriptors():
    seen = in_testbed("umockdev_video_hotplug.py")
    # Its capture node only: not its metadata node, not the plain webcam beside it.
    assert seen["at_start"] == [["video:/dev/video0", "v4l2"]], seen
    assert seen["after_add"] == [["video:/dev/video0", "v4l2"], ["video:/dev/video4", "v4l2"]], seen
    assert seen["after_remove"] == [["video:/dev/video4", "v4l2"]], seen
    assert seen["udev"]["video0"] == "DOCKD_V4L2_PTZ=1\nDOCKD_UVC_CONTROLS=pantilt-absolute zoom-absolute\n", seen
    assert seen["udev"]["video2"] == "", seen


@pytest.mark.skipif(shutil.which("umockdev-wrapper") is None, reason="needs umockdev (make deps installs it)")
def test_a_configured_stand_is_kept_through_an_unplug():
    seen = in_testbed("umockdev_configured_unplug.py")
    configured = [["serial:/dev/ttyUSB0@9600", "visca"]]
    assert seen["at_start"] == configured, seen
    # Its own link reconnects it (with its address and profile): a release would lose them until a
    # restart, and a replug would not bring it back (hotplug does not know a USB-serial adapter).
    assert seen["after_remove"] == configured, seen
    assert seen["after_add"] == configured, seen
    assert any("/dev/ttyUSB0" in line for line in seen["told_back"]), seen
