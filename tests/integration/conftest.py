"""Fixtures that run the real binaries: dock-sim on a pty, dockd on it, and a JSON-RPC client
written from protocol/API.md alone (independent of dockctl)."""
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

import openrpc_check

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("DOCK_BIN", ROOT / ".build" / "debug"))


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Client:
    """Newline-delimited JSON-RPC 2.0 over the Unix socket; keeps notifications it sees. Every
    message read is checked against protocol/dockd.openrpc.json (openrpc_check)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(str(path))
        self.buffer = b""
        self.notifications = []
        self.next_id = 1
        self.pending = {}  # request id -> method, to check each reply against its method's schema

    def close(self):
        self.sock.close()

    def send_raw(self, data: bytes):
        openrpc_check.note_requests(data, self.pending)
        self.sock.sendall(data)

    def read_message(self, timeout=10):
        self.sock.settimeout(max(timeout, 0.001))
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("dockd closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(line)
        openrpc_check.shared().check_message(message, self.pending)
        return message

    def call(self, method, params=None, timeout=10):
        """The reply object (with 'result' or 'error'); notifications meanwhile are kept."""
        request_id = self.next_id
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            request["params"] = params
        self.send_raw(json.dumps(request).encode() + b"\n")
        deadline = time.monotonic() + timeout
        while True:
            message = self.read_message(max(0.01, deadline - time.monotonic()))
            if message.get("id") == request_id:
                return message
            self.notifications.append(message)

    def result(self, method, params=None):
        reply = self.call(method, params)
        assert "error" not in reply, f"{method} failed: {reply['error']}"
        return reply["result"]

    def latest(self, method, timeout=5):
        """The newest `method` notification: what is true now, not what queued up a while ago.
        Reads the backlog until the socket has nothing pending, then returns the last one seen
        (waiting for one if none was queued)."""
        newest = next((m for m in reversed(self.notifications) if m.get("method") == method), None)
        self.notifications = [m for m in self.notifications if m.get("method") != method]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = self.read_message(0.002 if newest is not None else deadline - time.monotonic())
            except (socket.timeout, TimeoutError):
                if newest is not None:
                    break
                continue
            if message.get("method") == method:
                newest = message
            else:
                self.notifications.append(message)
        assert newest is not None, f"no {method} notification"
        return newest

    def wait_notification(self, predicate, timeout=10):
        """The first kept or arriving notification for which predicate(message) is true."""
        for i, message in enumerate(self.notifications):
            if predicate(message):
                return self.notifications.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("no matching notification")
            try:
                message = self.read_message(remaining)
            except socket.timeout:
                raise AssertionError("no matching notification") from None
            if predicate(message):
                return message
            self.notifications.append(message)


class Rig:
    """dock-sim + dockd on a temporary directory. The stand's link is a pty (a serial stand, as
    dockd sees USB-CDC), or with link="unix" a Unix socket (dock-sim --unix): for a test of dockd's
    own timing on a loaded machine, where the kernel's tty work, starved by a CPU hog, held a pty's
    bytes in both directions for over a second while dockd and dock-sim both ran on time."""

    def __init__(self, tmp_path, sim_args=(), dockd_env=None, dockd_config=None, link="pty", dockd_args=()):
        self.tmp = tmp_path
        self.link = tmp_path / "stand"
        self.socket_path = tmp_path / "dockd.sock"
        offered = ["--pty", "--link", str(self.link)] if link == "pty" else ["--unix", str(self.link)]
        self.sim = subprocess.Popen(
            [str(BIN / "dock-sim"), *offered, "--seed", "3", "--log-frames", *sim_args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(tmp_path / "sim.err", "wb"))
        first = self.sim.stdout.readline().decode()
        assert first.startswith(f"{link} "), f"dock-sim said {first!r}"
        wait_for(self.link.exists, 5, "the dock-sim link")
        self.dockd_log = tmp_path / "dockd.err"
        config = ["--config", str(dockd_config)] if dockd_config else ["--ignore-missing-config", "--config", str(tmp_path / "none.conf")]
        argv = [str(BIN / "dockd"), *config, "--device", ("unix:" if link == "unix" else "") + str(self.link), "--socket", str(self.socket_path), "--socket-group", "", *dockd_args]
        if dockd_env and "LD_PRELOAD" in dockd_env:
            # Swift finds argv by walking up from `environ` (swiftlang/swift#76080); a preloaded
            # library that calls setenv() in its constructor (libfaketime does) moves `environ` and
            # dockd would start without its arguments. Through a shell that already has the
            # variable set, the constructor has nothing to set; `exec` keeps dockd's pid.
            argv = ["/bin/sh", "-c", 'exec "$0" "$@"', *argv]
        # dockd keeps the stands' defaults in its state directory: the test's own, never the machine's
        # /var/lib/dockd (a test's defaults.set must not change an installed dockd's). A test with a
        # configuration file names its own (`[daemon] state_directory`, which STATE_DIRECTORY overrides).
        env = {**os.environ, **(dockd_env or {})}
        if dockd_config is None:
            (tmp_path / "state").mkdir(exist_ok=True)
            env.setdefault("STATE_DIRECTORY", str(tmp_path / "state"))
        self.dockd_argv, self.dockd_env = argv, env
        self.dockd = subprocess.Popen(argv, stderr=open(self.dockd_log, "wb"), env=self.dockd_env)
        self.clients = []
        try:
            wait_for(self.accepting, 10, "dockd's socket")
        except BaseException:
            self.stop()  # no stray dock-sim left running after a failed start
            raise

    def restart_dockd(self):
        """SIGTERM to dockd (it stops the stand and removes its socket), then the same dockd again."""
        for c in self.clients:
            c.close()
        self.clients = []
        self.dockd.terminate()
        self.dockd.wait(10)
        self.dockd = subprocess.Popen(self.dockd_argv, stderr=open(self.dockd_log, "ab"), env=self.dockd_env)
        wait_for(self.accepting, 10, "dockd's socket")

    def accepting(self):
        """The socket exists and listens (dockd binds, then listens: connecting in between is refused)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.connect(str(self.socket_path))
                return True
            except OSError:
                return False

    def client(self):
        c = Client(self.socket_path)
        self.clients.append(c)
        return c

    def sim_command(self, line):
        self.sim.stdin.write(line.encode() + b"\n")
        self.sim.stdin.flush()

    def connected_stand(self, client, timeout=10):
        def connected():
            stands = client.result("stands.list")
            return next((s for s in stands if s["state"] == "connected"), None)
        return wait_for(connected, timeout, "a connected stand")

    def sim_log(self):
        return (self.tmp / "sim.err").read_text(errors="replace")

    def log(self):
        return self.dockd_log.read_text(errors="replace")

    def stop(self):
        for c in self.clients:
            c.close()
        for p in (self.dockd, self.sim):
            if p.poll() is None:
                p.terminate()
        for p in (self.dockd, self.sim):
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture
def rig(tmp_path):
    r = Rig(tmp_path)
    yield r
    r.stop()


def start_sims(tmp_path, serials):
    """A dock-sim per serial, each on a pty linked at tmp_path/SERIAL once it is there."""
    sims = []
    for serial in serials:
        link = tmp_path / serial
        sims.append(subprocess.Popen([str(BIN / "dock-sim"), "--pty", "--link", str(link), "--serial", serial],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for(link.exists, 5, f"{serial}'s link")
    return sims


@pytest.fixture
def two_stands(tmp_path):
    """Two dock-sims (STAND-A, STAND-B) on one dockd: its socket's path, once both are connected."""
    sims = start_sims(tmp_path, ("STAND-A", "STAND-B"))
    sock = tmp_path / "d.sock"
    dockd = subprocess.Popen([str(BIN / "dockd"), "--device", str(tmp_path / "STAND-A"), "--device", str(tmp_path / "STAND-B"),
                              "--socket", str(sock), "--socket-group", "", "--no-hotplug"], stderr=subprocess.DEVNULL)
    try:
        c = wait_for(lambda: connect(sock), 10, "dockd's socket")  # bound, then listening: connect until it takes
        wait_for(lambda: sorted(s["id"] for s in c.result("stands.list") if s["state"] == "connected") == ["STAND-A", "STAND-B"],
                 10, "both stands")
        c.close()
        yield str(sock)
    finally:
        dockd.terminate(); dockd.wait(5)
        for s in sims:
            s.terminate(); s.wait(5)


def connect(path):
    try:
        return Client(path)
    except OSError:
        return None
