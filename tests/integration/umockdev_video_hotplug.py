"""Runs under `umockdev-wrapper /usr/bin/python3` (Debian's python, which has gi): a synthetic
udev testbed announces USB webcams' video4linux nodes, with their USB devices' descriptors in
sysfs as a real camera has them; dockd (started inside the testbed) must attach the PTZ camera's
capture node as a v4l2 stand, and leave alone its metadata node, a plain webcam and a camera
that does not say it captures. Prints one JSON line of what it observed, for test_hotplug.py.
The descriptors are laid out as USB 2.0 and UVC 1.5 define them (see UVCCameraControlsTests)."""
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
work = tempfile.mkdtemp(prefix="dockd-video-hotplug-")
sock_path = os.path.join(work, "dockd.sock")

PAN_TILT_ABSOLUTE, ZOOM_ABSOLUTE, FOCUS_AUTO = 1 << 11, 1 << 9, 1 << 17


def descriptors(controls):
    """A UVC camera's: device, configuration, VideoControl interface, its header, a Camera
    Terminal (ITT_CAMERA) with a 3-byte bmControls, an output terminal, a VideoStreaming interface."""
    return bytes([18, 0x01, 0x00, 0x02, 0xEF, 0x02, 0x01, 64, 0x64, 0x35, 0xF8, 0xFE, 0x00, 0x01, 1, 2, 3, 1]
                 + [9, 0x02, 0x00, 0x01, 2, 1, 0, 0x80, 250]
                 + [9, 0x04, 0, 0, 1, 0x0E, 0x01, 0, 0]
                 + [13, 0x24, 0x01, 0x10, 0x01, 0x50, 0x00, 0x00, 0x6C, 0xDC, 0x02, 1, 1]
                 + [18, 0x24, 0x02, 1, 0x01, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 3,
                    controls & 0xFF, controls >> 8 & 0xFF, controls >> 16 & 0xFF]
                 + [9, 0x24, 0x03, 3, 0x01, 0x01, 0, 2, 0]
                 + [9, 0x04, 1, 0, 1, 0x0E, 0x02, 0, 0])


def stands():
    return sorted((s["endpoint"], s.get("driver")) for s in call(sock_path, "stands.list"))


testbed = UMockdev.Testbed.new()


def usb_camera(name, controls, product="fef8"):
    usb = testbed.add_device("usb", name, None, ["idVendor", "3564", "idProduct", product],
                             ["ID_VENDOR_ID", "3564", "ID_MODEL_ID", product, "DEVTYPE", "usb_device"])
    testbed.set_attribute_binary(usb, "descriptors", descriptors(controls))
    return usb


def video(parent, node, minor, index, capabilities=":capture:"):
    return testbed.add_device("video4linux", node, parent, ["index", str(index), "dev", f"81:{minor}"],
                              ["DEVNAME", f"/dev/{node}", "ID_V4L_CAPABILITIES", capabilities])


# Present at start: a PTZ camera (capture node and metadata node) and a plain webcam.
ptz = usb_camera("1-1", PAN_TILT_ABSOLUTE | ZOOM_ABSOLUTE | FOCUS_AUTO)
present = video(ptz, "video0", 0, 0)
video(ptz, "video1", 1, 1, capabilities=":")
plain = usb_camera("1-2", FOCUS_AUTO, product="0001")
video(plain, "video2", 2, 0)

env = dict(os.environ, UMOCKDEV_DIR=testbed.get_root_dir())
proc = subprocess.Popen([dockd, "--ignore-missing-config", "--config", os.path.join(work, "none"),
                         "--socket", sock_path, "--socket-group", ""], env=env, stderr=subprocess.DEVNULL)
result = {}
try:
    wait(lambda: os.path.exists(sock_path))
    result["at_start"] = stands()
    # A second PTZ camera plugged in, then the first unplugged.
    second = usb_camera("1-3", PAN_TILT_ABSOLUTE, product="fef9")
    added = video(second, "video4", 4, 0)
    testbed.uevent(added, "add")
    wait(lambda: len(stands()) == 2)
    result["after_add"] = stands()
    testbed.uevent(present, "remove")
    wait(lambda: len(stands()) == 1)
    result["after_remove"] = stands()
    # What the udev rule's IMPORT{program} prints for each node.
    result["udev"] = {node: subprocess.run([dockd, "--uvc-controls", syspath], env=env, capture_output=True, text=True).stdout
                      for node, syspath in [("video0", "/sys/class/video4linux/video0"), ("video2", "/sys/devices/1-2/video2")]}
finally:
    proc.terminate()
    proc.wait(5)
print(json.dumps(result))
