"""Configuration errors, several stands at once, Bluetooth on a host without it, slow subscribers."""
import math
import signal
import socket
import subprocess
import time

import pytest

from conftest import BIN, Client, Rig, connect, start_sims, wait_for


def run_dockd(tmp_path, config_text, *args, timeout=10):
    config = tmp_path / "dockd.conf"
    config.write_text(config_text)
    return subprocess.run([str(BIN / "dockd"), "--config", str(config), "--socket", str(tmp_path / "d.sock"),
                           "--socket-group", "", "--no-hotplug", *args], capture_output=True, text=True, timeout=timeout)


def test_a_syntax_error_names_the_line_and_exits_78(tmp_path):
    out = run_dockd(tmp_path, '[daemon]\nlog_level = "info"\nsocket = \n')
    assert out.returncode == 78
    assert "dockd.conf:3:" in out.stderr, out.stderr


def test_a_wrong_value_names_the_key(tmp_path):
    out = run_dockd(tmp_path, '[daemon]\nheartbeat_timeout_ms = 20\n')
    assert out.returncode == 78 and "daemon.heartbeat_timeout_ms" in out.stderr, out.stderr
    out = run_dockd(tmp_path, '[[device]]\npath = "/dev/ttyACM0"\nunix = "/tmp/x"\n')
    assert out.returncode == 78 and "device[0]" in out.stderr, out.stderr
    out = run_dockd(tmp_path, '[[device]]\npath = 5\n')
    assert out.returncode == 78 and "path" in out.stderr, out.stderr
    out = run_dockd(tmp_path, '[tracking]\nlost_behaviour = "sideways"\n')
    assert out.returncode == 78 and "tracking.lost_behaviour" in out.stderr, out.stderr
    # ConfigFuzz's port rule caught these on hand-written inputs: ports 0 and 99999 were accepted
    # (getaddrinfo takes 99999 as 34463).
    for port in (0, 99999):
        out = run_dockd(tmp_path, f'[[device]]\nudp = "127.0.0.1:{port}"\ndriver = "mavlink"\n')
        assert out.returncode == 78 and "device[0]: udp and tcp take HOST:PORT, the port 1…65535" in out.stderr, out.stderr


def test_what_toml_plus_plus_asserts_on_is_refused_with_its_line_not_an_abort(tmp_path):
    # Fuzz/known/ConfigFuzz/KNOWN-2, 3 and 4: toml++ 3.4 (in TOMLKit) asserted, and dockd aborted (exit 134),
    # on a control character, a table header that does not start with a key and a '}' as an array element.
    out = run_dockd(tmp_path, '[[\x18device]]\npath = "/dev/ttyACM0"\n')
    assert out.returncode == 78 and "dockd.conf:1:3: control character U+0018" in out.stderr, out.stderr
    out = run_dockd(tmp_path, '[daemon]\r\nlog_level = "info"\rsocket = "/tmp/x"\n')
    assert out.returncode == 78 and "dockd.conf:2:19: control character U+000D" in out.stderr, out.stderr
    out = run_dockd(tmp_path, '[[:52381"\ndriver = "visca"\n')
    assert out.returncode == 78 and "dockd.conf:1:3: a table header must start with a key" in out.stderr, out.stderr
    out = run_dockd(tmp_path, '[camera]\n[ [a]]\n')
    assert out.returncode == 78 and "dockd.conf:2:" in out.stderr, out.stderr
    out = run_dockd(tmp_path, 'a = [1, # c\n}\n')  # KNOWN-4
    assert out.returncode == 78 and "dockd.conf:2:1: expected a value in the array, saw '}'" in out.stderr, out.stderr


def test_brackets_inside_values_and_strings_are_not_table_headers(tmp_path):
    # The check above must not refuse valid TOML: these reach the parser, which only objects to the last key.
    text = ('note = """\n[:not a header\n"""\nlist = [\n[+1], { a = "[:" },\n]\n'
            "quoted = '[:' # [:\n[daemon]\nheartbeat_timeout_ms = 20\n")
    out = run_dockd(tmp_path, text)
    assert out.returncode == 78 and "daemon.heartbeat_timeout_ms" in out.stderr, out.stderr


def test_two_stands_are_named_by_serial_and_bluetooth_fails_for_its_device_only(tmp_path):
    sims = start_sims(tmp_path, ("STAND-A", "STAND-B"))
    config = tmp_path / "dockd.conf"
    config.write_text(f'[[device]]\npath = "{tmp_path / "STAND-A"}"\n[[device]]\npath = "{tmp_path / "STAND-B"}"\n'
                      '[[device]]\nbluetooth = "00:11:22:33:44:55"\nchannel = 1\n')
    dockd = subprocess.Popen([str(BIN / "dockd"), "--config", str(config), "--socket", str(tmp_path / "d.sock"),
                              "--socket-group", "", "--no-hotplug"], stderr=subprocess.DEVNULL)
    try:
        wait_for((tmp_path / "d.sock").exists, 10, "dockd's socket")
        c = Client(tmp_path / "d.sock")

        def settled():
            stands = c.result("stands.list")
            connected = sorted(s["id"] for s in stands if s["state"] == "connected")
            bt = next(s for s in stands if s["endpoint"].startswith("rfcomm:"))
            return (connected, bt) if connected == ["STAND-A", "STAND-B"] and bt["last_error"] else None
        connected, bt = wait_for(settled, 10, "both stands connected and the Bluetooth error reported")
        assert "AF_BLUETOOTH" in bt["last_error"] and bt["state"] != "connected"
        # Each stand is addressed by its serial, not its path.
        c.result("motion.orient", {"stand": "STAND-B", "yaw": 0.3, "duration": 0.5})
        assert c.call("motion.orient", {"stand": "NOPE", "yaw": 0.3})["error"]["code"] == -32001
        c.close()
    finally:
        dockd.terminate(); dockd.wait(5)
        for s in sims:
            s.terminate(); s.wait(5)


def test_a_subscriber_that_never_reads_is_dropped_and_others_keep_their_stream(rig):
    reader = rig.client()
    rig.connected_stand(reader)
    stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect(str(rig.socket_path))
    stalled.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"topics":["motion"],"motion_rate":1000}}\n')
    reader.result("subscribe", {"topics": ["motion"], "motion_rate": 10})

    def dropped():
        # Once dropped, the connection is closed: the peer's data ends (after the backlog).
        stalled.setblocking(False)
        try:
            while True:
                chunk = stalled.recv(1 << 20)
                if chunk == b"":
                    return True
        except BlockingIOError:
            return False
    # Wait without reading: sleep, then check. The backlog is read only after the deadline.
    time.sleep(8)
    assert wait_for(dropped, 10, "the stalled subscriber to be dropped")
    # The healthy subscriber still gets fresh motion, and the stand is still controlled.
    assert reader.latest("motion.state")["params"]["stand"]
    reader.result("motion.velocity", {"yaw": 0.1})
    stalled.close()


def test_sighup_attaches_added_devices_and_keeps_the_old_config_when_the_new_one_is_bad(tmp_path):
    link = tmp_path / "stand"
    sim = subprocess.Popen([str(BIN / "dock-sim"), "--pty", "--link", str(link), "--serial", "HUP-1"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    config = tmp_path / "dockd.conf"
    config.write_text("[daemon]\n")
    dockd = subprocess.Popen([str(BIN / "dockd"), "--config", str(config), "--socket", str(tmp_path / "d.sock"),
                              "--socket-group", "", "--no-hotplug"], stderr=open(tmp_path / "dockd.err", "wb"))
    try:
        wait_for((tmp_path / "d.sock").exists, 10, "dockd's socket")
        wait_for(link.exists, 5, "the stand's link")
        c = Client(tmp_path / "d.sock")
        assert c.result("stands.list") == []
        config.write_text("[daemon\nbroken")
        dockd.send_signal(signal.SIGHUP)
        wait_for(lambda: "not reloaded" in (tmp_path / "dockd.err").read_text(), 5, "the reload error in the log")
        assert dockd.poll() is None and c.result("stands.list") == []
        config.write_text(f'[[device]]\npath = "{link}"\n')
        dockd.send_signal(signal.SIGHUP)
        wait_for(lambda: [s["id"] for s in c.result("stands.list") if s["state"] == "connected"] == ["HUP-1"], 10,
                 "the added stand to connect")
        config.write_text("[daemon]\n")
        dockd.send_signal(signal.SIGHUP)
        wait_for(lambda: c.result("stands.list") == [], 10, "the removed stand to be released")
        c.close()
    finally:
        dockd.terminate(); dockd.wait(5)
        sim.terminate(); sim.wait(5)


def test_unanswered_commands_are_resent(rig):
    c = rig.client()
    rig.connected_stand(c)
    rig.sim_command("silent 0.4")
    time.sleep(0.05)
    c.result("motion.stop")  # STOP asks for an ACK; the silent stand sends none
    def retried():
        counters = c.result("stand.get")["counters"]
        return counters if counters["retries"] >= 1 else None
    counters = wait_for(retried, 5, "a resent command")
    assert counters["commands_failed"] == 0 or counters["retries"] >= 3


def test_a_lying_stand_is_not_believed(rig):
    """A stand reporting NaN, impossible positions or speeds: dockd drops those samples, reports
    it, and its motion fails safe instead of steering by them."""
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["logs", "motion"], "motion_rate": 10})
    for lie in ("nan", "range", "speed"):
        c.notifications.clear()
        motion = c.result("motion.orient", {"yaw": 0.4 if lie != "range" else -0.4, "duration": 1.0})
        rig.sim_command(f"lie {lie} 0.6")
        fault = c.wait_notification(lambda m: m.get("method") == "stand.fault" and "implausible" in m["params"]["text"], timeout=5)
        assert "rejected implausible feedback" in fault["params"]["text"]
        done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                                   and m["params"]["state"] != "running", timeout=8)
        assert done["params"]["state"] == "failed", done  # no feedback it can trust: it stops
        time.sleep(1.0)  # the lie ends; honest feedback returns
        assert c.result("stand.get")["state"] == "connected"
        time.sleep(0.6)  # the orientation rate limit (2 per second)
    assert c.result("stand.get")["counters"]["invalid_feedback"] >= 3 * 40


def test_a_thousand_clients_are_served_and_their_fds_released(rig):
    import os
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    count = min(1000, soft - 100)
    clients = []
    for _ in range(count):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(rig.socket_path))
        clients.append(s)
    for s in clients:
        s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"dockd.version"}\n')
    answered = 0
    for s in clients:
        s.settimeout(10)
        answered += b'"dockd"' in s.recv(4096)
    assert answered == count
    fds_busy = len(os.listdir(f"/proc/{rig.dockd.pid}/fd"))
    for s in clients:
        s.close()
    wait_for(lambda: len(os.listdir(f"/proc/{rig.dockd.pid}/fd")) < fds_busy - count + 50, 10, "the client fds to be released")
    # Each connection's hub entry goes after its fd closes: wait until only the new client is left.
    probe = rig.client()
    wait_for(lambda: probe.result("dockd.stats")["clients"] == 1, 10, "dockd.stats to count only the live client")


@pytest.fixture
def socket_rig(tmp_path):
    r = Rig(tmp_path, link="unix")
    yield r
    r.stop()


def test_an_observation_flood_is_refused_without_slowing_the_control_loop(socket_rig):
    """The FEEDBACKs dockd takes in per second (counted by the `time` it stamps on each motion.state,
    CLOCK_MONOTONIC as time.monotonic(), so the Python reader's own pace does not count) while a
    client floods it with observations, against the same count just before: a ratio, so a busy
    machine that slows dock-sim and dockd alike does not fail it (an absolute 70/s did, beside
    stress-ng). The stand is on a Unix socket: on a pty, beside stress-ng, 3 runs in 10 lost the
    link for 1.2 s, dockd's heartbeats stamped 100 ms apart on time and delivered all at once (the
    kernel's tty work starved); 12 of 12 passed on a socket beside the same hog."""
    import threading
    rig = socket_rig
    watcher, flooder = rig.client(), rig.client()
    rig.connected_stand(watcher)
    watcher.result("subscribe", {"topics": ["motion"], "motion_rate": 100})
    watcher.latest("motion.state")
    stamps = []

    def read_motion(until):
        """Reads (and keeps the stamps of) motion.state until one stamped after `until`, or forever
        with until=None while the flood runs; a slow reader would be dropped by dockd."""
        try:
            m = watcher.read_message(0.5)
        except (socket.timeout, TimeoutError):
            return False
        if m.get("method") == "motion.state":
            stamps.append(m["params"]["time"])
            return until is not None and stamps[-1] > until
        return False

    def rate(start, end):
        return sum(start <= t <= end for t in stamps) / (end - start)

    before = time.monotonic()
    deadline = before + 60
    while not read_motion(before + 2):
        assert time.monotonic() < deadline, "no motion.state"
    baseline = rate(before, before + 2)

    codes, span = [], []

    def flood():
        frame = b'{"jsonrpc":"2.0","id":1,"method":"tracking.observe","params":{"observations":[]}}\n'
        start = time.monotonic()
        # At least 2 s and 300 frames, however slowly a busy machine serves them.
        while time.monotonic() < start + 2 or len(codes) < 300:
            flooder.send_raw(frame)
            codes.append(flooder.read_message().get("error", {}).get("code"))
            time.sleep(0.001)
        span.extend([start, time.monotonic()])

    thread = threading.Thread(target=flood)
    thread.start()
    while thread.is_alive():
        read_motion(None)
    thread.join()
    start, end = span
    while not read_motion(end):
        assert time.monotonic() < end + 60, "no motion.state after the flood"
    during = rate(start, end)
    # dockd accepts at most 30 Hz (+25 %, TrackingLoop's ArrivalWindow) out of the flood, plus the
    # few frames a camera may deliver at once, and refuses the rest with "frame rate too high".
    # Beside a CPU hog, before the rate was also held over time, a flood arriving in pairs got
    # 100-115 frames through in 2 s.
    accepted = codes.count(None)
    assert accepted <= 1.25 * 30 * (end - start) + 8, f"{accepted} of {len(codes)} flood frames accepted in {end - start:.1f} s"
    assert codes.count(-32004) == len(codes) - accepted, "every other frame refused as too fast"
    assert during >= 0.8 * baseline, f"FEEDBACK taken in at {during:.1f}/s during the flood, {baseline:.1f}/s before"
    assert watcher.result("dockd.version")["daemon"] == "dockd"


def test_after_a_crash_the_restarted_daemon_takes_its_state_from_the_configuration(tmp_path):
    """SIGKILL, then start again as systemd's Restart=on-failure would: the configured stand is
    owned again under its serial, with the configured heartbeat timeout; nothing was left behind
    (the stale socket file is replaced)."""
    link = tmp_path / "stand"
    sim = subprocess.Popen([str(BIN / "dock-sim"), "--pty", "--link", str(link), "--serial", "KEEP-1", "--log-frames"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "sim.err", "wb"))
    wait_for(link.exists, 5, "the stand's link")
    config = tmp_path / "dockd.conf"
    config.write_text(f'[daemon]\nheartbeat_timeout_ms = 800\n[[device]]\npath = "{link}"\n')
    argv = [str(BIN / "dockd"), "--config", str(config), "--socket", str(tmp_path / "d.sock"), "--socket-group", "",
            "--no-hotplug"]
    dockd = subprocess.Popen(argv, stderr=subprocess.DEVNULL)
    try:
        for life in (1, 2):
            wait_for((tmp_path / "d.sock").exists, 10, "dockd's socket")
            c = wait_for(lambda: connect(tmp_path / "d.sock"), 10, "a connection")
            wait_for(lambda: [s["id"] for s in c.result("stands.list") if s["state"] == "connected"] == ["KEEP-1"],
                     10, f"the configured stand (life {life})")
            c.close()
            if life == 1:
                dockd.send_signal(signal.SIGKILL)
                dockd.wait(5)
                assert (tmp_path / "d.sock").exists(), "SIGKILL leaves the socket file behind"
                dockd = subprocess.Popen(argv, stderr=subprocess.DEVNULL)
        hellos = [l for l in (tmp_path / "sim.err").read_text().splitlines() if " HELLO " in l and " in " in l]
        assert len(hellos) >= 2 and all("heartbeat 800 ms" in h for h in hellos), hellos
    finally:
        dockd.terminate(); dockd.wait(5)
        sim.terminate(); sim.wait(5)


def test_sighup_applies_what_it_can_names_what_needs_a_restart_and_keeps_device_stands(tmp_path):
    link = tmp_path / "stand"
    sim = subprocess.Popen([str(BIN / "dock-sim"), "--pty", "--link", str(link), "--serial", "HUP-2"],
                           stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    config = tmp_path / "dockd.conf"
    config.write_text("[camera]\nhorizontal_fov_deg = 70\nvertical_fov_deg = 43\n")
    log = tmp_path / "dockd.err"
    wait_for(link.exists, 5, "the stand's link")
    dockd = subprocess.Popen([str(BIN / "dockd"), "--config", str(config), "--device", str(link), "--socket", str(tmp_path / "d.sock"),
                              "--socket-group", "", "--no-hotplug"], stderr=open(log, "wb"))
    try:
        wait_for((tmp_path / "d.sock").exists, 10, "dockd's socket")
        c = Client(tmp_path / "d.sock")
        wait_for(lambda: [s["id"] for s in c.result("stands.list") if s["state"] == "connected"] == ["HUP-2"], 10, "the stand")
        assert abs(c.result("stand.get")["control"]["camera"]["horizontal_fov"] - 70 * math.pi / 180) < 1e-6
        config.write_text('[daemon]\nlog_level = "debug"\nheartbeat_timeout_ms = 800\n'
                          '[camera]\nhorizontal_fov_deg = 50\nvertical_fov_deg = 30\n[tracking]\nlost_behaviour = "hold"\n')
        dockd.send_signal(signal.SIGHUP)
        wait_for(lambda: "configuration reloaded" in log.read_text(), 5, "the reload in the log")
        text = log.read_text()
        assert "daemon.heartbeat_timeout_ms changed (500 → 800): it takes a restart" in text, text
        for applied in ("daemon.log_level", "camera.horizontal_fov_deg", "tracking.lost_behaviour"):
            assert applied in text.split("configuration reloaded")[-1], text
        stand = c.result("stand.get")
        assert abs(stand["control"]["camera"]["horizontal_fov"] - 50 * math.pi / 180) < 1e-6
        assert stand["state"] == "connected" and stand["counters"]["reconnects"] == 0, "the --device stand was dropped"
        # The new log level is in force: garbage on the line is logged at debug level now.
        sim.stdin.write(b"corrupt 0.5 0.5\n"); sim.stdin.flush()
        wait_for(lambda: "dropped bytes from the stand" in log.read_text(), 5, "a debug line")
        c.close()
    finally:
        dockd.terminate(); dockd.wait(5)
        sim.terminate(); sim.wait(5)
