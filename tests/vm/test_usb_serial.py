"""A stand configured by a kernel name (/dev/ttyACM0) under a real kernel: a USB gadget on
dummy_hcd is the USB-serial adapter, cdc_acm its host side, the VISCA camera emulator answers on the
gadget's tty (tests/vm/guest_usb_serial.sh). When another adapter gets the stand's name, dockd must
not drive it as the stand; when the stand's own is back, it must take it again."""
import json

import pytest

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def vm(boot, dock_bin):
    return boot("usb-serial-vm", "guest_usb_serial.sh", dock_bin, modules="dummy_hcd,cdc_acm,libcomposite,usb_f_acm")


def text(vm, name):
    path = vm / name
    return path.read_text(errors="replace") if path.exists() else f"(no {name})"


def states(vm, name):
    """The link states `dockctl list --json` printed (a JSON object per stand, one per line)."""
    try:
        return [json.loads(line)["state"] for line in text(vm, name).splitlines() if line.strip()]
    except (ValueError, KeyError):
        return text(vm, name)


def test_another_adapter_on_the_stands_node_is_not_driven_as_the_stand(vm):
    seen = text(vm, "dockd.log")[-4000:] + text(vm, "errors.txt") + text(vm, "plugged.txt")
    assert text(vm, "own-connected.rc").strip() == "0", seen
    assert states(vm, "other.json") in (["disconnected"], ["handshaking"]), seen
    refusals = [line for line in text(vm, "dockd.log").splitlines() if "is now another device" in line]
    assert refusals, seen
    assert "/dev/ttyACM0 is now another device (usb 0403:6001 serial B2), not this stand's (usb 0403:6001 serial A1)" in refusals[0], refusals


def test_the_stands_own_adapter_is_taken_again(vm):
    seen = text(vm, "dockd.log")[-4000:] + text(vm, "errors.txt")
    assert text(vm, "own-again-connected.rc").strip() == "0", seen
    assert states(vm, "own-again.json") == ["connected"], seen
