"""The systemd watchdog through a real NOTIFY_SOCKET: pings while every loop runs, none while a
stand's control loop is stalled (forced with dockd's --debug-stall-on-sigusr2), and the stand, no
longer hearing from dockd, stops its motors on its own heartbeat timeout."""
import os
import signal
import socket
import subprocess
import time

from conftest import BIN, Client, wait_for


def pings(sock, seconds):
    """(monotonic time, datagram) for every notification during `seconds`."""
    got = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sock.settimeout(max(0.01, end - time.monotonic()))
        try:
            got.append((time.monotonic(), sock.recv(4096).decode()))
        except socket.timeout:
            break
    return got


def stop(*processes):
    for p in processes:
        p.terminate()
    for p in processes:
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()


def test_a_stalled_control_loop_stops_the_watchdog_pings_and_the_stand_stops_itself(tmp_path):
    notify = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(notify))
    link = tmp_path / "stand"
    sim = subprocess.Popen([str(BIN / "dock-sim"), "--pty", "--link", str(link), "--seed", "5", "--log-frames"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(tmp_path / "sim.err", "wb"))
    assert sim.stdout.readline().startswith(b"pty ")
    log = tmp_path / "dockd.err"
    env = dict(os.environ, NOTIFY_SOCKET=str(notify), WATCHDOG_USEC="1000000")
    dockd = subprocess.Popen([str(BIN / "dockd"), "--ignore-missing-config", "--config", str(tmp_path / "none"),
                              "--device", str(link), "--socket", str(tmp_path / "d.sock"), "--socket-group", "",
                              "--debug-stall-on-sigusr2", "3"], env=env, stderr=open(log, "wb"))
    try:
        wait_for(lambda: (tmp_path / "d.sock").exists(), 10, "dockd's socket")
        c = Client(tmp_path / "d.sock")
        wait_for(lambda: any(s["state"] == "connected" for s in c.result("stands.list")), 10, "the stand")
        healthy = [t for t, m in pings(sock, 1.5) if "WATCHDOG=1" in m]
        assert len(healthy) >= 4, f"{len(healthy)} pings in 1.5 s at a 1 s watchdog (dockd pings every 250 ms)"

        c.result("subscribe", {"topics": ["logs", "motion"], "motion_rate": 20})
        c.result("motion.velocity", {"yaw": 0.8})
        time.sleep(0.3)
        stalled_at = time.monotonic()
        dockd.send_signal(signal.SIGUSR2)
        during = pings(sock, 4.5)
        watchdog = [t for t, m in during if "WATCHDOG=1" in m]
        gaps = [b - a for a, b in zip([stalled_at, *watchdog], watchdog)]
        # systemd (WatchdogSec=1s here) would have killed dockd: no ping for longer than the interval.
        assert max(gaps, default=0) > 1.0, f"pings kept coming during the stall: gaps {gaps}"
        assert watchdog and watchdog[-1] > stalled_at + 3, "pings resume once the loop runs again"
        text = log.read_text()
        assert "stalled, not pinging the watchdog" in text and "the control loop of" in text, text[-2000:]
        assert "watchdog pings resumed" in text
        # The stand heard nothing for its heartbeat timeout and stopped by itself. (dockd was not
        # reading either, so the stand's FAULT went unread: dock-sim's frame log shows it.)
        sim_log = (tmp_path / "sim.err").read_text(errors="replace")
        assert 'code 5 "no valid frame from the host for 500 ms: motors stopped"' in sim_log, sim_log[-1500:]
        c.close()
    finally:
        stop(dockd, sim)


def test_a_stand_moving_under_streaming_feedback_keeps_the_watchdog_pinged(tmp_path):
    """While the stand moves and its FEEDBACK streams, the stand host's timer need not fire at all (its
    due time — the link's silence limit, the control step a stalled stream would leave undone — moves
    later with every FEEDBACK): the control loop beats for the watchdog as it handles them."""
    notify = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(notify))
    link = tmp_path / "stand"
    sim = subprocess.Popen([str(BIN / "dock-sim"), "--pty", "--link", str(link), "--seed", "5"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(tmp_path / "sim.err", "wb"))
    assert sim.stdout.readline().startswith(b"pty ")
    log = tmp_path / "dockd.err"
    env = dict(os.environ, NOTIFY_SOCKET=str(notify), WATCHDOG_USEC="1000000")
    dockd = subprocess.Popen([str(BIN / "dockd"), "--ignore-missing-config", "--config", str(tmp_path / "none"),
                              "--device", str(link), "--socket", str(tmp_path / "d.sock"), "--socket-group", ""],
                             env=env, stderr=open(log, "wb"))
    try:
        wait_for(lambda: (tmp_path / "d.sock").exists(), 10, "dockd's socket")
        c = Client(tmp_path / "d.sock")
        wait_for(lambda: any(s["state"] == "connected" for s in c.result("stands.list")), 10, "the stand")
        started = time.monotonic()
        watchdog = []
        # 3 s of motion, the command renewed every 0.2 s (its dead man's switch would end it).
        while time.monotonic() < started + 3:
            c.result("motion.velocity", {"yaw": 0.8})
            watchdog += [t for t, m in pings(sock, 0.2) if "WATCHDOG=1" in m]
        gaps = [b - a for a, b in zip([started, *watchdog], watchdog)]
        # systemd (WatchdogSec=1s here) kills dockd after an interval without a ping.
        assert max(gaps, default=3) < 1.0, f"watchdog pings stopped while the stand moved: gaps {gaps}"
        assert "stalled, not pinging the watchdog" not in log.read_text()
        c.close()
    finally:
        stop(dockd, sim)
