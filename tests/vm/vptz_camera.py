"""What vptz's camera says, for the VM's guest scripts: PAN_ABSOLUTE through v4l2-ctl (a second
open of the device, beside dockd's), and the module's own pose (its ground truth)."""
import subprocess

POSE = "/sys/module/vptz/parameters/pose"
PLUGGED = "/sys/module/vptz/parameters/plugged"


def v4l2_ctl_pan(device):
    """PAN_ABSOLUTE in arc-seconds, read with Debian's v4l2-ctl."""
    out = subprocess.run(["v4l2-ctl", "-d", device, "-C", "pan_absolute"], capture_output=True, text=True, check=True).stdout
    return int(out.split(":")[1])


def true_pose():
    """(pan, tilt) in arc-seconds, where the module has the camera now."""
    with open(POSE) as f:
        pan, tilt = (int(v) for v in f.read().split())
    return pan, tilt
