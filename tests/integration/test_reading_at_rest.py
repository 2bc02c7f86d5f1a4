"""A stand at rest with nobody subscribed to its FEEDBACK (issue 26, CPU): dockd reads the link in
batches instead of waking for every FEEDBACK, and what a client asks or subscribes to is still as
fresh as the bytes the stand has sent. The reference stand (protocol/reference/refstand.py) streams
FEEDBACK at 100 Hz on a real pty to the real dockd. The link's silence while reading in batches:
test_protocol_peer.py's test_a_silent_stand_is_lost_after_the_link_timeout (its client subscribes
to `stands` alone).
"""

import os
import statistics
import time
from pathlib import Path

import pytest
from conftest import Client, wait_for
from protocol_peer import Daemon, PtyStand, SocketStand

import dockproto  # noqa: E402 (protocol/reference, put on the path by protocol_peer)


@pytest.fixture
def peer(tmp_path):
    """(PtyStand, Daemon, Client) with the stand connected; all stopped at the end."""
    yield from connected(PtyStand(), tmp_path)


@pytest.fixture
def socket_peer(tmp_path):
    """The same with the stand on a Unix socket (protocol_peer.SocketStand), for a test of what
    dockd does with bytes the stand has written: on a pty beside a CPU hog (load 10) the first
    motion.state was a FEEDBACK 131 ms older than one the stand had written before the subscribe,
    the kernel's starved tty work not having delivered it yet."""
    yield from connected(SocketStand(tmp_path / "stand.sock"), tmp_path)


def connected(stand, tmp_path, config=None):
    daemon = Daemon(tmp_path, stand.path, config)
    client = None
    try:
        wait_for(lambda: daemon.socket_path.exists() or daemon.process.poll() is not None, 10, "dockd's socket")
        assert daemon.process.poll() is None, daemon.log()
        client = Client(daemon.socket_path)
        wait_for(lambda: any(s["state"] == "connected" for s in client.result("stands.list")), 10, "a connected stand")
        yield stand, daemon, client
    finally:
        if client is not None:
            client.close()
        daemon.stop()
        stand.close()


def cpu_seconds(pid):
    """dockd's user + system CPU time, s."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def voluntary_switches(pid):
    """Times dockd's threads went to sleep: each is a wake-up to come."""
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            text = status.read_text()
        except OSError:  # a thread that ended meanwhile
            continue
        total += int(next(line for line in text.splitlines() if line.startswith("voluntary_ctxt_switches")).split()[1])
    return total


def wakeups_per_second(pid, seconds):
    start, before = time.monotonic(), voluntary_switches(pid)
    time.sleep(seconds)
    return (voluntary_switches(pid) - before) / (time.monotonic() - start)


def until(predicate, timeout, what):
    """wait_for with a 1 ms poll: the tests below must ask within a few ms of a FEEDBACK."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.001)


def feedback_written_after(stand, t):
    """Returns once the stand has written a FEEDBACK stamped after `t` (its clock, s): one is made
    when its clock passes the next period, and written before its loop's next turn."""
    until(lambda: stand.do(lambda s: s.now) >= t + 0.011, 5, "the stand's next FEEDBACK")
    made = stand.do(lambda s: s.now)
    until(lambda: stand.do(lambda s: s.now) > made, 5, "the stand's next turn")


def test_a_stand_at_rest_with_no_subscriber_does_not_wake_dockd_for_every_feedback(peer):
    stand, daemon, client = peer
    rate = wakeups_per_second(daemon.process.pid, 3.0)
    stand.check()
    # Before: one wake-up per FEEDBACK (100/s) and the heartbeat's timer. Now, per heartbeat (every
    # 100 ms), its timer, one read after its write and two reads at most 45 ms apart: about 40/s.
    assert rate < 70, f"{rate:.0f} wake-ups/s with the stand at rest and no subscriber"


def test_a_subscription_starts_from_the_latest_feedback_the_stand_sent(socket_peer):
    stand, daemon, client = socket_peer
    for _ in range(10):
        c = Client(daemon.socket_path)
        try:
            t = stand.do(lambda s: s.now)
            feedback_written_after(stand, t)
            c.result("subscribe", {"topics": ["motion"]})
            state = c.wait_notification(lambda m: m.get("method") == "motion.state", timeout=5)
        finally:
            c.close()
        assert state["params"]["stand_time_us"] >= int(t * 1e6), \
            f"motion.state of {state['params']['stand_time_us']} µs, a FEEDBACK of {t * 1e6:.0f} µs was sent before the request"


def test_a_subscriber_to_motion_gets_each_feedback_as_it_comes(peer):
    stand, daemon, client = peer
    client.result("subscribe", {"topics": ["motion"], "motion_rate": 100})
    client.wait_notification(lambda m: m.get("method") == "motion.state", timeout=5)
    ages = []
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        message = client.read_message()
        if message.get("method") == "motion.state":
            ages.append(stand.now() - message["params"]["stand_time_us"] / 1e6)
    stand.check()
    # Read in batches (every 45 ms at most), half of them would be 15 ms old or more.
    assert len(ages) >= 100 and statistics.median(ages) < 0.010, \
        f"{len(ages)} motion.state in 2 s, median age {statistics.median(ages) * 1000:.1f} ms"


def test_waiting_for_the_stands_answer_to_a_write_does_not_busy_loop(peer):
    stand, daemon, client = peer
    # The stand falls silent: the read dockd asks of the link after its next write (a heartbeat,
    # every 100 ms) waits. The batch read's timer must not fire again and again meanwhile: it did,
    # a core's worth until the answer came (up to a FEEDBACK period with a slow harness stand, here
    # until the link's silence limit).
    stand.do(lambda s: setattr(s, "muted", True))
    start, used = time.monotonic(), cpu_seconds(daemon.process.pid)
    time.sleep(0.4)
    share = (cpu_seconds(daemon.process.pid) - used) / (time.monotonic() - start)
    assert share < 0.1, f"dockd used {share * 100:.0f} % of a core waiting for a silent stand's answer"


@pytest.fixture
def slow_heartbeat_peer(tmp_path):
    """The pty stand with dockd's heartbeat every 500 ms (heartbeat_timeout_ms = 2500), so that "until
    dockd's next write" outlasts the kernel's tty delays on a loaded machine; slower, a muted stand's
    silence until the next write would pass dockd's 1 s link timeout."""
    yield from connected(PtyStand(), tmp_path, "[daemon]\nheartbeat_timeout_ms = 2500\n")


def test_the_answer_to_a_write_is_read_when_reading_as_it_comes_ends_before_it(slow_heartbeat_peer):
    stand, daemon, client = slow_heartbeat_peer
    probes = lambda s: [t for t, f in s.host_frames if f["flags"] & dockproto.FLAG_ACK_REQUEST]  # noqa: E731
    feedback_read = lambda: client.result("stand.get")["counters"]["feedback_frames"]  # noqa: E731
    watcher = Client(daemon.socket_path)
    try:
        for _ in range(3):
            # The stand falls silent; dockd's next write asks for an answer (a heartbeat timing the
            # link), and dockd asks NIO to read it.
            muted = stand.do(lambda s: (setattr(s, "muted", True), s.now)[1])
            until(lambda: any(t > muted for t in stand.do(probes)), 5, "a write asking for an answer")
            # A subscriber to `events` for one request: the link is read as it comes, then in
            # batches again before the answer came. That turn dropped the read asked of NIO; dockd
            # then read nothing until its next write, 500 ms after the last.
            watcher.result("subscribe", {"topics": ["events"]})
            client.result("lease.release")
            watcher.result("unsubscribe", {"topics": ["events"]})
            client.result("lease.release")
            before = feedback_read()
            stand.do(lambda s: setattr(s, "muted", False))
            until(lambda: feedback_read() > before, 0.35, "dockd to read the FEEDBACK the stand sends again")
            stand.check()
    finally:
        watcher.close()
