"""Runs under `umockdev-wrapper /usr/bin/python3` (Debian's python, which has gi): a stand configured
in dockd.conf (a VISCA camera on a USB-serial adapter, which hotplug does not recognise) is unplugged
and plugged back. dockd (started inside the testbed, hotplug on) must keep owning it, with its
configured driver and options, rather than releasing it on `remove` as it does a hotplugged stand.
Prints one JSON line of what it observed, for test_hotplug.py."""
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
work = tempfile.mkdtemp(prefix="dockd-unplug-")
sock_path = os.path.join(work, "dockd.sock")
config = os.path.join(work, "dockd.conf")
with open(config, "w") as f:
    f.write('[[device]]\npath = "/dev/ttyUSB0"\ndriver = "visca"\naddress = 1\nprofile = "generic-ptzoptics"\n')


def stands():
    return sorted((s["endpoint"], s.get("driver")) for s in call(sock_path, "stands.list"))


testbed = UMockdev.Testbed.new()
adapter = testbed.add_device("tty", "ttyUSB0", None, ["dev", "188:0"],
                             ["DEVNAME", "/dev/ttyUSB0", "ID_SERIAL", "FTDI_FT232R_A1", "ID_VENDOR_ID", "0403"])
env = dict(os.environ, UMOCKDEV_DIR=testbed.get_root_dir())
log = open(os.path.join(work, "dockd.log"), "w")
proc = subprocess.Popen([dockd, "--config", config, "--socket", sock_path, "--socket-group", ""],
                        env=env, stderr=log)
result = {}
try:
    wait(lambda: os.path.exists(sock_path))
    result["at_start"] = stands()
    testbed.uevent(adapter, "remove")
    # Released, it would be gone within this wait; kept, the wait runs out.
    wait(lambda: stands() != result["at_start"], timeout=3)
    result["after_remove"] = stands()
    testbed.uevent(adapter, "add")
    # The kept stand is told its device is back (and tries it at once rather than at its backoff).
    wait(lambda: "device is back" in open(log.name).read())
    result["after_add"] = stands()
    result["told_back"] = [line for line in open(log.name) if "device is back" in line]
finally:
    proc.terminate()
    proc.wait(5)
print(json.dumps(result))
