"""Control leases (what a client changes reverts when it leaves) and who may call admin methods."""
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import BIN, Client, wait_for


def test_a_second_client_is_refused_then_may_force(rig):
    a, b = rig.client(), rig.client()
    rig.connected_stand(a)
    a.result("motion.velocity", {"yaw": 0.2})
    refused = b.call("motion.velocity", {"yaw": -0.2})
    assert refused["error"]["code"] == -32008 and "force" in refused["error"]["message"]
    # Stopping is always allowed: safety needs no lease.
    assert "result" in b.call("motion.stop")
    assert "result" in b.call("motion.velocity", {"yaw": -0.2, "force": True})
    assert a.call("motion.velocity", {"yaw": 0.2})["error"]["code"] == -32008


def test_what_a_client_changed_reverts_when_it_disconnects(rig):
    watcher, controller = rig.client(), rig.client()
    stand = rig.connected_stand(watcher)
    watcher.result("subscribe", {"topics": ["events", "motion"], "motion_rate": 50})
    controller.result("tracking.set", {"enabled": False})
    watcher.wait_notification(lambda m: m.get("method") == "tracking.changed" and m["params"]["enabled"] is False)
    controller.result("motion.limits", {"axes": {"yaw": {"min": -0.2, "max": 0.2, "max_speed": 0.5}}})
    controller.result("motion.velocity", {"yaw": 0.5})
    controller.close()
    rig.clients.remove(controller)
    back = watcher.wait_notification(lambda m: m.get("method") == "tracking.changed" and m["params"]["enabled"] is True)
    assert back["params"]["source"] == "lease released"
    # The stand's own limits are back: a target outside the client's narrowed range is accepted again.
    other = rig.client()
    motion = other.result("motion.orient", {"yaw": 0.6, "duration": 0.8})
    done = watcher.wait_notification(lambda m: m.get("method") == "motion.progress"
                                     and m["params"]["id"] == motion["id"] and m["params"]["state"] != "running", timeout=6)
    assert done["params"]["state"] == "completed", done


def test_admin_methods_are_for_root_and_the_daemon_user(rig):
    c = rig.client()
    extra = rig.tmp / "extra"
    reply = c.call("stands.attach", {"device": f"unix:{extra}"})
    assert "result" in reply, reply
    assert any(s["endpoint"] == f"unix:{extra}" for s in c.result("stands.list"))
    assert "result" in c.call("stands.detach", {"device": f"unix:{extra}"})
    assert not any(s["endpoint"] == f"unix:{extra}" for s in c.result("stands.list"))
    assert c.call("stands.detach", {"device": f"unix:{extra}"})["error"]["code"] == -32003


def test_a_stand_attached_by_a_link_is_not_attached_again_by_its_device_node(rig):
    """dockd runs the stand by a symlink to its pty (as /dev/serial/by-id/… names a tty): the pty's
    own name is the same device, and a second link on it would fight the first for its bytes."""
    c = rig.client()
    node = os.path.realpath(rig.link)
    assert node != str(rig.link) and node.startswith("/dev/pts/"), node
    reply = c.call("stands.attach", {"device": node})
    assert reply.get("error", {}).get("data", {}).get("field") == "device", reply
    assert "already attached" in reply["error"]["message"], reply
    assert [s["endpoint"] for s in c.result("stands.list")] == [f"serial:{rig.link}@115200"]


NOBODY_CLIENT = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except PermissionError:
    print(json.dumps({"connect": "denied"})); sys.exit(0)
s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"stands.attach","params":{"device":"/dev/null"}}\n')
s.sendall(b'{"jsonrpc":"2.0","id":2,"method":"dockd.version"}\n')
buf = b""
while buf.count(b"\n") < 2:
    buf += s.recv(65536)
print(json.dumps([json.loads(l) for l in buf.splitlines()]))
"""


def require_setpriv():
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to become an unprivileged user")


ONE_REQUEST = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
buf = b""
while b"\n" not in buf:
    buf += s.recv(65536)
print(buf.splitlines()[0].decode())
"""


def run_as_nobody(socket_path, request=None):
    """Runs a tiny client as the unprivileged user `nobody`; returns what it printed: the replies to
    stands.attach and dockd.version, or the reply to `request`."""
    require_setpriv()
    nobody = pwd.getpwnam("nobody")
    script = [NOBODY_CLIENT, str(socket_path)] if request is None else [ONE_REQUEST, str(socket_path), json.dumps(request)]
    out = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                          "/usr/bin/python3", "-c", *script], capture_output=True, timeout=20, check=True)
    return json.loads(out.stdout)


@pytest.fixture
def open_dir():
    """A directory an unprivileged user can reach (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="dockd-auth-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def start_dockd(directory, mode):
    socket_path = directory / "dockd.sock"
    proc = subprocess.Popen([str(BIN / "dockd"), "--ignore-missing-config", "--config", str(directory / "none"),
                             "--socket", str(socket_path), "--socket-group", "", "--socket-mode", mode],
                            stderr=subprocess.DEVNULL)
    wait_for(socket_path.exists, 10, "dockd's socket")
    return proc, socket_path


def test_a_user_without_access_to_the_socket_cannot_connect(open_dir):
    proc, socket_path = start_dockd(open_dir, "0660")
    try:
        assert oct(socket_path.stat().st_mode & 0o777) == "0o660"
        assert run_as_nobody(socket_path) == {"connect": "denied"}
    finally:
        proc.terminate(); proc.wait(5)


@pytest.mark.parametrize("mode", ["0660", "0666"])
def test_the_socket_appears_with_its_mode_already_set(open_dir, mode):
    """Watched as closely as Python can from the moment dockd starts: the first time the socket
    exists, its mode is the configured one (a client that connects as soon as it sees the socket is
    never refused by the umask's mode for an instant). Seen failing under load before the socket was
    bound beside its name and renamed into place."""
    socket_path = open_dir / "dockd.sock"
    proc = subprocess.Popen([str(BIN / "dockd"), "--ignore-missing-config", "--config", str(open_dir / "none"),
                             "--socket", str(socket_path), "--socket-group", "", "--socket-mode", mode],
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                first = socket_path.stat().st_mode & 0o777
                break
            except FileNotFoundError:
                assert time.monotonic() < deadline and proc.poll() is None, "dockd's socket never appeared"
        assert oct(first) == oct(int(mode, 8))
        assert not (open_dir / "dockd.sock.new").exists()
    finally:
        proc.terminate(); proc.wait(5)


def test_an_unprivileged_client_may_read_but_not_administer(open_dir):
    proc, socket_path = start_dockd(open_dir, "0666")
    try:
        replies = {r["id"]: r for r in run_as_nobody(socket_path)}
        assert replies[1]["error"]["code"] == -32007 and "uid" in replies[1]["error"]["message"]
        assert replies[2]["result"]["daemon"] == "dockd"
    finally:
        proc.terminate(); proc.wait(5)


def test_dockd_runs_without_root(open_dir):
    """As the unit runs it (User=dockd, no capabilities): an ordinary user with access to the
    stand's device node and its runtime directory. It owns the stand, serves the API, moves."""
    require_setpriv()
    nobody = pwd.getpwnam("nobody")
    if not os.access(BIN / "dockd", os.X_OK) or any(not (p.stat().st_mode & 0o001) for p in (BIN / "dockd").parents
                                                     if p != Path("/")):
        pytest.skip(f"{BIN} is not reachable by other users")
    link = open_dir / "stand"
    sim = subprocess.Popen([str(BIN / "dock-sim"), "--pty", "--link", str(link), "--seed", "9"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    dockd = None
    try:
        pty = sim.stdout.readline().decode().split()[1]
        os.chown(pty, nobody.pw_uid, -1)  # what udev's rule does for the dock group
        run_dir = open_dir / "run"
        run_dir.mkdir()
        os.chown(run_dir, nobody.pw_uid, nobody.pw_gid)
        socket_path = run_dir / "dockd.sock"
        dockd = subprocess.Popen(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                                  "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs",
                                  str(BIN / "dockd"), "--ignore-missing-config", "--config", str(open_dir / "none"),
                                  "--no-hotplug", "--device", str(link), "--socket", str(socket_path), "--socket-group", ""],
                                 stderr=open(open_dir / "dockd.err", "wb"))
        wait_for(socket_path.exists, 10, "dockd's socket")
        status = Path(f"/proc/{dockd.pid}/status").read_text()
        uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
        assert set(uids) == {str(nobody.pw_uid)}, status
        cap_eff = next(line for line in status.splitlines() if line.startswith("CapEff:")).split()[1]
        assert int(cap_eff, 16) == 0
        assert socket_path.stat().st_uid == nobody.pw_uid
        c = Client(socket_path)
        wait_for(lambda: any(s["state"] == "connected" for s in c.result("stands.list")), 10, "the stand")
        c.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
        motion = c.result("motion.orient", {"yaw": 0.3, "duration": 0.5})
        done = c.wait_notification(lambda m: m.get("method") == "motion.progress" and m["params"]["id"] == motion["id"]
                                   and m["params"]["state"] != "running", timeout=10)
        assert done["params"]["state"] == "completed", done
        c.close()
        dockd.terminate()
        assert dockd.wait(10) == 0
        assert not socket_path.exists(), "dockd removes its socket on the way out"
    finally:
        if dockd is not None and dockd.poll() is None:
            dockd.kill()
        sim.terminate()
        sim.wait(5)
