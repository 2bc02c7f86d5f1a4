"""A stand's link opened with too few file descriptors left: the real dockd under a real
RLIMIT_NOFILE (prlimit from util-linux), a real dock-sim on a pty. A serial link takes three
descriptors (the tty, a duplicate for writing, the link's timer); with none, one or two left, the
opening fails with the system's error, dockd says why in the stand's `last_error` and keeps
serving, and the stand connects once descriptors are free again."""
import os
import subprocess

from conftest import BIN, wait_for


def limit_leaving(pid, spare):
    """The soft limit that leaves `spare` descriptors free: RLIMIT_NOFILE bounds the numbers a new
    descriptor may take, and the lowest free ones may lie between those in use."""
    used = {int(n) for n in os.listdir(f"/proc/{pid}/fd")}
    free = (n for n in range(len(used) + spare + 1) if n not in used)
    return [next(free) for _ in range(spare + 1)][-1]


def set_limit(pid, soft):
    """The soft limit alone: a hard limit lowered could not be raised again here (EPERM)."""
    subprocess.run(["prlimit", "--pid", str(pid), f"--nofile={soft}:"], check=True)


def stand_at(client, endpoint):
    return next((s for s in client.result("stands.list") if s["endpoint"] == endpoint), None)


def test_a_link_opened_without_descriptors_fails_with_its_reason_and_dockd_keeps_serving(rig, tmp_path):
    c = rig.client()
    rig.connected_stand(c)
    second = tmp_path / "second"
    sim = subprocess.Popen([str(BIN / "dock-sim"), "--pty", "--link", str(second), "--seed", "4"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(tmp_path / "sim2.err", "wb"))
    try:
        assert sim.stdout.readline().decode().startswith("pty "), "dock-sim did not offer its pty"
        wait_for(second.exists, 5, "the second dock-sim's link")
        endpoint = f"serial:{second}@115200"
        pid = rig.dockd.pid
        original = int(subprocess.run(["prlimit", "--pid", str(pid), "--nofile", "--noheadings", "--output", "SOFT"],
                                      check=True, capture_output=True, text=True).stdout.split()[0])
        reasons = []
        for spare in range(3):
            # The client's connection is open already: what is left is the link's alone.
            set_limit(pid, limit_leaving(pid, spare))
            assert "result" in c.call("stands.attach", {"device": str(second)})
            failed = wait_for(lambda: (s := stand_at(c, endpoint)) and s["last_error"] and s, 15,
                              f"the opening's failure with {spare} descriptors spare")
            assert failed["state"] != "connected", failed
            reasons.append(failed["last_error"])
            assert rig.dockd.poll() is None, f"dockd ended with {spare} descriptors spare: {rig.log()[-3000:]}"
            set_limit(pid, original)
            assert "result" in c.call("stands.detach", {"device": str(second)})
        assert all("Too many open files" in r for r in reasons), reasons
        assert any("timer" in r for r in reasons), f"no opening failed at the link's timer: {reasons}"
        # The first stand ran on throughout; with descriptors free the second connects.
        assert stand_at(c, f"serial:{rig.link}@115200")["state"] == "connected"
        assert "result" in c.call("stands.attach", {"device": str(second)})
        wait_for(lambda: (s := stand_at(c, endpoint)) and s["state"] == "connected", 15, "the second stand connected")
    finally:
        if sim.poll() is None:
            sim.terminate()
        sim.wait(5)
