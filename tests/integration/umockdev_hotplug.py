"""Runs under `umockdev-wrapper /usr/bin/python3` (Debian's python, which has gi): a synthetic
udev testbed announces a stand's tty; dockd (started inside the testbed) must attach it on `add`
and release it on `remove`. Prints one JSON line of what it observed, for test_hotplug.py."""
import json
import os
import subprocess
import sys
import tempfile

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev  # noqa: E402
from umockdev_rig import call, wait  # noqa: E402

dockd = sys.argv[1]
work = tempfile.mkdtemp(prefix="dockd-hotplug-")
sock_path = os.path.join(work, "dockd.sock")


def endpoints():
    return sorted(s["endpoint"] for s in call(sock_path, "stands.list"))


testbed = UMockdev.Testbed.new()
# A stand already plugged in before dockd starts (found by the startup scan)...
present = testbed.add_device("tty", "ttyACM0", None, ["dev", "166:0"],
                             ["DEVNAME", "/dev/ttyACM0", "ID_SERIAL", "Dock_Stand_0001", "DOCKD_STAND", "1"])
# ...and a USB-serial adapter that is not a stand: it must be left alone.
testbed.add_device("tty", "ttyUSB0", None, ["dev", "188:0"],
                   ["DEVNAME", "/dev/ttyUSB0", "ID_SERIAL", "FTDI_FT232R_A1", "ID_VENDOR_ID", "0403"])

env = dict(os.environ, UMOCKDEV_DIR=testbed.get_root_dir())
proc = subprocess.Popen([dockd, "--ignore-missing-config", "--config", os.path.join(work, "none"),
                         "--socket", sock_path, "--socket-group", ""], env=env, stderr=subprocess.DEVNULL)
result = {}
try:
    wait(lambda: os.path.exists(sock_path))
    result["at_start"] = endpoints()
    # Plug a second stand (matched by our USB id), then unplug the first.
    added = testbed.add_device("tty", "ttyACM1", None, ["dev", "166:1"],
                               ["DEVNAME", "/dev/ttyACM1", "ID_SERIAL", "Dock_Stand_0002",
                                "ID_VENDOR_ID", "1209", "ID_MODEL_ID", "d0c0"])
    testbed.uevent(added, "add")
    wait(lambda: len(endpoints()) == 2)
    result["after_add"] = endpoints()
    testbed.uevent(present, "remove")
    wait(lambda: len(endpoints()) == 1)
    result["after_remove"] = endpoints()
finally:
    proc.terminate()
    proc.wait(5)
print(json.dumps(result))
