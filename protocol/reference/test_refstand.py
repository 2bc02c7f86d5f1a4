"""The reference stand (refstand.py) in virtual time, against PROTOCOL.md 1.1 section by section.
A small host here speaks through the reference codec: python3 -m pytest -q protocol/reference."""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import dockproto  # noqa: E402
import make_vectors  # noqa: E402
import refstand  # noqa: E402

T = dockproto.TIMING


class Host:
    def __init__(self, stand):
        self.stand = stand
        self.sender = dockproto.Sender()
        self.decoder = dockproto.StreamDecoder()
        self.now = 0.0
        self.frames = []  # (now, frame)

    def _take(self, data):
        for event in self.decoder.feed(data):
            assert event[0] == "frame", event
            self.frames.append((self.now, event[1]))

    def send(self, type_name, payload=None, ack=False):
        frame, data = self.sender.encode(type_name, payload, ack)
        self._take(self.stand.receive(data, self.now))
        return frame["seq"]

    def raw(self, data):
        self._take(self.stand.receive(data, self.now))

    def run(self, seconds, heartbeat=0.1):
        end, last = self.now + seconds, self.now
        while self.now < end - 1e-9:
            self.now = round(self.now + 0.001, 6)
            self._take(self.stand.advance(self.now))
            if heartbeat and self.now - last >= heartbeat:
                last = self.now
                self.send("heartbeat", {"uptime_ms": 0})

    def hello(self, major=1, minor=1, timeout=0):
        return self.send("hello", {"major": major, "minor": minor, "heartbeat_timeout_ms": timeout, "host": "test"},
                         ack=True)

    def of(self, type_name, since=0.0):
        return [f for t, f in self.frames if f["type"] == type_name and t >= since]

    def answer_to(self, seq):
        return [f for _, f in self.frames if f["type"] in ("ack", "nack") and f["payload"]["ack_seq"] == seq]


def test_idle_stand_heartbeats_every_250_ms_and_refuses_commands_not_ready():
    host = Host(refstand.ReferenceStand())
    host.run(2.0, heartbeat=0)
    beats = [t for t, f in host.frames if f["type"] == "heartbeat"]
    gaps = [b - a for a, b in zip(beats, beats[1:])]
    assert len(beats) >= 8 and max(gaps) <= T["stand_heartbeat_interval"] + 0.0011
    seq = host.send("velocity", {"axes": [{"axis": "yaw", "velocity": 1.0}]}, ack=True)
    assert host.answer_to(seq)[0]["payload"]["code"] == dockproto.NACK_CODES["not_ready"]
    host.run(0.3, heartbeat=0)
    assert host.stand.axes[0].position == 0.0


def test_handshake_order_and_version_refusal():
    host = Host(refstand.ReferenceStand(serial="REF-7"))
    host.hello()
    replies = [f for _, f in host.frames if f["type"] != "heartbeat"]  # it heartbeats while idle
    assert [f["type"] for f in replies] == ["hello_reply", "capabilities", "battery", "event"]
    assert replies[0]["payload"]["serial"] == "REF-7"
    assert replies[0]["payload"]["minor"] == 1

    refusing = Host(refstand.ReferenceStand(version=(2, 0)))
    seq = refusing.hello()
    nack = refusing.answer_to(seq)[0]["payload"]
    assert (nack["code"], nack["detail"]) == (dockproto.NACK_CODES["version_mismatch"], "stand speaks 2.0")
    assert refusing.stand.state == "idle"


def test_a_1_0_host_is_served():
    host = Host(refstand.ReferenceStand())
    host.hello(minor=0)
    assert host.stand.state == "session"


def test_every_ack_request_gets_one_answer_and_acks_none():
    host = Host(refstand.ReferenceStand())
    host.hello()
    unknown = make_vectors.raw_frame(make_vectors.raw_packet(0x30, b"\x01", seq=100, flags=1))
    short = make_vectors.raw_frame(make_vectors.raw_packet(0x10, b"\x03\x00", seq=101, flags=1))
    host.raw(unknown + short)
    codes = {f["payload"]["ack_seq"]: f["payload"]["code"] for f in host.of("nack")}
    assert codes == {100: dockproto.NACK_CODES["unsupported"], 101: dockproto.NACK_CODES["malformed"]}
    seq = host.send("ack", {"ack_seq": 1, "ack_type": 4}, ack=True)
    beat = host.send("heartbeat", {"uptime_ms": 1}, ack=True)
    assert host.answer_to(seq) == [] and host.answer_to(beat)[0]["type"] == "ack"
    nan = host.send("velocity", {"axes": [{"axis": "yaw", "velocity": math.nan}]}, ack=True)
    assert host.answer_to(nan)[0]["payload"]["code"] == dockproto.NACK_CODES["out_of_range"]


def test_heartbeat_lost_stops_and_only_actuation_moves_it_again():
    host = Host(refstand.ReferenceStand())
    host.hello(timeout=200)
    host.send("velocity", {"axes": [{"axis": "yaw", "velocity": 1.0}]})
    host.run(0.5, heartbeat=0)
    assert host.stand.state == "heartbeat_lost"
    assert host.of("fault")[0]["payload"]["code"] == dockproto.FAULT_CODES["heartbeat_lost"]
    host.run(0.5)
    assert host.stand.state == "heartbeat_lost" and abs(host.stand.axes[0].velocity) < 1e-9
    host.send("velocity", {"axes": [{"axis": "yaw", "velocity": 1.0}]})
    host.run(0.5)
    assert host.stand.state == "session" and host.stand.axes[0].velocity > 0.9


def test_a_velocity_holds_while_only_heartbeats_follow():
    """Section 3.3: a setpoint holds until the next command, so a host need not repeat an unchanged
    VELOCITY (dockd writes one again only every 50 ms); its HEARTBEATs keep the session."""
    host = Host(refstand.ReferenceStand())
    host.hello()
    host.send("velocity", {"axes": [{"axis": "yaw", "velocity": 1.0}]})
    host.run(2.0)
    assert host.stand.state == "session" and host.stand.axes[0].velocity > 0.9


def test_limits_continuous_axis_ignored_and_all_or_nothing():
    host = Host(refstand.ReferenceStand())
    host.hello()
    good = host.send("limits", {"axes": [
        {"axis": "yaw", "min": math.nan, "max": math.nan, "max_speed": 3.0, "max_accel": 12.0},
        {"axis": "pitch", "min": -0.3, "max": 0.3, "max_speed": 2.0, "max_accel": 10.0}]}, ack=True)
    assert host.answer_to(good)[0]["type"] == "ack"
    bad = host.send("limits", {"axes": [
        {"axis": "yaw", "min": 0.0, "max": 0.0, "max_speed": math.inf, "max_accel": 12.0},
        {"axis": "pitch", "min": -0.1, "max": 0.1, "max_speed": 2.0, "max_accel": 10.0}]}, ack=True)
    assert host.answer_to(bad)[0]["payload"]["code"] == dockproto.NACK_CODES["out_of_range"]
    assert (host.stand.axes[1].lo, host.stand.axes[1].hi) == (refstand.f32(-0.3), refstand.f32(0.3)), \
        "nothing of a refused LIMITS applies"
    host.send("velocity", {"axes": [{"axis": "yaw", "velocity": 3.0}, {"axis": "pitch", "velocity": 2.0}]})
    host.run(2.0)
    assert host.stand.axes[0].position > 4.0 and abs(host.stand.axes[1].position - 0.3) < 1e-6


def test_a_range_that_excludes_the_position_holds_the_axis():
    host = Host(refstand.ReferenceStand())
    host.hello()
    host.send("position", {"duration": 0.0, "axes": [{"axis": "pitch", "position": 0.6, "velocity": 0.0}]})
    host.run(1.5)
    seq = host.send("limits", {"axes": [{"axis": "pitch", "min": -0.2, "max": 0.3, "max_speed": 2.0,
                                         "max_accel": 10.0}]}, ack=True)
    assert host.answer_to(seq)[0]["type"] == "ack"
    host.send("velocity", {"axes": [{"axis": "pitch", "velocity": 1.0}]})
    host.run(0.3)
    assert abs(host.stand.axes[1].position - 0.6) < 1e-6
    assert host.of("feedback")[-1]["payload"]["axes"][1]["status"] & 0x02
    host.send("velocity", {"axes": [{"axis": "pitch", "velocity": -1.0}]})
    host.run(1.5)
    assert abs(host.stand.axes[1].position + 0.2) < 1e-6


def test_battery_on_a_step_of_one_hundredth_and_every_ten_seconds():
    host = Host(refstand.ReferenceStand())
    host.hello()
    start = host.now
    host.stand.set_battery(0, 0.795)
    host.run(1.0)
    assert len(host.of("battery", since=start + 0.001)) == 0
    host.stand.set_battery(0, 0.789)
    host.run(1.0)
    assert [f["payload"]["level"] for f in host.of("battery", since=start + 0.001)] == [0.7889999747276306]
    host.run(10.0)
    assert len(host.of("battery", since=start + 0.001)) == 2
