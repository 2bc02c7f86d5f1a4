"""Hotplug through real libudev in dockd, driven by a umockdev testbed (no udev daemon runs here)."""
import json
import shutil
import subprocess

import pytest

from conftest import BIN, ROOT


@pytest.mark.skipif(shutil.which("umockdev-wrapper") is None, reason="needs umockdev (make deps installs it)")
def test_stands_attach_on_add_and_release_on_remove():
    out = subprocess.run(["umockdev-wrapper", "/usr/bin/python3", str(ROOT / "tests" / "integration" / "umockdev_hotplug.py"),
                          str(BIN / "dockd")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["at_start"] == ["serial:/dev/ttyACM0@115200"], seen
    assert seen["after_add"] == ["serial:/dev/ttyACM0@115200", "serial:/dev/ttyACM1@115200"], seen
    assert seen["after_remove"] == ["serial:/dev/ttyACM1@115200"], seen
