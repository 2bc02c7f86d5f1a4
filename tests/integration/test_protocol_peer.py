"""A stand written from PROTOCOL.md alone (protocol/reference/refstand.py) against the real dockd over
a real pty: what a firmware engineer's first stand sees of the daemon (issue 11, protocol 1.1). The
tests that time dockd serve the stand on a Unix socket instead (protocol_peer.SocketStand): beside
a CPU hog, dockd's own heartbeat stamps were 300-500 ms apart with the stand on a pty and at most
55 ms apart on a socket, at the same load.

Times are measured on the stand's side of the link. dockd runs on a shared, busy machine, so each
timing assertion leaves room for its scheduling and says what it measured.
"""

import math
import statistics
import time

import pytest
from conftest import Client, wait_for
from protocol_peer import Daemon, PtyStand, SocketStand

import dockproto

T = dockproto.TIMING


@pytest.fixture
def peer(tmp_path):
    """start(stand options…, config=…, link="pty" or "unix") → (stand, Daemon, Client); all stopped at
    the end. The tests that time dockd use link="unix" (protocol_peer.SocketStand says why)."""
    started = []

    def start(config=None, link="pty", **options):
        stand = PtyStand(**options) if link == "pty" else SocketStand(tmp_path / f"stand{len(started)}.sock", **options)
        daemon = Daemon(tmp_path, stand.path, config)
        started.append((stand, daemon))
        wait_for(lambda: daemon.socket_path.exists() or daemon.process.poll() is not None, 10, "dockd's socket")
        assert daemon.process.poll() is None, daemon.log()
        client = wait_for(lambda: _connect(daemon), 10, "dockd accepting")
        started[-1] += (client,)
        return stand, daemon, client

    yield start
    for item in started:
        if len(item) > 2:
            item[2].close()
        item[1].stop()
        item[0].close()


def _connect(daemon):
    try:
        return Client(daemon.socket_path)
    except OSError:
        return None


def _stand(client):
    stands = client.result("stands.list")
    return stands[0] if stands else None


def _connected(client, timeout=10):
    return wait_for(lambda: (s := _stand(client)) and s["state"] == "connected" and s, timeout, "a connected stand")


def _gaps(times):
    return [b - a for a, b in zip(times, times[1:])]


@pytest.mark.parametrize("timeout_ms", [500, 100])
def test_idle_host_frames_come_at_least_every_quarter_timeout(peer, timeout_ms):
    config = None if timeout_ms == 500 else f"[daemon]\nheartbeat_timeout_ms = {timeout_ms}\n"
    stand, daemon, client = peer(config=config, link="unix")
    _connected(client)
    since = stand.now() + 1.0
    time.sleep(4.0)
    stand.check()
    times = [t for t, _ in stand.host_frames() if t > since]
    gaps = _gaps(times)
    limit = timeout_ms / 4000
    median, worst = statistics.median(gaps), max(gaps)
    p90 = statistics.quantiles(gaps, n=10)[-1]
    measured = f"{len(gaps)} gaps: median {median * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms, max {worst * 1000:.1f} ms"
    assert median <= limit, f"limit {limit * 1000:.0f} ms; {measured}"
    # A busy machine delays dockd's timer now and then (a 58 ms gap was seen at load 7 with a 25 ms
    # limit), but never to the stand's timeout: the stand must not stop.
    assert worst < timeout_ms / 1000, measured
    assert stand.do(lambda s: s.state) == "session", f"the stand lost its host; {measured}"


def test_every_ack_request_of_the_stand_is_answered(peer):
    stand, daemon, client = peer(link="unix")
    _connected(client)
    seqs = {}

    def queue(s):
        for name, payload in [("event", {"time_us": 1, "kind": 3, "value": 1, "button": 0, "factor": 1.0}),
                              ("heartbeat", {"uptime_ms": 7}),
                              ("fault", {"time_us": 2, "severity": 0, "code": 8, "axis": 255, "text": "hello host"})]:
            seqs[name] = s.sender.next_seq
            s.send_message(name, payload, ack=True)
        seqs["unknown 0x30"] = s.sender.next_seq
        s.send_raw(dockproto.cobs_encode(_packet(0x30, s.sender.next_seq)) + b"\x00")
        s.sender.next_seq = (s.sender.next_seq + 1) & 0xFFFF
        return s.now

    sent_at = stand.do(queue)

    def answers():
        got = {f["payload"]["ack_seq"]: (t, f) for t, f in stand.host_answers() if t >= sent_at}
        return got if all(seq in got for seq in seqs.values()) else None

    got = wait_for(answers, 5, "answers to the stand's four ACK requests")
    kinds = {name: (got[seq][1]["type"], got[seq][1]["payload"].get("code")) for name, seq in seqs.items()}
    assert kinds == {"event": ("ack", None), "heartbeat": ("ack", None), "fault": ("ack", None),
                     "unknown 0x30": ("nack", dockproto.NACK_CODES["unsupported"])}
    latencies = [got[seq][0] - sent_at for seq in seqs.values()]
    assert max(latencies) < 0.5, f"answered after {[round(x * 1000) for x in latencies]} ms (spec: 50 ms)"


def _packet(type_code, seq):
    import struct

    body = struct.pack("<BBH", type_code, 1, seq) + b"\x01\x02"
    return body + struct.pack("<H", dockproto.crc16(body))


def test_a_silent_stand_gets_five_hellos_150_ms_apart_then_the_reconnect_backoff(peer):
    """PROTOCOL.md §2.2 and §3.1: 5 HELLOs 150 ms apart, give up 750 ms after the first, reconnect
    after 0.25 s, then 0.5 s (doubling)."""
    stand, daemon, client = peer(link="unix", ignore_hellos=10**6)  # heartbeats, never answers
    wait_for(lambda: len(stand.host_frames("hello")) >= 11, 15, "a third handshake attempt")
    hellos = [t for t, _ in stand.host_frames("hello")]
    shown = f"HELLOs at {[round(t - hellos[0], 3) for t in hellos]}"
    # Where an attempt ends is dockd's word (its log), not a gap the stand measures: the gap from
    # the fifth HELLO to the next attempt's first is 0.4 s by the spec, and a fifth HELLO 30 ms late
    # (a busy machine) made a 0.4 s threshold merge two attempts.
    per_attempt = T["hello_attempts"]
    gave_up = wait_for(lambda: (n := daemon.log().count(f"after {per_attempt} HELLOs in")) >= 2 and n, 5,
                       "dockd giving up twice")
    attempts = [hellos[i:i + per_attempt] for i in range(0, len(hellos), per_attempt)]
    interval = T["hello_interval"]
    for attempt in attempts[:2]:
        assert len(attempt) == per_attempt, shown
        # Each HELLO on one 150 ms schedule, within 0.15 s of its slot: dockd keeps the schedule
        # when a tick is late (a late HELLO is followed by one on time), and the stand's receipt of
        # any of them may be late too; 0.096 s between the first two was seen under load.
        slots = [t - i * interval for i, t in enumerate(attempt)]
        assert max(slots) - min(slots) <= 0.15, shown
    give_up = T["hello_interval"] * T["hello_attempts"]
    backoff = T["reconnect_backoff"][0]
    for i, start in enumerate(a[0] for a in attempts[1:3]):
        waited = start - attempts[i][0] - give_up  # from giving up to the next attempt's first HELLO
        assert backoff * 2 ** i - 0.05 <= waited <= backoff * 2 ** i + 0.5, shown
    error = wait_for(lambda: (_stand(client) or {}).get("last_error"), 5, "the stand's last error")
    assert "5 HELLOs" in error and "1.1" in error and gave_up >= 2, error


def test_a_stand_that_heartbeats_before_it_answers_connects_on_the_first_link(peer):
    stand, daemon, client = peer(link="unix", ignore_hellos=3)  # heartbeats from the start, answers HELLO #4
    _connected(client)
    hellos = [t for t, _ in stand.host_frames("hello")]
    assert len(hellos) == 4
    assert hellos[-1] - hellos[0] < 0.7, f"HELLOs at {[round(t - hellos[0], 3) for t in hellos]}: dockd reconnected"


@pytest.mark.parametrize("replies_in_own_version", [False, True], ids=["nack", "hello-reply"])
def test_a_version_mismatch_names_both_versions_and_is_not_asked_again_and_again(peer, replies_in_own_version):
    """Issue 21: a stand of another major was sent 15 HELLOs in 4 s. PROTOCOL.md §2.2: dockd asks
    again only after `version_retry` (or when the device is plugged in again)."""
    stand, daemon, client = peer(version=(2, 0), replies_in_own_version=replies_in_own_version)
    error = wait_for(lambda: (_stand(client) or {}).get("last_error"), 10, "the stand's last error")
    assert "2.0" in error and "1.1" in error, error
    first = stand.host_frames("hello")[0][0]
    time.sleep(4)  # an absence (no more HELLOs) can only be watched for over a window
    hellos = [round(t - first, 3) for t, _ in stand.host_frames("hello")]
    assert len(hellos) == 1, f"HELLOs at {hellos} s"
    assert "retrying in 60" in daemon.log() or "reconnecting in 60" in daemon.log(), daemon.log()[-2000:]


def test_impossible_battery_values_are_refused(peer):
    stand, daemon, client = peer()
    _connected(client)
    first = stand.do(lambda s: s.sender.next_seq)

    def queue(s):
        for index, level in [(0, math.nan), (0, 1.5), (0, -0.25), (0, math.inf), (3, 0.5)]:
            s.send_message("battery", {"index": index, "level": level, "charge": 1, "flags": 0}, ack=True)

    stand.do(queue)
    seqs = set(range(first, first + 5))
    got = wait_for(lambda: (a := {f["payload"]["ack_seq"]: f for _, f in stand.host_answers()
                                  if f["payload"]["ack_seq"] in seqs}) and len(a) == 5 and a,
                   15, "answers to the five BATTERY frames")
    assert {f["type"] for f in got.values()} == {"nack"}
    assert {f["payload"]["code"] for f in got.values()} == {dockproto.NACK_CODES["out_of_range"]}
    batteries = client.result("battery.get")
    assert [(b["name"], b["level"]) for b in batteries] == [("internal", pytest.approx(0.8))], batteries


def test_a_silent_stand_is_lost_after_the_link_timeout(peer):
    stand, daemon, client = peer(link="unix")
    _connected(client)
    client.result("subscribe", {"topics": ["stands"]})
    muted_at = time.monotonic()
    stand.do(lambda s: setattr(s, "muted", True))
    client.wait_notification(lambda m: m.get("method") == "stand.disconnected", timeout=5)
    lost_after = time.monotonic() - muted_at
    # PROTOCOL.md §3.1: 1000 ms without a valid frame (plus dockd's 20 ms tick and a busy machine).
    assert T["link_timeout"] - 0.05 <= lost_after <= T["link_timeout"] + 0.5, f"lost after {lost_after:.3f} s"


def test_heartbeats_alone_keep_the_link(peer):
    stand, daemon, client = peer(link="unix")
    _connected(client)
    stand.do(lambda s: setattr(s, "feedback_paused", True))  # only the 250 ms HEARTBEAT from now on
    time.sleep(2.5)
    stand.do(lambda s: setattr(s, "feedback_paused", False))
    stand.check()
    reconnects = [t for t, f in stand.host_frames("hello")][1:]
    assert reconnects == [], "dockd dropped a stand that heartbeat every 250 ms"


def test_rejected_values_are_published(peer):
    stand, daemon, client = peer()
    _connected(client)
    client.result("subscribe", {"topics": ["logs"]})
    stand.do(lambda s: s.send_message("battery", {"index": 0, "level": math.nan, "charge": 1, "flags": 0}))
    note = client.wait_notification(lambda m: "BATTERY" in str(m.get("params", {})), timeout=3)
    assert "nan" in str(note["params"]).lower()


def _limits_frames(stand):
    return [sorted(a["axis"] for a in f["payload"]["axes"]) for _, f in stand.host_frames("limits")]


def test_a_stand_refusing_limits_is_not_asked_again_and_a_lease_range_still_reverts(peer):
    """Issue 21: a stand that checks its continuous yaw's LIMITS range (0…0) refused every LIMITS
    naming yaw, and dockd answered each refusal with another LIMITS (2,800 in 1.4 s); a lease's pitch
    range stayed on the stand after the lease ended."""
    stand, daemon, client = peer(link="unix", checks_continuous_ranges=True)
    _connected(client)
    pitch_axis = stand.do(lambda s: s.axes[1])
    own_max = pitch_axis.own[1]
    client.result("motion.limits", {"axes": {"pitch": {"max": 0.2}}})
    assert stand.do(lambda s: s.axes[1].hi) == pytest.approx(0.2, abs=1e-6)
    refused = client.call("motion.limits", {"axes": {"yaw": {"max_speed": 1.0}}})
    assert refused.get("error", {}).get("code") == -32009, refused
    client.close()  # the lease ends: what it changed reverts
    wait_for(lambda: stand.do(lambda s: s.axes[1].hi) == pytest.approx(own_max, abs=1e-6), 5,
             "the stand's own pitch range back")
    time.sleep(1.0)  # an absence (no more LIMITS) can only be watched for over a window
    frames = _limits_frames(stand)
    # A LIMITS whose ACK dockd did not read within its resend timeout goes again (a new seq, the
    # same axes): on a busy machine one did. Those are counted as retries; anything more is asked anew.
    asked = [axes for i, axes in enumerate(frames) if i == 0 or axes != frames[i - 1]]
    watcher = Client(daemon.socket_path)
    retries = watcher.result("stand.get")["counters"]["retries"]
    watcher.close()
    shown = f"LIMITS frames: {frames[:10]} ({len(frames)} in all, {retries} retries)"
    assert asked == [["pitch"], ["yaw"], ["pitch"]] and len(frames) - len(asked) <= retries, shown
    assert "refused" in daemon.log() and daemon.process.poll() is None
