"""The API socket under pressure and at start: more clients than it serves, fewer file descriptors
than clients, a second dockd on the same socket path, and paths that are not a socket. The real
dockd, real sockets, the real RLIMIT_NOFILE (prlimit from util-linux)."""
import json
import os
import socket
import subprocess
import time

import pytest

import openrpc_check
from conftest import BIN, wait_for

VERSION = b'{"jsonrpc":"2.0","id":1,"method":"dockd.version"}\n'


def start_dockd(tmp_path, socket_path, prefix=(), log="dockd.err"):
    argv = [*prefix, str(BIN / "dockd"), "--ignore-missing-config", "--config", str(tmp_path / "none.conf"),
            "--no-hotplug", "--socket", str(socket_path), "--socket-group", ""]
    return subprocess.Popen(argv, stderr=open(tmp_path / log, "wb"))


def answers(path, timeout=5):
    """A fresh connection gets dockd.version's reply."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(path))
            s.sendall(VERSION)
            line = s.makefile("rb").readline()
            return json.loads(line).get("result", {}).get("daemon") == "dockd"
    except OSError:
        return False


def stop(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def fds_of(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_clients_over_the_limit_get_one_error_line_and_are_closed(tmp_path):
    path = tmp_path / "d.sock"
    # 160 descriptors: dockd keeps 64 for itself and serves 96 clients at once.
    dockd = start_dockd(tmp_path, path, prefix=("prlimit", "--nofile=160:160"))
    try:
        wait_for(lambda: answers(path), 10, "dockd")
        held = []
        for _ in range(96):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(10)
            s.connect(str(path))
            s.sendall(VERSION)
            assert json.loads(s.makefile("rb").readline())["result"]["daemon"] == "dockd"
            held.append(s)
        refused = []
        for _ in range(20):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(10)
            s.connect(str(path))
            f = s.makefile("rb")
            message = json.loads(f.readline())
            openrpc_check.shared().check_reply(message, None, None)
            assert message["id"] is None and message["error"]["code"] == -32010
            assert message["error"]["data"]["limit"] == 96
            assert f.readline() == b"", "the refused connection is closed"
            refused.append(s)
        assert dockd.poll() is None
        for s in held[:10] + refused:
            s.close()
        # Room again: a new client is served.
        assert wait_for(lambda: answers(path), 10, "a client served once others left")
        for s in held[10:]:
            s.close()
    finally:
        stop(dockd)


def test_running_out_of_file_descriptors_does_not_end_dockd(tmp_path):
    path = tmp_path / "d.sock"
    dockd = start_dockd(tmp_path, path)
    held = []
    try:
        wait_for(lambda: answers(path), 10, "dockd")
        # The limit drops under a running dockd (its client limit was set from the old one):
        # accept(2) now fails with EMFILE.
        limit = fds_of(dockd.pid) + 24
        subprocess.run(["prlimit", "--pid", str(dockd.pid), f"--nofile={limit}:{limit}"], check=True)
        for _ in range(80):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(str(path))
            except (BlockingIOError, ConnectionRefusedError, OSError):
                pass
            held.append(s)
        time.sleep(1.5)  # accept keeps failing meanwhile
        assert dockd.poll() is None, f"dockd exited {dockd.returncode}: {(tmp_path / 'dockd.err').read_text()[-2000:]}"
        assert fds_of(dockd.pid) <= limit
        for s in held:
            s.close()
        held = []
        assert wait_for(lambda: answers(path, timeout=2), 15, "dockd serving again once descriptors are free")
        assert "accepting an API connection failed" in (tmp_path / "dockd.err").read_text()
    finally:
        for s in held:
            s.close()
        stop(dockd)


def test_a_second_dockd_on_a_live_socket_refuses_to_start_and_the_first_keeps_serving(tmp_path):
    path = tmp_path / "d.sock"
    first = start_dockd(tmp_path, path)
    try:
        wait_for(lambda: answers(path), 10, "the first dockd")
        second = start_dockd(tmp_path, path, log="second.err")
        try:
            assert second.wait(10) != 0
        finally:
            stop(second)
        err = (tmp_path / "second.err").read_text()
        assert "another dockd" in err and str(path) in err, err
        assert answers(path), "the first dockd still answers on its socket"
    finally:
        stop(first)


def test_a_regular_file_at_the_socket_path_is_never_deleted(tmp_path):
    path = tmp_path / "d.sock"
    path.write_text("precious\n")
    dockd = start_dockd(tmp_path, path)
    try:
        assert dockd.wait(10) != 0
    finally:
        stop(dockd)
    assert path.read_text() == "precious\n"
    err = (tmp_path / "dockd.err").read_text()
    assert str(path) in err and "not a socket" in err, err


def test_a_missing_directory_is_named_in_the_error(tmp_path):
    path = tmp_path / "no" / "such" / "dir" / "d.sock"
    dockd = start_dockd(tmp_path, path)
    try:
        assert dockd.wait(10) != 0
    finally:
        stop(dockd)
    err = (tmp_path / "dockd.err").read_text()
    assert str(path.parent) in err and "does not exist" in err, err


def test_a_stale_socket_left_by_a_dead_dockd_is_replaced(tmp_path):
    path = tmp_path / "d.sock"
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(str(path))
    leftover.close()  # the file stays, nobody listens
    dockd = start_dockd(tmp_path, path)
    try:
        assert wait_for(lambda: answers(path), 10, "dockd on the stale socket's path")
    finally:
        stop(dockd)
