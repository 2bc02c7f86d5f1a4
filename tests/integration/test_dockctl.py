"""dockctl, the command-line client, against the real daemon."""
import os
import subprocess

from conftest import BIN


def dockctl(rig_or_socket, *args, timeout=30):
    socket_path = rig_or_socket if isinstance(rig_or_socket, str) else str(rig_or_socket.socket_path)
    return subprocess.run([str(BIN / "dockctl"), *args, "--socket", socket_path],
                          capture_output=True, text=True, timeout=timeout)


def test_status_list_and_battery(rig):
    rig.connected_stand(rig.client())
    status = dockctl(rig, "status")
    assert status.returncode == 0 and "SIM-0001  connected" in status.stdout, status
    listing = dockctl(rig, "list")
    assert "pitch: -0.600 … 0.900 rad" in listing.stdout and "yaw: continuous" in listing.stdout, listing.stdout
    assert "internal:" in dockctl(rig, "battery").stdout


def test_animate_and_orient_wait_for_completion(rig):
    rig.connected_stand(rig.client())
    out = dockctl(rig, "animate", "yes", "--wait")
    assert out.returncode == 0 and "completed" in out.stdout, out
    out = dockctl(rig, "orient", "--yaw", "0.4", "--duration", "0.5", "--wait")
    assert out.returncode == 0 and "completed" in out.stdout, out


def test_events_prints_button_presses(rig):
    rig.connected_stand(rig.client())
    proc = subprocess.Popen([str(BIN / "dockctl"), "events", "--seconds", "3", "--socket", str(rig.socket_path)],
                            stdout=subprocess.PIPE, text=True)
    import time
    time.sleep(0.5)
    rig.sim_command("press shutter")
    out, _ = proc.communicate(timeout=10)
    assert "shutter pressed=true" in out, out


def test_clear_errors_and_exit_codes(rig, tmp_path):
    missing = dockctl(str(tmp_path / "nothing.sock"), "status")
    assert missing.returncode == 69 and "dockd is not running" in missing.stderr
    bad = dockctl(rig, "animate", "moonwalk")
    assert bad.returncode == 1 and "unknown animation" in bad.stderr
    usage = dockctl(rig, "track", "sideways")
    assert usage.returncode == 64 and "on or off" in usage.stderr


def test_completions_are_generated():
    out = subprocess.run([str(BIN / "dockctl"), "--generate-completion-script", "bash"], capture_output=True, text=True)
    assert out.returncode == 0 and "animate" in out.stdout


def test_tracking_commands(rig):
    rig.connected_stand(rig.client())
    assert "no subjects tracked" in dockctl(rig, "subjects").stdout
    assert dockctl(rig, "framing", "left").stdout.strip() == "framing left"
    assert dockctl(rig, "framing", "sideways").returncode == 64
    assert dockctl(rig, "roi", "0.1", "0.1", "0.8", "0.8").returncode == 0
    bad = dockctl(rig, "roi", "0.5", "0.5", "0.8", "0.8")
    assert bad.returncode == 1 and "inside the frame" in bad.stderr
    none = dockctl(rig, "select", "--x", "0.5", "--y", "0.5")
    assert none.returncode == 1 and "no subject found" in none.stderr
    assert dockctl(rig, "select").stdout.strip() == "automatic selection"
