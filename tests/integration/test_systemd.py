"""dockd as systemd runs it: sd_notify readiness, status and watchdog through a real NOTIFY_SOCKET,
socket activation through systemd-socket-activate, and the unit's security exposure."""
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN, ROOT, connect, wait_for


def notify_socket(tmp_path):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(10)
    return sock, path


def read_notifications(sock, until, timeout=10):
    """Datagrams from dockd until one contains `until`; returns all of them."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            seen.append(sock.recv(4096).decode())
        except socket.timeout:
            break
        if until in seen[-1]:
            return seen
    raise AssertionError(f"no {until!r} from dockd; got {seen}")


def test_ready_status_and_watchdog_over_notify_socket(tmp_path):
    sock, path = notify_socket(tmp_path)
    env = dict(os.environ, NOTIFY_SOCKET=str(path), WATCHDOG_USEC="400000")
    started = time.monotonic()
    proc = subprocess.Popen([str(BIN / "dockd"), "--ignore-missing-config", "--config", str(tmp_path / "none"),
                             "--socket", str(tmp_path / "d.sock"), "--socket-group", ""],
                            env=env, stderr=subprocess.DEVNULL)
    try:
        ready = read_notifications(sock, "READY=1")
        assert any("STATUS=" in m for m in ready)
        # READY comes only once the API socket is bound.
        assert (tmp_path / "d.sock").exists()
        assert time.monotonic() - started < 10
        read_notifications(sock, "WATCHDOG=1", timeout=3)
        proc.terminate()
        read_notifications(sock, "STOPPING=1", timeout=5)
        assert proc.wait(5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.skipif(shutil.which("systemd-socket-activate") is None, reason="needs systemd-socket-activate")
def test_socket_activation_serves_on_the_inherited_socket(tmp_path):
    path = tmp_path / "activated.sock"
    proc = subprocess.Popen(["systemd-socket-activate", "-l", str(path), "--fdname=api",
                             str(BIN / "dockd"), "--ignore-missing-config", "--config", str(tmp_path / "none"),
                             "--socket", str(tmp_path / "unused.sock")],
                            stderr=subprocess.DEVNULL)
    try:
        wait_for(path.exists, 5, "the activation socket")
        # systemd-socket-activate starts dockd on the first connection, passing the listening socket.
        client = wait_for(lambda: connect(path), 10, "a connection")
        assert client.result("dockd.version")["daemon"] == "dockd"
        assert not (tmp_path / "unused.sock").exists(), "dockd used the passed socket, not its own"
        client.close()
    finally:
        proc.terminate()
        proc.wait(5)


def test_service_unit_is_hardened():
    out = subprocess.run(["systemd-analyze", "security", "--offline=true", str(ROOT / "systemd" / "dockd.service")],
                         capture_output=True, text=True, timeout=60)
    match = re.search(r"Overall exposure level for dockd.service: ([0-9.]+)", out.stdout + out.stderr)
    assert match, out.stdout[-500:] + out.stderr[-500:]
    # 1.5, plus 0.2 for SystemCallFilter=setpriority: libdispatch sets its worker threads' nice values,
    # and refused it logged an error per thread at every start (issue 13).
    assert float(match.group(1)) <= 1.7, f"exposure {match.group(1)} > 1.7"

