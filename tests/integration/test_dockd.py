"""The real dockd against the real dock-sim over a pty, driven through the JSON-RPC socket."""
import json
import os
import signal
import subprocess
import time

from conftest import BIN, Client, wait_for
from thread_freeze import all_threads_held_but, threads


def position(client, axis):
    return client.latest("motion.state")["params"]["positions"][axis]


def test_version_and_connected_stand(rig):
    c = rig.client()
    version = c.result("dockd.version")
    assert version["api"]["major"] == 1 and version["protocol"] == "1.1"
    stand = rig.connected_stand(c)
    assert stand["id"] == "SIM-0001"
    assert stand["identity"]["model"] == "dock-sim"
    axes = {a["axis"]: a for a in stand["capabilities"]["axes"]}
    assert axes["yaw"]["continuous"] is True and axes["pitch"]["max"] > 0
    assert stand["docked"] is True


def test_velocity_moves_and_deadman_stops(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 50})
    start = position(c, "yaw")
    c.result("motion.velocity", {"yaw": 1.0})
    # Each FEEDBACK as it comes (stand time, yaw, yaw rate), until the stand is moving and then at rest.
    states = []
    def moved_and_stopped():
        p = c.wait_notification(lambda m: m.get("method") == "motion.state", timeout=5)["params"]
        states.append((p["stand_time_us"] / 1e6, p["positions"]["yaw"], p["velocities"]["yaw"]))
        moving = [s for s in states if s[2] > 0.5]
        return moving and states[-1][2] < 0.01 and states[-1][0] > moving[-1][0]
    wait_for(moved_and_stopped, 10, "the stand to move and stop")
    assert max(s[1] for s in states) - start > 0.1, "yaw moved under a velocity command"
    # No renewal: the 0.5 s deadman stopped it, about half a second of motion (stand time).
    moving = [s for s in states if s[2] > 0.05]
    assert moving[-1][0] - moving[0][0] < 0.8, f"moved for {moving[-1][0] - moving[0][0]:.2f} s without a renewal"
    assert states[-1][1] - start < 1.0, "the deadman stopped it about 0.5 s after the command"


def test_orientation_reaches_target(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
    motion = c.result("motion.orient", {"yaw": 0.6, "pitch": 0.25, "duration": 1.0})
    done = c.wait_notification(lambda m: m.get("method") == "motion.progress"
                               and m["params"]["id"] == motion["id"] and m["params"]["state"] != "running", timeout=6)
    assert done["params"]["state"] == "completed", done
    time.sleep(0.1)
    state = c.latest("motion.state")["params"]["positions"]
    assert abs(state["yaw"] - 0.6) < 0.02 and abs(state["pitch"] - 0.25) < 0.02, state


def test_every_builtin_animation_completes(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 1})
    for name in ["wakeup", "yes", "no", "kapow"]:
        motion = c.result("animation.play", {"name": name})
        done = c.wait_notification(lambda m: m.get("method") == "motion.progress"
                                   and m["params"]["id"] == motion["id"] and m["params"]["state"] != "running", timeout=15)
        assert done["params"]["state"] == "completed", (name, done)


def test_unknown_animation_and_bad_params_are_refused(rig):
    c = rig.client()
    rig.connected_stand(c)
    assert c.call("animation.play", {"name": "moonwalk"})["error"]["code"] == -32003
    assert c.call("motion.velocity", {"yaw": "fast"})["error"]["code"] == -32602
    assert c.call("motion.orient", {"pitch": 5.0})["error"]["code"] in (-32003, -32009)
    assert c.call("no.such.method")["error"]["code"] == -32601


def test_button_and_battery_events_reach_subscribers(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["events", "battery"]})
    rig.sim_command("press tracking")
    event = c.wait_notification(lambda m: m.get("method") == "stand.event" and m["params"]["kind"] == "tracking_button")
    assert event["params"]["pressed"] is True
    toggled = c.wait_notification(lambda m: m.get("method") == "tracking.changed")
    assert toggled["params"]["enabled"] is False and toggled["params"]["source"] == "button"
    rig.sim_command("zoom 2.0")
    zoom = c.wait_notification(lambda m: m.get("method") == "stand.event" and m["params"]["kind"] == "zoom")
    assert zoom["params"]["factor"] == 2.0
    rig.sim_command("battery 0.1")
    low = c.wait_notification(lambda m: m.get("method") == "battery.state" and m["params"]["low"])
    assert abs(low["params"]["level"] - 0.1) < 0.011 and low["params"]["name"] == "internal"
    rig.sim_command("undock")
    c.wait_notification(lambda m: m.get("method") == "stand.event" and m["params"]["kind"] == "undocked")


def test_unplug_mid_motion_reports_and_reconnects(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["stands"]})
    c.result("motion.velocity", {"yaw": 0.5})
    rig.sim_command("unplug 0.5")
    gone = c.wait_notification(lambda m: m.get("method") == "stand.disconnected", timeout=5)
    assert gone["params"]["stand"] == "SIM-0001"
    back = c.wait_notification(lambda m: m.get("method") == "stand.connected", timeout=15)
    assert back["params"]["id"] == "SIM-0001"
    assert c.result("dockd.version")["api"]["major"] == 1


def test_a_stand_that_connected_once_and_now_fails_its_handshakes_is_asked_less_and_less_often(rig):
    """The stand falls silent (its port still opens): the link it had is lost and each reopened link
    fails its handshake. Only a link that made a handshake starts the backoff afresh, so the waits
    grow (they stayed at 0.25 s for good once a stand had ever connected); it is back when it speaks."""
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["stands"]})
    rig.sim_command("silent 6")
    c.wait_notification(lambda m: m.get("method") == "stand.disconnected", timeout=10)

    def waits():
        return [float(line.split("reconnecting in ")[1].split(" s")[0]) for line in rig.log().splitlines()
                if "reconnecting in " in line]
    wait_for(lambda: len(waits()) >= 3, 30, "three reconnects")
    assert waits()[:3] == [0.25, 0.5, 1.0], (waits(), rig.log()[-2000:])
    back = c.wait_notification(lambda m: m.get("method") == "stand.connected", timeout=30)
    assert back["params"]["id"] == "SIM-0001"


def test_a_stand_whose_node_comes_back_reconnects_without_waiting_out_its_backoff(rig):
    """No udev here: the node's return is seen by watching its directory, not at the backoff's next
    try (up to 8 s later)."""
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["stands"]})
    rig.sim.terminate()
    rig.sim.wait(5)
    c.wait_notification(lambda m: m.get("method") == "stand.disconnected", timeout=10)
    wait_for(lambda: "reconnecting in 8.0 s" in rig.log(), 30, "the backoff grown to 8 s")
    if rig.link.exists():
        rig.link.unlink()  # dock-sim removes its link as it exits; the watch sees only a new one
    rig.sim = subprocess.Popen([str(BIN / "dock-sim"), "--pty", "--link", str(rig.link), "--seed", "3"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(rig.tmp / "sim2.err", "wb"))
    assert rig.sim.stdout.readline().decode().startswith("pty ")
    back = c.wait_notification(lambda m: m.get("method") == "stand.connected", timeout=6)
    assert back["params"]["id"] == "SIM-0001"
    assert "the device node is back: reconnecting now" in rig.log()


def test_bad_json_and_huge_lines_get_errors_and_the_daemon_keeps_serving(rig):
    c = rig.client()
    c.send_raw(b"{this is not json\n")
    assert c.read_message()["error"]["code"] == -32700
    c.send_raw(b"[1, 2]\n")
    assert c.read_message()["error"]["code"] == -32600
    c.send_raw(b'{"jsonrpc": "2.0", "id": 5, "method": "dockd.version", "params": [1]}\n')
    assert c.read_message()["error"]["code"] == -32602
    c.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"' + b"x" * (10 * 1024 * 1024) + b'"}\n')
    reply = c.read_message(timeout=30)
    assert reply["error"]["code"] == -32600 and "exceeds" in reply["error"]["message"]
    # The same connection and a new one still work.
    assert c.result("dockd.version")["daemon"] == "dockd"
    assert rig.client().result("dockd.version")["daemon"] == "dockd"


def test_vanished_client_leaves_daemon_serving(rig):
    c = rig.client()
    c.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"topics":["motion"],"motion_rate":100}}\n')
    c.sock.close()
    rig.clients.remove(c)
    time.sleep(0.3)
    assert rig.client().result("dockd.version")["daemon"] == "dockd"


def test_sigterm_stops_motors_and_removes_socket(rig):
    c = rig.client()
    rig.connected_stand(c)
    c.result("motion.velocity", {"yaw": 1.0})
    time.sleep(0.1)
    stops_before = rig.sim_log().count("STOP")
    rig.dockd.send_signal(signal.SIGTERM)
    assert rig.dockd.wait(5) == 0
    assert not rig.socket_path.exists()
    # The stand was told: dock-sim logged a STOP from the host after the signal.
    wait_for(lambda: rig.sim_log().count("STOP") > stops_before, 2, "a STOP frame at the stand")


def test_sigterm_stops_the_stand_with_only_the_event_loop_running(rig):
    """Issue 23: SIGTERM's STOP needs no thread of dockd's but its event loop (NIO's, which runs
    every stand and the API): with every other thread held still mid-move (thread_freeze), the
    stand gets its STOP, and dockd ends as ever (exit 0, its socket removed: the rest of the stop
    runs on threads Dispatch starts meanwhile, or once the held ones run again). Through
    ServiceLifecycle's signal handling the stop waited for a Dispatch thread and then the
    cooperative pool, which in the VM ran it 0.05-0.52 s after the signal."""
    c = rig.client()
    rig.connected_stand(c)
    c.result("motion.orient", {"yaw": 2.0, "duration": 30.0})  # moving for longer than the test
    stops_before = rig.sim_log().count("STOP")
    # dockd's one event loop: the thread of NIO's singleton group (`NIOSingletons.groupLoopCountSuggestion`).
    with all_threads_held_but(rig.dockd.pid, keep=lambda name: name.startswith("NIO-SGLTN-")) as (kept, held):
        assert len(kept) == 1 and held, threads(rig.dockd.pid)
        rig.dockd.send_signal(signal.SIGTERM)
        wait_for(lambda: rig.sim_log().count("STOP") > stops_before, 10,
                 f"a STOP at the stand while dockd's threads but {kept[0]} were held ({len(held)}: {sorted(set(held))})")
    assert rig.dockd.wait(10) == 0
    assert not rig.socket_path.exists()
    log = rig.log()
    assert "SIGTERM: the stands are told to stop their motors" in log and "stopping" in log, log[-1500:]


def test_a_second_sigterm_or_sigint_while_stopping_changes_nothing(rig):
    """The first signal stops dockd; more while it stops are logged, and it ends as after one (two
    SIGTERMs pending at once are one: the other is heard again, SIGINT or SIGTERM, whichever the
    kernel gives second). All three are sent while dockd is held (SIGSTOP), so they are pending
    together when it runs again: sent one by one to a running dockd, the later ones could come
    after it had stopped reading them, on a busy machine."""
    c = rig.client()
    rig.connected_stand(c)
    rig.dockd.send_signal(signal.SIGSTOP)
    try:
        for sig in (signal.SIGTERM, signal.SIGTERM, signal.SIGINT):
            rig.dockd.send_signal(sig)
    finally:
        rig.dockd.send_signal(signal.SIGCONT)
    assert rig.dockd.wait(10) == 0
    assert not rig.socket_path.exists()
    log = rig.log()
    assert log.count("stopping: motors stop") == 1, log[-1500:]
    assert " again: dockd is stopping already" in log, log[-1500:]


def test_sigkill_leaves_the_stand_to_its_heartbeat_timeout(rig):
    """No goodbye is possible after SIGKILL: the stand stops itself when the heartbeat lapses
    (500 ms by default, PROTOCOL.md §3)."""
    c = rig.client()
    rig.connected_stand(c)
    c.result("subscribe", {"topics": ["motion"], "motion_rate": 50})
    for _ in range(3):
        c.result("motion.velocity", {"yaw": 0.5})
        time.sleep(0.1)
    killed = time.monotonic()
    rig.dockd.send_signal(signal.SIGKILL)
    rig.dockd.wait(5)
    assert "motors stopped" not in rig.sim_log()
    wait_for(lambda: "motors stopped" in rig.sim_log(), 3, "the stand's heartbeat-lost FAULT")
    elapsed = time.monotonic() - killed
    assert elapsed < 1.5, f"the stand stopped itself {elapsed:.2f} s after dockd died"


def test_a_client_killed_mid_request_loses_its_lease_and_its_motion_stops(rig):
    """A real process holding the stand, killed (SIGKILL) halfway through writing a request: dockd
    drops the half line, releases the lease, and the velocity it was sending runs out (deadman)."""
    import subprocess
    import sys
    watcher = rig.client()
    rig.connected_stand(watcher)
    watcher.result("subscribe", {"topics": ["motion"], "motion_rate": 20})
    victim = subprocess.Popen([sys.executable, "-c", """
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"motion.velocity","params":{"yaw":0.6}}\\n')
s.recv(4096)
s.sendall(b'{"jsonrpc":"2.0","id":2,"method":"motion.velocity","params":{"ya')
print("sent", flush=True)
time.sleep(60)
""", str(rig.socket_path)], stdout=subprocess.PIPE)
    assert victim.stdout.readline().strip() == b"sent"
    wait_for(lambda: watcher.latest("motion.state")["params"]["velocities"]["yaw"] > 0.3, 5, "the victim's motion")
    victim.kill()
    victim.wait(5)
    stopped = watcher.wait_notification(lambda m: m.get("method") == "motion.state"
                                        and abs(m["params"]["velocities"]["yaw"]) < 0.02, timeout=5)
    assert stopped
    # The lease went with the connection: another client controls the stand without forcing.
    other = rig.client()
    assert other.result("motion.velocity", {"yaw": 0.1}) is not None
    assert rig.client().result("dockd.version")["daemon"] == "dockd"


def test_a_link_dockd_closes_itself_is_logged_as_such_not_blamed_on_the_stand(rig):
    """A detach and SIGTERM close the stand's link from dockd's side: logged at info as dockd's own
    close and why, not as a warning that the stand closed the link (EOF or hangup)."""
    c = rig.client()
    rig.connected_stand(c)
    c.result("stands.detach", {"device": str(rig.link)})
    c.result("stands.attach", {"device": str(rig.link)})
    rig.connected_stand(c)
    rig.dockd.send_signal(signal.SIGTERM)
    assert rig.dockd.wait(10) == 0
    disconnected = [line for line in rig.log().splitlines() if "stand disconnected" in line]
    assert len(disconnected) == 2, rig.log()[-3000:]
    assert "reason=dockd closed the link: the stand was detached" in disconnected[0], disconnected
    assert "reason=dockd closed the link: dockd is stopping" in disconnected[1], disconnected
    assert all(" info " in line for line in disconnected), disconnected
