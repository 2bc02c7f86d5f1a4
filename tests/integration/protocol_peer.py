"""The reference stand (protocol/reference/refstand.py, written from PROTOCOL.md alone) on the master
side of a real pty, and dockd on its slave side: a stand built from the spec against the real daemon.

The stand runs in a thread on the real monotonic clock; tests read and poke it under `lock`.
"""

import os
import select
import socket
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "protocol" / "reference"))

import refstand  # noqa: E402

BIN = Path(os.environ.get("DOCK_BIN", ROOT / ".build" / "debug"))


class PtyStand:
    """A ReferenceStand served on a pty. `path` is the slave's name, for dockd's --device."""

    def __init__(self, **options):
        self.stand = refstand.ReferenceStand(**options)
        self.master, self.slave = os.openpty()
        # The slave stays open here too, so the master never sees a hang-up while dockd reconnects.
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self._start()

    def _start(self):
        self.lock = threading.Lock()
        self.epoch = time.monotonic()
        self.stopping = threading.Event()
        self.error = None
        self.thread = threading.Thread(target=self._serve, name="reference-stand", daemon=True)
        self.thread.start()

    def now(self):
        return time.monotonic() - self.epoch

    def _serve(self):
        try:
            while not self.stopping.is_set():
                with self.lock:
                    wait = self.stand.next_due() - self.now()
                # At most 5 ms asleep, so what a test queues goes out promptly.
                readable, _, _ = select.select([self.master], [], [], min(max(wait, 0), 0.005))
                data = os.read(self.master, 4096) if readable else b""
                with self.lock:
                    out = self.stand.receive(data, self.now()) if data else self.stand.advance(self.now())
                if out:
                    os.write(self.master, out)
        except Exception as error:  # surfaced by check(): a broken peer must fail the test
            self.error = error

    def check(self):
        assert self.error is None, f"the reference stand failed: {self.error!r}"
        assert self.thread.is_alive(), "the reference stand stopped"

    def close(self):
        self.stopping.set()
        self.thread.join(2)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass

    # --- what the stand saw, under the lock ---------------------------------------------------

    def host_frames(self, type_name=None):
        with self.lock:
            frames = list(self.stand.host_frames)
        return [(t, f) for t, f in frames if type_name is None or f["type"] == type_name]

    def host_answers(self):
        with self.lock:
            return list(self.stand.host_answers)

    def do(self, action):
        """Runs `action(stand)` under the lock (queue a frame, change a knob); returns its result."""
        with self.lock:
            return action(self.stand)


class SocketStand(PtyStand):
    """The same stand listening on a Unix socket at `socket_path` (`path` is "unix:PATH", for
    dockd's --device), for the tests of dockd's own timing: beside a CPU hog the kernel's tty work,
    starved, held a pty's bytes for over a second while dockd and the stand both ran (conftest.Rig
    says the same of dock-sim). A new connection from dockd (a reconnect) is a new link, as a
    replug would be."""

    def __init__(self, socket_path, **options):
        self.stand = refstand.ReferenceStand(**options)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(socket_path))
        self.listener.listen(1)
        self.connection = None
        self.path = f"unix:{socket_path}"
        self._start()

    def _serve(self):
        try:
            while not self.stopping.is_set():
                with self.lock:
                    wait = self.stand.next_due() - self.now()
                watched = [self.connection or self.listener]
                readable, _, _ = select.select(watched, [], [], min(max(wait, 0), 0.005))
                if readable and self.connection is None:
                    self.connection, _ = self.listener.accept()
                    continue
                try:
                    data = self.connection.recv(4096) if readable else b""
                    if readable and not data:
                        raise ConnectionResetError("dockd closed the link")
                    with self.lock:
                        out = self.stand.receive(data, self.now()) if data else self.stand.advance(self.now())
                    if out and self.connection is not None:
                        self.connection.sendall(out)
                except (ConnectionResetError, BrokenPipeError):  # dockd closed the link; it connects again
                    self.connection.close()
                    self.connection = None
        except Exception as error:  # surfaced by check(): a broken peer must fail the test
            self.error = error

    def close(self):
        self.stopping.set()
        self.thread.join(2)
        for s in (self.connection, self.listener):
            if s is not None:
                s.close()


class Daemon:
    """dockd owning one device, on a socket in `tmp`; `config` is the text of its configuration."""

    def __init__(self, tmp, device, config=None):
        self.socket_path = tmp / "dockd.sock"
        self.log_path = tmp / "dockd.err"
        config_path = tmp / "dockd.conf"
        argv = [str(BIN / "dockd"), "--config", str(config_path), "--device", device, "--socket", str(self.socket_path),
                "--socket-group", "", "--no-hotplug", "--log-level", "debug"]
        if config is None:
            argv.insert(1, "--ignore-missing-config")
        else:
            config_path.write_text(config)
        self.process = subprocess.Popen(argv, stderr=open(self.log_path, "wb"))

    def log(self):
        return self.log_path.read_text(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
