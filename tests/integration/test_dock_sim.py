"""Integration tests of the real dock-sim binary, driven over a pty or a Unix socket with the
independent Python codec (protocol/reference/dockproto.py), as a host like dockd would.

Binary: $DOCK_SIM, or .build/debug/dock-sim under the repository root (run `swift build` first).
Every wait has a deadline, so a hung simulator fails a test instead of hanging the run.
"""

import errno
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import termios
import time
import tty

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "protocol", "reference"))
import dockproto  # noqa: E402

BINARY = os.environ.get("DOCK_SIM") or os.path.join(ROOT, ".build", "debug", "dock-sim")

# The stand's defaults (Sources/DockSim/StandConfiguration.swift).
YAW_MAX_ACCEL = 12.0
PITCH_MAX = 0.9
STATUS_AT_MAX = 0x02
FAULT_HEARTBEAT_LOST = dockproto.FAULT_CODES["heartbeat_lost"]
EVENT_TRACKING = dockproto.EVENT_KINDS["tracking"]


class Simulator:
    """A running dock-sim: its link line, stdin for commands, stderr kept in a file."""

    def __init__(self, *args):
        if not os.access(BINARY, os.X_OK):
            pytest.fail(f"no dock-sim binary at {BINARY}: run `swift build` or set DOCK_SIM")
        self.stderr_file = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [BINARY, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
        )
        os.set_blocking(self.process.stdout.fileno(), False)
        self._pending = b""

    def read_line(self, timeout=5.0):
        """The next stdout line, or fail after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.process.poll() is not None and not self._readable(0):
                pytest.fail(f"no line from dock-sim within {timeout} s; stderr:\n{self.stderr()}")
            if self._readable(min(remaining, 0.1)):
                chunk = os.read(self.process.stdout.fileno(), 4096)
                if not chunk and self.process.poll() is not None:
                    pytest.fail(f"dock-sim exited ({self.process.returncode}); stderr:\n{self.stderr()}")
                self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line.decode()

    def _readable(self, timeout):
        return bool(select.select([self.process.stdout], [], [], timeout)[0])

    def command(self, line):
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def stderr(self):
        self.stderr_file.seek(0)
        return self.stderr_file.read().decode(errors="replace")

    def stop(self, sig=signal.SIGTERM):
        """Signals the process and returns its exit code (killing it if it does not exit)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
                pytest.fail("dock-sim did not exit within 5 s of SIGTERM")
        return self.process.returncode


@pytest.fixture
def start():
    """Starts simulators; stops every one of them when the test ends, whatever happened."""
    started = []

    def _start(*args):
        simulator = Simulator(*args)
        started.append(simulator)
        return simulator

    yield _start
    for simulator in started:
        if simulator.process.poll() is None:
            simulator.process.kill()
            simulator.process.wait(timeout=5)
        simulator.process.stdin.close()
        simulator.process.stdout.close()
        simulator.stderr_file.close()


class Host:
    """The host end of a link (a pty slave fd or a connected socket): sends frames, decodes
    everything it receives, and keeps the stand's heartbeat timeout fed while it waits."""

    def __init__(self, fd, close):
        self.fd = fd
        self._close = close
        self.sender = dockproto.Sender()
        self.decoder = dockproto.StreamDecoder()
        self.frames = []  # (host monotonic time, frame)
        self.bytes_received = 0
        self.last_sent = 0.0

    @classmethod
    def open_pty(cls, path):
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(fd)
        # Whatever the stand sent before anyone listened (its idle heartbeats) is stale.
        termios.tcflush(fd, termios.TCIOFLUSH)
        return cls(fd, lambda: os.close(fd))

    @classmethod
    def connect_unix(cls, path):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(5)
        sock.connect(path)
        sock.setblocking(False)
        host = cls(sock.fileno(), sock.close)
        host.sock = sock
        return host

    def close(self):
        self._close()

    def send(self, type_name, payload=None, ack=False):
        frame, data = self.sender.encode(type_name, payload, ack)
        os.write(self.fd, data)
        self.last_sent = time.monotonic()
        return frame["seq"]

    def hello(self, heartbeat_timeout_ms=0):
        os.write(self.fd, b"\x00")  # ends any line noise, as PROTOCOL.md §2 suggests
        self.send("hello", {"major": 1, "minor": 0, "heartbeat_timeout_ms": heartbeat_timeout_ms,
                            "host": "pytest"}, ack=True)
        replies = [f for _, f in self.wait_for(lambda f: f["type"] == "event", timeout=10)]
        # An idle stand heartbeats when silent for 250 ms (PROTOCOL.md §2): on a busy machine one may
        # arrive after the flush and before the HELLO_REPLY (seen beside stress-ng). The handshake
        # starts at the reply.
        while replies and replies[0]["type"] == "heartbeat":
            replies.pop(0)
        return replies

    def velocity(self, **axes):
        self.send("velocity", {"axes": [{"axis": name, "velocity": v} for name, v in axes.items()]})

    def pump(self, seconds, heartbeat=True):
        """Receives for `seconds`; returns the frames that arrived meanwhile."""
        first = len(self.frames)
        deadline = time.monotonic() + seconds
        while True:
            now = time.monotonic()
            if now >= deadline:
                return self.frames[first:]
            if heartbeat and now - self.last_sent >= 0.1:
                self.send("heartbeat", {"uptime_ms": int(now * 1000) & 0xFFFFFFFF})
            self._receive(min(deadline - now, 0.02))

    def wait_for(self, predicate, timeout, heartbeat=True):
        """Receives until a frame matches; returns the frames up to and including it."""
        first = len(self.frames)
        deadline = time.monotonic() + timeout
        while True:
            for index in range(first, len(self.frames)):
                if predicate(self.frames[index][1]):
                    return self.frames[first:index + 1]
            now = time.monotonic()
            if now >= deadline:
                seen = sorted({f["type"] for _, f in self.frames[first:]})
                pytest.fail(f"no matching frame within {timeout} s (saw {seen})")
            if heartbeat and now - self.last_sent >= 0.1:
                self.send("heartbeat", {"uptime_ms": int(now * 1000) & 0xFFFFFFFF})
            self._receive(min(deadline - now, 0.02))

    def _receive(self, timeout):
        if not select.select([self.fd], [], [], max(0, timeout))[0]:
            return
        data = os.read(self.fd, 65536)
        if not data:
            raise EOFError("link closed")
        self.bytes_received += len(data)
        now = time.monotonic()
        for kind, value in self.decoder.feed(data):
            if kind == "frame":
                self.frames.append((now, value))

    def feedback(self, frames):
        return [f["payload"] for _, f in frames if f["type"] == "feedback"]


def axis(feedback, name):
    return next(a for a in feedback["axes"] if a["axis"] == name)


def start_pty(start, *args):
    simulator = start(*args)
    kind, path = simulator.read_line().split(" ", 1)
    assert kind == "pty" and path.startswith("/dev/")
    return simulator, Host.open_pty(path), path


def test_handshake_answers_hello_like_hardware(start):
    simulator, host, _ = start_pty(start, "--serial", "PYTEST-1")
    replies = host.hello()
    assert [f["type"] for f in replies] == ["hello_reply", "capabilities", "battery", "event"]
    assert replies[0]["payload"]["serial"] == "PYTEST-1"
    assert replies[0]["payload"]["heartbeat_timeout_ms"] == 500
    assert replies[3]["payload"]["kind"] == dockproto.EVENT_KINDS["docked"]
    assert replies[3]["payload"]["value"] == 1
    frames = host.pump(0.3)
    assert len(host.feedback(frames)) >= 20  # 100 Hz
    assert host.decoder.errors == dict.fromkeys(dockproto.ERROR_KINDS, 0)
    host.close()
    assert simulator.stop() == 0


def test_velocity_moves_position_at_the_commanded_rate(start):
    simulator, host, _ = start_pty(start)
    host.hello()
    host.velocity(yaw=1.0)
    host.pump(0.5)  # past the acceleration phase
    samples = host.feedback(host.pump(1.0))
    first, last = samples[0], samples[-1]
    # Stand time (time_us), not host time: host scheduling jitter does not matter.
    rate = (axis(last, "yaw")["position"] - axis(first, "yaw")["position"]) / ((last["time_us"] - first["time_us"]) / 1e6)
    assert rate == pytest.approx(1.0, abs=0.02)
    # And clamped to max_speed (3 rad/s on yaw).
    host.velocity(yaw=10.0)
    host.pump(0.5)
    samples = host.feedback(host.pump(0.5))
    rate = (axis(samples[-1], "yaw")["position"] - axis(samples[0], "yaw")["position"]) / (
        (samples[-1]["time_us"] - samples[0]["time_us"]) / 1e6)
    assert rate == pytest.approx(3.0, abs=0.05)
    simulator.stop()


def test_acceleration_is_limited(start):
    simulator, host, _ = start_pty(start)
    host.hello()
    host.pump(0.1)
    host.velocity(yaw=3.0)
    samples = host.feedback(host.pump(0.8))
    speeds = [(s["time_us"] / 1e6, axis(s, "yaw")["velocity"]) for s in samples]
    started = next(t for t, v in speeds if v > 0.05)
    reached = next(t for t, v in speeds if v > 2.7)
    # 0.05 → 2.7 rad/s at 12 rad/s² takes 0.22 s; one feedback period of slack.
    assert reached - started >= (2.7 - 0.05) / YAW_MAX_ACCEL - 0.01
    for (t0, v0), (t1, v1) in zip(speeds, speeds[1:]):
        assert (v1 - v0) / (t1 - t0) <= YAW_MAX_ACCEL * 1.05 + 0.02 / (t1 - t0)
    assert speeds[-1][1] == pytest.approx(3.0, abs=0.05)
    simulator.stop()


def test_pitch_stops_at_its_limit(start):
    simulator, host, _ = start_pty(start)
    host.hello()
    host.velocity(pitch=2.0)
    samples = host.feedback(host.pump(1.2))
    pitch = axis(samples[-1], "pitch")
    assert pitch["position"] == pytest.approx(PITCH_MAX, abs=0.003)
    assert abs(pitch["velocity"]) < 0.02
    assert pitch["status"] & STATUS_AT_MAX
    assert max(axis(s, "pitch")["position"] for s in samples) <= PITCH_MAX + 0.003
    simulator.stop()


def test_host_silence_stops_motion_with_heartbeat_lost(start):
    simulator, host, _ = start_pty(start)
    host.hello(heartbeat_timeout_ms=200)
    host.velocity(yaw=1.0)
    host.pump(0.15, heartbeat=False)
    quiet_since = host.last_sent
    frames = host.wait_for(lambda f: f["type"] == "fault", timeout=2, heartbeat=False)
    arrived, fault = frames[-1]
    assert fault["payload"]["code"] == FAULT_HEARTBEAT_LOST
    assert arrived - quiet_since >= 0.19
    stopped = host.feedback(host.pump(0.4, heartbeat=False))
    assert abs(axis(stopped[-1], "yaw")["velocity"]) < 0.02
    simulator.stop()


def test_unix_socket_link_and_replacement(start):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "stand.sock")
        simulator = start("--unix", path)
        assert simulator.read_line() == f"unix {path}"
        first = Host.connect_unix(path)
        assert [f["type"] for f in first.hello()][0] == "hello_reply"
        first.velocity(yaw=0.5)
        samples = first.feedback(first.pump(0.5))
        assert axis(samples[-1], "yaw")["velocity"] == pytest.approx(0.5, abs=0.05)

        # A second connection replaces the first (documented in dock-sim --help).
        second = Host.connect_unix(path)
        assert second.hello()[0]["type"] == "hello_reply"
        with pytest.raises(EOFError):
            first.pump(1.0, heartbeat=False)
        first.close()
        second.close()
        assert simulator.stop() == 0
        assert not os.path.exists(path), "the socket file is removed at exit"


def test_stdin_commands_press_tracking_and_bad_command(start):
    simulator, host, _ = start_pty(start)
    host.hello()
    simulator.command("no-such-command 1")
    simulator.command("press tracking")
    frames = host.wait_for(lambda f: f["type"] == "event" and f["payload"]["kind"] == EVENT_TRACKING, timeout=2)
    assert frames[-1][1]["payload"]["value"] == 1
    simulator.stop()
    assert "unknown command 'no-such-command'" in simulator.stderr()


def _wait_for_hangup(fd, timeout):
    """True once the pty slave reports the master gone (EOF, EIO or POLLHUP)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for _, events in poller.poll(50):
            if events & (select.POLLHUP | select.POLLERR):
                return True
            try:
                if os.read(fd, 4096) == b"":
                    return True
            except OSError as error:
                if error.errno == errno.EIO:
                    return True
                if error.errno != errno.EAGAIN:
                    raise
    return False


def test_unplug_hangs_up_and_comes_back_on_a_new_pty(start):
    with tempfile.TemporaryDirectory() as directory:
        link = os.path.join(directory, "dock0")
        simulator, host, old_path = start_pty(start, "--link", link)
        assert os.readlink(link) == old_path
        host.hello()
        simulator.command("unplug 0.5")
        unplugged = time.monotonic()
        assert _wait_for_hangup(host.fd, timeout=2), "the old pty was not hung up"
        kind, new_path = simulator.read_line(timeout=5).split(" ", 1)
        assert kind == "pty"
        assert time.monotonic() - unplugged >= 0.45
        assert os.readlink(link) == new_path
        host.close()

        again = Host.open_pty(link)
        assert again.hello()[0]["type"] == "hello_reply"
        again.close()
        assert simulator.stop(signal.SIGINT) == 0
        assert not os.path.lexists(link), "the symlink is removed at exit"


def test_baud_rate_paces_output(start):
    simulator, host, _ = start_pty(start, "--baud", "9600")
    host.hello()
    host.pump(0.5)
    before, began = host.bytes_received, time.monotonic()
    host.pump(2.0)
    rate = (host.bytes_received - before) / (time.monotonic() - began)
    # 9600 baud carries 960 bytes/s; 100 Hz feedback and IMU want ~8 kB/s, so the line is full.
    assert 600 <= rate <= 1000, f"{rate:.0f} bytes/s"
    assert sum(host.decoder.errors.values()) == 0, "frames are dropped whole, never cut"
    assert len(host.feedback(host.frames)) > 0
    simulator.stop()
    assert "dropped" in simulator.stderr()


def test_a_slow_link_gets_rates_that_fit_it(start):
    """PROTOCOL.md §5.1: at 57600 baud two axes keep 100 Hz FEEDBACK and drop IMU (75 % of the link)."""
    simulator, host, _ = start_pty(start, "--baud", "57600")
    capabilities = next(f for f in host.hello() if f["type"] == "capabilities")["payload"]
    assert (capabilities["feedback_hz"], capabilities["imu_hz"]) == (100, 0)
    frames = host.pump(2.0)
    assert not [f for _, f in frames if f["type"] == "imu"]
    feedback = len(host.feedback(frames))
    assert feedback >= 150
    simulator.stop()
    log = simulator.stderr()
    assert "FEEDBACK 100 Hz, IMU 0 Hz" in log
    # The line has room: a frame is dropped only when a busy machine stalls the simulator and it
    # then catches up in a burst (9600 baud drops most of them).
    dropped = sum(int(n) for n in re.findall(r"dropped (\d+) frames", log))
    assert dropped <= 0.05 * feedback, f"{dropped} frames dropped, {feedback} FEEDBACK received"
