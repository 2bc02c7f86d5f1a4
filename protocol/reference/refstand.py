"""A stand written from PROTOCOL.md 1.1 alone: the reference for the stand's side of a session.

Pure and clock-free like the codec: ``receive(data, now)`` and ``advance(now)`` take the time in
seconds and return the bytes the stand sends, so tests run it in virtual time or drive it over a
real pty (``PtyStand`` in tests/integration/protocol_peer.py). Standard library only.

What it does, section by section:
  §2 states: ``idle`` (before HELLO, or after a HELLO it refused: version refused), ``session``,
     ``heartbeat_lost`` (a session whose host went silent: stopped until the next actuation).
  §3 answers every frame that asks for an ACK (ACK, or NACK with the code the rules give; never an
     ACK or NACK), HEARTBEAT after 250 ms of silence in every state, stops after the host's silence.
  §4 value rules: non-finite numbers refused, LIMITS all or nothing, min/max ignored on a continuous
     axis, a range that excludes the position accepted (the axis only moves back toward it).
  §4 BATTERY on a 0.01 step, a change of charge or flags, and every 10 s.

Knobs for testing a host against a stand that is slow or odd, all within the spec unless named so:
``ignore_hellos`` (answer only the n+1-th HELLO), ``version`` (speak another version),
``ack_requests`` (message types this stand sends with ACK_REQUEST), ``feedback_paused`` (send
no FEEDBACK, only the idle HEARTBEAT; used to test "heard"), ``muted`` (send nothing at all),
``send_raw`` for anything else. Outside the spec: ``checks_continuous_ranges`` (a stand written to
1.0, which left it to guess, that checks a continuous axis's LIMITS range as a limited axis's and so
refuses every LIMITS naming its yaw, whose own range it reports as 0…0); ``replies_in_own_version``
(a stand of another major that answers HELLO with a HELLO_REPLY in its own version instead of NACK
``version_mismatch``).
"""

import math
import struct

import dockproto

T = dockproto.TIMING
ACTUATION = ("velocity", "position")  # the commands that move an axis (section 4)
NACK = dockproto.NACK_CODES


class Axis:
    def __init__(self, name, continuous, lo, hi, max_speed, max_accel, counts_per_rev=16384):
        self.name = name
        self.continuous = continuous
        self.own = (lo, hi, max_speed, max_accel)
        self.counts_per_rev = counts_per_rev
        self.position = 0.0
        self.velocity = 0.0
        self.reset()

    def reset(self):
        """HELLO: the host's limits are forgotten, the axis stops."""
        self.lo, self.hi, self.max_speed, self.max_accel = self.own
        if self.continuous:
            self.lo, self.hi = -math.inf, math.inf
        self.target_velocity = 0.0
        self.target_position = None

    def capability(self):
        lo, hi, speed, accel = self.own
        return {"axis": self.name, "flags": 1 if self.continuous else 0, "min": 0.0 if self.continuous else lo,
                "max": 0.0 if self.continuous else hi, "max_speed": speed, "max_accel": accel,
                "counts_per_rev": self.counts_per_rev}

    def step(self, dt):
        if self.target_position is not None:
            distance = self.target_position - self.position
            if abs(distance) < 1e-4 and abs(self.velocity) <= self.max_accel * max(dt, 1e-3):
                self.position, self.velocity = self.target_position, 0.0
                self.target_position, self.target_velocity = None, 0.0
                return
            # Time-optimal approach: the fastest speed from which it can still brake in time.
            wanted = math.copysign(min(self.max_speed, math.sqrt(2 * self.max_accel * abs(distance))), distance)
        else:
            wanted = max(-self.max_speed, min(self.max_speed, self.target_velocity))
        change = max(-self.max_accel * dt, min(self.max_accel * dt, wanted - self.velocity))
        self.velocity += change
        before = self.position
        self.position += self.velocity * dt
        # Stop at an edge; outside a range that excludes it, only move back toward it (§4 LIMITS).
        if self.position <= self.lo and self.velocity <= 0:
            self.position, self.velocity = max(self.position, min(before, self.lo)), 0.0
        if self.position >= self.hi and self.velocity >= 0:
            self.position, self.velocity = min(self.position, max(before, self.hi)), 0.0

    def status(self):
        bits = 0
        if self.position <= self.lo:
            bits |= 0x01
        if self.position >= self.hi:
            bits |= 0x02
        if self.target_position is not None:
            bits |= 0x20
        return bits


def f32(value):
    """A number as float32 carries it (what a LIMITS or POSITION value becomes on the wire)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _finite(*values):
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in values)


class ReferenceStand:
    def __init__(self, serial="REF-0001", version=(dockproto.PROTOCOL_MAJOR, dockproto.PROTOCOL_MINOR),
                 feedback_hz=100, batteries=("internal",), ignore_hellos=0, ack_requests=(),
                 checks_continuous_ranges=False, replies_in_own_version=False):
        self.serial = serial
        self.version = version
        self.feedback_hz = feedback_hz
        self.axes = [Axis("yaw", True, 0.0, 0.0, 3.0, 12.0), Axis("pitch", False, -0.6, 0.9, 2.0, 10.0)]
        self.battery_names = list(batteries)
        self.battery_levels = [0.8 for _ in batteries]
        self.ignore_hellos = ignore_hellos
        self.ack_requests = set(ack_requests)
        self.checks_continuous_ranges = checks_continuous_ranges
        self.replies_in_own_version = replies_in_own_version
        self.feedback_paused = False
        self.muted = False  # sends nothing at all (a stand whose radio died)
        self.sender = dockproto.Sender()
        self.decoder = dockproto.StreamDecoder()
        self.state = "idle"
        self.heartbeat_timeout_ms = T["default_heartbeat_timeout_ms"]
        self.now = 0.0
        self.started = None
        self.last_heard = 0.0
        self.last_sent = -math.inf
        self.next_feedback = 0.0
        self.reported_battery = []  # per battery: (level, charge, flags, when) or None
        self.hellos_seen = 0
        self.host_frames = []  # (now, frame) for every valid frame from the host
        self.host_answers = []  # (now, frame): the host's ACK/NACK frames
        self.refused_hello = None  # the version text a refused HELLO carried
        self._out = bytearray()

    # --- input and time -------------------------------------------------------------------------

    def receive(self, data, now):
        self._run(now)
        for event in self.decoder.feed_detailed(data):
            if event[0] == "frame":
                self._handle(event[1])
            elif event[2] is not None:
                self._refuse_unusable(event[1], event[2])
        return self._take()

    def advance(self, now):
        self._run(now)
        return self._take()

    def next_due(self):
        """When ``advance`` next has something to send (feedback, heartbeat, the host's silence)."""
        due = [self.last_sent + T["stand_heartbeat_interval"]]
        if self.state != "idle":
            if not self.feedback_paused:
                due.append(self.next_feedback)
            if self.state == "session":
                due.append(self.last_heard + self.heartbeat_timeout_ms / 1000)
        return min(due)

    def _run(self, now):
        if self.started is None:
            self.started = now
            self.last_sent = now - T["stand_heartbeat_interval"]  # a first heartbeat at once
        dt = max(0.0, now - self.now)
        self.now = now
        for axis in self.axes:
            # Integrate in steps of at most 5 ms so a long gap does not jump past a limit.
            steps = max(1, int(dt / 0.005) + 1)
            for _ in range(steps):
                axis.step(dt / steps)
        if self.state == "session" and now - self.last_heard > self.heartbeat_timeout_ms / 1000:
            self.state = "heartbeat_lost"
            for axis in self.axes:
                axis.target_velocity, axis.target_position = 0.0, None
            self._send("fault", {"time_us": self._micros(), "severity": 1, "code": dockproto.FAULT_CODES["heartbeat_lost"],
                                 "axis": dockproto.FAULT_AXIS_NONE,
                                 "text": f"no valid frame for {self.heartbeat_timeout_ms} ms: stopped"})
        if self.state != "idle":
            if not self.feedback_paused and now >= self.next_feedback:
                period = 1 / self.feedback_hz
                self.next_feedback = max(self.next_feedback + period, now)  # no burst after a gap
                self._send("feedback", self._feedback())
            self._report_batteries(force=False)
        if now - self.last_sent >= T["stand_heartbeat_interval"]:
            self._send("heartbeat", {"uptime_ms": int((now - self.started) * 1000) & 0xFFFFFFFF})

    def _micros(self):
        return int(self.now * 1e6) & ((1 << 53) - 1)

    def _feedback(self):
        return {"time_us": self._micros(), "axes": [
            {"axis": a.name, "position": a.position, "velocity": a.velocity, "effort": math.nan, "status": a.status()}
            for a in self.axes]}

    # --- sending --------------------------------------------------------------------------------

    def _send(self, type_name, payload, ack=None):
        ask = type_name in self.ack_requests if ack is None else ack
        _, data = self.sender.encode(type_name, payload, ask)
        self._out += data
        self.last_sent = self.now

    def send_raw(self, data):
        """Bytes as they are (impossible values, unknown types): returned by the next call."""
        self._out += data
        self.last_sent = self.now

    def send_message(self, type_name, payload, ack=None):
        self._send(type_name, payload, ack)

    def _take(self):
        data, self._out = bytes(self._out), bytearray()
        return b"" if self.muted else data

    def _answer(self, frame, code=None, detail=""):
        if not frame["flags"] & dockproto.FLAG_ACK_REQUEST:
            return
        type_code = frame.get("type_code", dockproto.MESSAGE_TYPES.get(frame.get("type"), 0))
        if code is None:
            self._send("ack", {"ack_seq": frame["seq"], "ack_type": type_code}, ack=False)
        else:
            self._send("nack", {"ack_seq": frame["seq"], "ack_type": type_code, "code": NACK[code],
                                "detail": detail[:200]}, ack=False)

    # --- receiving ------------------------------------------------------------------------------

    def _refuse_unusable(self, kind, header):
        if header["type_code"] in (dockproto.MESSAGE_TYPES["ack"], dockproto.MESSAGE_TYPES["nack"]):
            return
        if kind == "unknown_type":
            self._answer(header, "unsupported", f"type 0x{header['type_code']:02x} is unknown to protocol 1.1")
        else:
            self._answer(header, "malformed", "payload malformed")

    def _handle(self, frame):
        self.host_frames.append((self.now, frame))
        self.last_heard = self.now
        kind, payload = frame["type"], frame["payload"]
        if kind in ("ack", "nack"):
            self.host_answers.append((self.now, frame))
            return  # never answered
        if kind == "hello":
            self._hello(frame)
            return
        if self.state == "idle":
            self._answer(frame, "not_ready", "no HELLO yet")
            return
        if kind in ACTUATION and self.state == "heartbeat_lost":
            self.state = "session"  # the next actuation command moves it again
        problem = self._execute(kind, payload)
        if problem is None:
            self._answer(frame)
        else:
            self._answer(frame, *problem)

    def _hello(self, frame):
        self.hellos_seen += 1
        if self.hellos_seen <= self.ignore_hellos:
            return
        payload = frame["payload"]
        major, minor = self.version
        if payload["major"] != major and not self.replies_in_own_version:
            self.refused_hello = f"{payload['major']}.{payload['minor']}"
            self.state = "idle"
            self._answer(frame, "version_mismatch", f"stand speaks {major}.{minor}")
            return
        low, high = T["heartbeat_timeout_range_ms"]
        asked = payload["heartbeat_timeout_ms"] or T["default_heartbeat_timeout_ms"]
        self.heartbeat_timeout_ms = min(high, max(low, asked))
        self.state = "session"
        for axis in self.axes:
            axis.reset()
        # HELLO_REPLY stands in for the ACK; then CAPABILITIES, every BATTERY, EVENT docked.
        self._send("hello_reply", {"major": major, "minor": minor, "heartbeat_timeout_ms": self.heartbeat_timeout_ms,
                                   "model": "reference-stand", "firmware": "1.1.0", "hardware": "ref",
                                   "serial": self.serial})
        self._send("capabilities", {"feedback_hz": self.feedback_hz, "imu_hz": 0, "features": 1 << 3, "buttons": 0,
                                    "custom_buttons": 0, "axes": [a.capability() for a in self.axes],
                                    "batteries": self.battery_names})
        self.reported_battery = [None] * len(self.battery_names)
        self._report_batteries(force=True)
        self._send("event", {"time_us": self._micros(), "kind": 1, "value": 1, "button": 0, "factor": 1.0})
        self.next_feedback = self.now

    def _axis(self, name):
        return next((a for a in self.axes if a.name == name), None)

    def _execute(self, kind, payload):
        """None when accepted, else (NACK code name, detail). Nothing changes unless accepted."""
        named = [entry["axis"] for entry in payload.get("axes", [])] if kind != "motors" else payload["enabled"]
        if any(self._axis(name) is None for name in named):
            return ("unsupported", "axis not on this stand")
        if kind == "heartbeat":
            return None
        if kind == "velocity":
            if not all(_finite(e["velocity"]) for e in payload["axes"]):
                return ("out_of_range", "velocity must be finite")
            for e in payload["axes"]:
                axis = self._axis(e["axis"])
                axis.target_velocity, axis.target_position = e["velocity"], None
            return None
        if kind == "position":
            if not _finite(payload["duration"]) or payload["duration"] < 0:
                return ("out_of_range", "duration must be finite and >= 0")
            for e in payload["axes"]:
                axis = self._axis(e["axis"])
                if not _finite(e["position"], e["velocity"]) or not axis.lo - 1e-6 <= e["position"] <= axis.hi + 1e-6:
                    return ("out_of_range", f"{axis.name} target {e['position']} outside {axis.lo}..{axis.hi}")
            for e in payload["axes"]:
                self._axis(e["axis"]).target_position = e["position"]
            return None
        if kind == "stop":
            for axis in self.axes:
                axis.target_velocity, axis.target_position = 0.0, None
            return None
        if kind == "limits":
            for e in payload["axes"]:  # all or nothing: check every axis first
                axis = self._axis(e["axis"])
                lo, hi, speed, accel = axis.own
                if axis.continuous and self.checks_continuous_ranges:
                    lo, hi = 0.0, 0.0  # the range its CAPABILITIES reported
                range_ok = (axis.continuous and not self.checks_continuous_ranges) or (
                    _finite(e["min"], e["max"]) and lo - 1e-6 <= e["min"] < e["max"] <= hi + 1e-6)
                if not range_ok or not _finite(e["max_speed"], e["max_accel"]) or not (
                        0 < e["max_speed"] <= speed + 1e-6 and 0 < e["max_accel"] <= accel + 1e-6):
                    return ("out_of_range", f"{axis.name} limits outside the stand's own")
            for e in payload["axes"]:
                axis = self._axis(e["axis"])
                if not axis.continuous:  # min and max mean nothing on a continuous axis
                    axis.lo, axis.hi = e["min"], e["max"]
                axis.max_speed, axis.max_accel = e["max_speed"], e["max_accel"]
            return None
        if kind == "led":
            return None if payload["mode"] in (0, 1, 2) else ("unsupported", f"LED mode {payload['mode']}")
        if kind == "motors":
            return None
        if kind == "request":
            what = payload["what"]
            if what == 2:
                self._send("capabilities", {"feedback_hz": self.feedback_hz, "imu_hz": 0, "features": 1 << 3,
                                            "buttons": 0, "custom_buttons": 0,
                                            "axes": [a.capability() for a in self.axes], "batteries": self.battery_names})
            elif what == 3:
                self._report_batteries(force=True)
            return None
        return ("unsupported", f"a stand does not take {kind}")

    # --- batteries ------------------------------------------------------------------------------

    def set_battery(self, index, level):
        self.battery_levels[index] = level

    def _report_batteries(self, force):
        for index, level in enumerate(self.battery_levels):
            state = (round(level, 6), 0, 1 if level < 0.15 else 0)
            last = self.reported_battery[index] if index < len(self.reported_battery) else None
            if not force and last is not None and self.now - last[3] < T["battery_report_interval"] and \
                    last[1:3] == state[1:] and abs(last[0] - state[0]) < T["battery_level_step"] - 1e-9:
                continue
            self._send("battery", {"index": index, "level": level, "charge": 0, "flags": state[2]})
            if index < len(self.reported_battery):
                self.reported_battery[index] = (*state, self.now)
