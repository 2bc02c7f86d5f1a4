"""A VISCA PTZ camera emulator for tests.

Written from the published command lists, not from dockd's code:
- Sony's BRC-H700 command list v1.20 and SRG-X400 / BRC-X400 command list (VISCA command/ACK
  protocol: ACK `z0 4y FF` then Completion `z0 5y FF` in one of two sockets, "Command Buffer Full"
  `z0 60 03 FF` when both hold a command, Syntax Error `z0 60 02 FF`, Not Executable `z0 6y 41 FF`,
  inquiries answered at once with no ACK, IF_Clear answered `z0 50 FF` and clearing the buffers,
  Cancel `8x 2y FF` answered `z0 6y 04 FF` / `z0 6y 05 FF`, Pan-tiltLimitSet and LimitClear,
  AbsolutePosition with one speed byte `VV 00` on Sony heads, raw pan growing to the left on the
  BRC-H700);
- the Telycam TLC-700-S manual's VISCA section for PTZOptics-class heads (position and speed
  tables, AbsolutePosition with a pan and a tilt speed byte);
- Sony's VISCA-over-IP header (payload types, sequence numbers echoed in replies, RESET).

The camera model comes from a profile in profiles/visca/*.json (nibble widths, units per degree,
range, speed tables, `sign`, `absoluteSpeed`, `limitSet`); options make it differ from the profile
or misbehave: `pan_sign` / `tilt_sign` (a head whose units grow the other way than its profile
says), `speed_scale` (true speeds = the profile's × scale, per axis), `latency` (every reply that
many seconds late), `hold_sockets(seconds)` (a second controller keeps both command sockets busy:
every command gets "buffer full", inquiries are still answered), `refuse_motion` ("syntax" or
"not_executable": every Pan-tiltDrive that moves and every positional move refused, as a camera
that is off; `refuse_stop` refuses the Stop too), `silent` (answers nothing), `refuse_limits`.
Motion: drives at the table speed, positional moves at their speed bytes, both clamped to the
limits in force (mechanical range, or what Pan-tiltLimitSet set); a drive keeps going until a Stop
(VISCA has no heartbeat). With a `zoom` in the profile, a zoom lens (Sony's CAM_Zoom commands):
Tele/Wide variable `8x 01 04 07 2p/3p FF` at the profile's speed p (units/s) until Stop `… 07 00 FF`
or an end, CAM_Zoom Direct `8x 01 04 47 0p 0q 0r 0s FF` at the fastest speed (completed when
there), CAM_ZoomPosInq `8x 09 04 47 FF` answered `y0 50 0p 0q 0r 0s FF`; `zoom_scale` makes the
lens faster or slower than its profile. CAM_Memory Reset / Set / Recall `8x 01 04 3F 00/01/02 pp FF`
(Sony's SRG-120DH list, p 0-F; PTZOptics-class lists, pp 00-FF): Set keeps where the head and the
lens are in memory pp, Recall moves there at the fastest speeds, Reset forgets it; `memories` is
how many the camera has (a higher number is a syntax error), `refuse_memory` refuses every Set as
not executable (a camera that is full or locked). Every message received and every reply sent is
logged with its time.

Links: a pty (serial VISCA), UDP with Sony's VISCA-over-IP header, raw VISCA in UDP datagrams, or
raw VISCA on a TCP stream. Run alone:
    python visca_camera.py --profile ../../profiles/visca/generic-ptzoptics.json --pty [--latency 0.2]
    python visca_camera.py --profile ... --udp 127.0.0.2:52381 [--raw]
"""
import argparse
import heapq
import itertools
import json
import os
import select
import socket
import threading
import time
import tty


def nibbles(value, count):
    raw = int(round(value)) & ((1 << (4 * count)) - 1)
    return bytes((raw >> (4 * i)) & 0x0F for i in reversed(range(count)))


def signed(data):
    raw = 0
    for b in data:
        raw = (raw << 4) | (b & 0x0F)
    bits = 4 * len(data)
    return raw - (1 << bits) if raw >= 1 << (bits - 1) else raw


def is_clear(data):
    """LimitClear's position field: 7F…F."""
    return data[0] == 0x07 and all(b == 0x0F for b in data[1:])


class Axis:
    """One axis in physical degrees (pan positive right, tilt positive up); `sign` is how the
    camera's units relate to them (+1: units grow right / up)."""

    def __init__(self, p, sign=None, speed_scale=1.0):
        self.nibbles = p["nibbles"]
        self.upd = p["unitsPerDegree"]
        self.sign = p.get("sign", 1) if sign is None else sign
        self.lo_deg, self.hi_deg = p["minDegrees"], p["maxDegrees"]
        self.limits = [self.lo_deg, self.hi_deg]
        self.speeds = [s * speed_scale for s in p["speeds"]]  # true deg/s for byte 1..n
        self.pos = 0.0  # degrees
        self.vel = 0.0  # deg/s
        self.target = None  # (degrees, deg/s)

    def units(self, degrees=None):
        return self.sign * (self.pos if degrees is None else degrees) * self.upd

    def degrees(self, units):
        return self.sign * units / self.upd

    def speed(self, byte):
        return self.speeds[min(byte, len(self.speeds)) - 1]

    def step(self, dt):
        if self.target is not None:
            goal, rate = self.target
            d = goal - self.pos
            move = min(abs(d), rate * dt)
            self.pos += move if d > 0 else -move
            if abs(goal - self.pos) < 1e-9:
                self.target = None
        else:
            self.pos += self.vel * dt
        lo, hi = self.limits
        if self.pos <= lo or self.pos >= hi:
            self.pos = min(hi, max(lo, self.pos))


class Zoom:
    """The zoom lens in its position units (wide end to optical tele end)."""

    def __init__(self, p, speed_scale=1.0):
        self.lo, self.hi = p["positions"][0], p["positions"][-1]
        self.speeds = [s * speed_scale for s in p["speeds"]]  # units/s for variable speed 0..7
        self.pos = float(self.lo)
        self.vel = 0.0
        self.target = None

    def step(self, dt):
        if self.target is not None:
            d = self.target - self.pos
            move = min(abs(d), self.speeds[-1] * dt)
            self.pos += move if d > 0 else -move
            if abs(self.target - self.pos) < 1e-9:
                self.target = None
        else:
            self.pos = min(self.hi, max(self.lo, self.pos + self.vel * dt))


class Camera:
    """The camera's logic, independent of the link. `handle(msg, send)` answers through `send`."""

    def __init__(self, profile, address=1, ack_delay=0.002, completion_delay=0.004, inquiry_delay=0.002,
                 pan_sign=None, tilt_sign=None, speed_scale=(1.0, 1.0), latency=0.0, zoom_scale=1.0, memories=256):
        self.profile = profile
        self.address = address
        self.pan = Axis(profile["pan"], pan_sign, speed_scale[0])
        self.tilt = Axis(profile["tilt"], tilt_sign, speed_scale[1])
        self.zoom = Zoom(profile["zoom"], zoom_scale) if "zoom" in profile else None
        self.single_speed = profile.get("absoluteSpeed") == "single"
        self.takes_limits = bool(profile.get("limitSet"))
        self.ack_delay = ack_delay
        self.completion_delay = completion_delay
        self.inquiry_delay = inquiry_delay
        self.latency = latency
        self.lock = threading.RLock()
        self.sockets = {1: None, 2: None}  # socket -> (kind, send)
        self.held_until = 0.0  # a second controller holds both sockets until then
        self.refuse_motion = None  # "syntax" | "not_executable"
        self.refuse_stop = False
        self.refuse_limits = False
        # CAM_Memory: number -> (pan degrees, tilt degrees, zoom position or None); numbers from
        # `memory_count` up are refused as a syntax error, and every Set while `refuse_memory`.
        self.memory_count = memories
        self.memories = {}
        self.refuse_memory = False
        self.silent = False
        self.received = []  # every message received, with its payload type when over IP
        self.log = []  # (time, payload type, message) for every message received
        self.replies = []  # (time, reply) for every reply sent
        self.stop_completions = []  # when each Stop's Completion was sent
        self.inject = []  # errors to answer the next commands with: "buffer_full", "not_executable"
        self.inject_motion = []  # the same, for the next drives that move and positional moves only
        self.counts = {"commands": 0, "inquiries": 0, "errors": 0, "buffer_full": 0, "refused": 0}
        self.last_step = time.monotonic()
        self._queue, self._order = [], itertools.count()
        self._wake = threading.Condition()
        self._scheduler = None

    # -- replies, in order, each after its delay plus the link's latency
    def later(self, delay, send, data):
        if self.silent:
            return
        with self._wake:
            heapq.heappush(self._queue, (time.monotonic() + delay + self.latency, next(self._order), send, bytes(data)))
            if self._scheduler is None:
                self._scheduler = threading.Thread(target=self._deliver, daemon=True)
                self._scheduler.start()
            self._wake.notify()

    def _deliver(self):
        while True:
            with self._wake:
                while not self._queue or self._queue[0][0] > time.monotonic():
                    self._wake.wait(None if not self._queue else max(0.0, self._queue[0][0] - time.monotonic()))
                _, _, send, data = heapq.heappop(self._queue)
            self.replies.append((time.monotonic(), data))
            try:
                send(data)
            except OSError:
                pass

    @property
    def reply_header(self):
        return 0x80 | ((self.address + 8) << 4)

    def error(self, send, socket_no, code, delay=None):
        self.counts["errors"] += 1
        self.later(self.ack_delay if delay is None else delay, send, bytes([self.reply_header, 0x60 | socket_no, code, 0xFF]))

    def hold_sockets(self, seconds):
        """A second controller fills both command sockets for `seconds` (IF_Clear empties them)."""
        with self.lock:
            self.held_until = time.monotonic() + seconds

    # -- motion model
    def step(self):
        """Brings the head up to now with the motion in force since the last step. The physics
        thread calls it every 5 ms, and every message and every read of the position calls it
        first: when the process is starved (a busy machine), a drive must not act on the time
        before it arrived, nor an inquiry answer where the head was at the last tick."""
        with self.lock:
            now = time.monotonic()
            dt, self.last_step = now - self.last_step, now
            for axis in (self.pan, self.tilt) + ((self.zoom,) if self.zoom else ()):
                axis.step(dt)
            for s, kind in list(self.sockets.items()):
                done = (kind and kind[0] == "move" and self.pan.target is None and self.tilt.target is None
                        or kind and kind[0] == "zoom_move" and self.zoom.target is None)
                if done:
                    self.sockets[s] = None
                    self.later(0, kind[1], bytes([self.reply_header, 0x50 | s, 0xFF]))

    def free_socket(self):
        if time.monotonic() < self.held_until:
            return None
        for s in (1, 2):
            if self.sockets[s] is None:
                return s
        return None

    def cancel_moves(self, kind_cancelled="move"):
        for s, kind in self.sockets.items():
            if kind and kind[0] == kind_cancelled:
                self.sockets[s] = None
                self.error(kind[1], s, 0x04, delay=0)
        if kind_cancelled == "zoom_move":
            self.zoom.target = None
        else:
            self.pan.target = self.tilt.target = None

    # -- messages
    def handle(self, msg, send, payload_type=None):
        with self.lock:
            self.step()
            self.received.append((payload_type, bytes(msg)))
            # Logged at the time the head was stepped to: a message acts from then, even when the
            # process is descheduled before this line (tests time motion from these times).
            self.log.append((self.last_step, payload_type, bytes(msg)))
            if self.silent:
                return
            h = self.reply_header
            if len(msg) < 3 or msg[-1] != 0xFF:
                return self.error(send, 0, 0x01)
            if msg[0] == 0x88:
                if msg[1:3] == b"\x30\x01":  # AddressSet: one camera, the next address is ours + 1
                    return self.later(self.ack_delay, send, bytes([0x88, 0x30, self.address + 1, 0xFF]))
                if msg[1:4] == b"\x01\x00\x01":  # broadcast IF_Clear: echoed
                    self.clear()
                    return self.later(self.ack_delay, send, bytes(msg))
                return
            if msg[0] != 0x80 | self.address:
                return  # another camera's
            if msg[1] == 0x09:
                self.counts["inquiries"] += 1
                if msg[2:4] == b"\x06\x12" and len(msg) == 5:
                    reply = bytes([h, 0x50]) + nibbles(self.pan.units(), self.pan.nibbles) + nibbles(self.tilt.units(), self.tilt.nibbles) + b"\xFF"
                    return self.later(self.inquiry_delay, send, reply)
                if msg[2:4] == b"\x04\x47" and len(msg) == 5 and self.zoom:
                    reply = bytes([h, 0x50]) + nibbles(self.zoom.pos, 4) + b"\xFF"
                    return self.later(self.inquiry_delay, send, reply)
                return self.error(send, 0, 0x02)
            if msg[1] == 0x01 and msg[2:4] == b"\x00\x01" and len(msg) == 5:  # IF_Clear: no ACK, completion in socket 0
                self.clear()
                return self.later(self.ack_delay, send, bytes([h, 0x50, 0xFF]))
            if msg[1] >> 4 == 0x2 and len(msg) == 3:  # Cancel socket
                s = msg[1] & 0x0F
                if self.sockets.get(s) is None:
                    return self.error(send, s, 0x05)
                kind = self.sockets[s]
                self.sockets[s] = None
                if kind[0] == "move":
                    self.pan.target = self.tilt.target = None
                if kind[0] == "zoom_move":
                    self.zoom.target = None
                return self.error(send, s, 0x04)
            if msg[1] != 0x01:
                return self.error(send, 0, 0x02)
            return self.command(msg, send)

    def clear(self):
        self.cancel_moves()
        if self.zoom:
            self.cancel_moves("zoom_move")
        self.sockets = {1: None, 2: None}
        self.held_until = 0.0

    def command(self, msg, send):
        self.counts["commands"] += 1
        if self.inject:
            kind = self.inject.pop(0)
            if kind == "buffer_full":
                self.counts["buffer_full"] += 1
                return self.error(send, 0, 0x03)
            if kind == "not_executable":
                return self.error(send, 1, 0x41)
        body = msg[2:-1]
        # Syntax first (a malformed command is refused whatever the buffer holds), then the buffer.
        parsed = self.parse(body)
        if parsed is None:
            return self.error(send, 0, 0x02)
        s = self.free_socket()
        if s is None:
            self.counts["buffer_full"] += 1
            return self.error(send, 0, 0x03)
        kind = parsed[0]
        stop = kind == "drive" and parsed[1] == parsed[2] == 3
        if kind in ("drive", "move") and not stop and self.inject_motion:
            injected = self.inject_motion.pop(0)
            if injected == "buffer_full":
                self.counts["buffer_full"] += 1
                return self.error(send, 0, 0x03)
            return self.error(send, s, 0x41)
        if kind in ("drive", "move", "home") and self.refuse_motion and (not stop or self.refuse_stop):
            self.counts["refused"] += 1
            return self.error(send, 0, 0x02) if self.refuse_motion == "syntax" else self.error(send, s, 0x41)
        if kind == "drive":
            _, pd, td, vv, ww = parsed
            self.cancel_moves()
            self.pan.vel = 0.0 if pd == 3 else (-1 if pd == 1 else 1) * self.pan.speed(vv)
            self.tilt.vel = 0.0 if td == 3 else (1 if td == 1 else -1) * self.tilt.speed(ww)
            return self.ack_then_complete(send, s, "stop" if stop else "drive")
        if kind == "move":
            _, relative, vv, ww, p, t = parsed
            pan_deg, tilt_deg = self.pan.degrees(p), self.tilt.degrees(t)
            if relative:
                pan_deg, tilt_deg = pan_deg + self.pan.pos, tilt_deg + self.tilt.pos
            if not (self.pan.limits[0] <= pan_deg <= self.pan.limits[1] and self.tilt.limits[0] <= tilt_deg <= self.tilt.limits[1]):
                return self.error(send, s, 0x41)
            self.cancel_moves()
            return self.start_move(send, s, pan_deg, tilt_deg, self.pan.speed(vv), self.tilt.speed(ww if ww else vv))
        if kind == "home":
            self.cancel_moves()
            return self.start_move(send, s, 0, 0, self.pan.speeds[-1], self.tilt.speeds[-1])
        if kind == "limit":
            if not self.takes_limits or self.refuse_limits:
                return self.error(send, 0, 0x02)
            _, clear, corner, p, t = parsed
            if clear:
                pan_lim, tilt_lim = (self.pan.hi_deg, self.tilt.hi_deg) if corner == 1 else (self.pan.lo_deg, self.tilt.lo_deg)
            else:
                pan_lim, tilt_lim = self.pan.degrees(p), self.tilt.degrees(t)
            # Up-right sets the right and upper ends, down-left the left and lower ones.
            self.pan.limits[corner] = min(self.pan.hi_deg, max(self.pan.lo_deg, pan_lim))
            self.tilt.limits[corner] = min(self.tilt.hi_deg, max(self.tilt.lo_deg, tilt_lim))
            return self.ack_then_complete(send, s, "limit")
        if kind == "zoom_drive":
            _, direction, p = parsed
            self.cancel_moves("zoom_move")
            self.zoom.vel = direction * self.zoom.speeds[p]
            return self.ack_then_complete(send, s, "zoom_drive")
        if kind == "zoom_move":
            self.cancel_moves("zoom_move")
            self.zoom.vel = 0.0
            self.zoom.target = float(min(self.zoom.hi, max(self.zoom.lo, parsed[1])))
            self.sockets[s] = ("zoom_move", send)
            return self.later(self.ack_delay, send, bytes([self.reply_header, 0x40 | s, 0xFF]))
        if kind == "memory":
            _, function, number = parsed
            if number >= self.memory_count:
                return self.error(send, 0, 0x02)
            if function == 1 and self.refuse_memory:
                return self.error(send, s, 0x41)
            if function == 0:
                self.memories.pop(number, None)
            elif function == 1:
                self.memories[number] = (self.pan.pos, self.tilt.pos, self.zoom.pos if self.zoom else None)
            elif number in self.memories:
                pan_deg, tilt_deg, zoom = self.memories[number]
                self.cancel_moves()
                if self.zoom and zoom is not None:
                    self.zoom.target = float(zoom)
                return self.start_move(send, s, pan_deg, tilt_deg, self.pan.speeds[-1], self.tilt.speeds[-1])
            return self.ack_then_complete(send, s, "memory")
        # Anything else (focus…): accepted and completed.
        return self.ack_then_complete(send, s, "other")

    def parse(self, body):
        """('drive', pan dir, tilt dir, VV, WW), ('move', …), ('home',), ('limit', …), ('other',), or None
        for a syntax error."""
        pn, tn = self.pan.nibbles, self.tilt.nibbles
        if body[:2] == b"\x06\x01" and len(body) == 6:
            vv, ww, pd, td = body[2:]
            if pd not in (1, 2, 3) or td not in (1, 2, 3):
                return None
            if not (0 <= vv <= len(self.pan.speeds) and 0 <= ww <= len(self.tilt.speeds)):
                return None
            if (pd != 3 and vv == 0) or (td != 3 and ww == 0):
                return None
            return ("drive", pd, td, vv, ww)
        if body[:2] in (b"\x06\x02", b"\x06\x03") and len(body) == 4 + pn + tn:
            vv, ww = body[2], body[3]
            if self.single_speed:
                if not (1 <= vv <= len(self.pan.speeds)) or ww != 0:
                    return None  # Sony: VV 00
            elif not (1 <= vv <= len(self.pan.speeds) and 1 <= ww <= len(self.tilt.speeds)):
                return None
            return ("move", body[1] == 0x03, vv, ww, signed(body[4:4 + pn]), signed(body[4 + pn:]))
        if body == b"\x06\x04":
            return ("home",)
        if body[:2] == b"\x06\x07" and len(body) == 4 + pn + tn and body[2] in (0, 1) and body[3] in (0, 1):
            p, t = body[4:4 + pn], body[4 + pn:]
            if body[2] == 1:
                return ("limit", True, body[3], None, None) if is_clear(p) and is_clear(t) else None
            return ("limit", False, body[3], signed(p), signed(t))
        if self.zoom and body[:2] == b"\x04\x07" and len(body) == 3:
            code = body[2]
            if code == 0x00:
                return ("zoom_drive", 0, 0)
            if code >> 4 in (2, 3) and code & 0x0F <= 7:
                return ("zoom_drive", 1 if code >> 4 == 2 else -1, code & 0x0F)
            return None
        if self.zoom and body[:2] == b"\x04\x47" and len(body) == 6:
            if any(b > 0x0F for b in body[2:]):
                return None
            return ("zoom_move", signed(b"\x00" + body[2:]))
        if body[:2] == b"\x04\x3f" and len(body) == 4 and body[2] in (0, 1, 2):
            return ("memory", body[2], body[3])
        if body[:2] == b"\x06\x01" or body[:2] in (b"\x06\x02", b"\x06\x03", b"\x06\x07"):
            return None  # a pan-tilt command of the wrong length
        return ("other",)

    def ack_then_complete(self, send, s, kind):
        self.sockets[s] = (kind, send)
        self.later(self.ack_delay, send, bytes([self.reply_header, 0x40 | s, 0xFF]))

        def complete(data):
            with self.lock:
                if self.sockets.get(s) and self.sockets[s][0] == kind:
                    self.sockets[s] = None
                if kind == "stop":
                    self.stop_completions.append(time.monotonic())
            send(data)
        self.later(self.completion_delay, complete, bytes([self.reply_header, 0x50 | s, 0xFF]))

    def start_move(self, send, s, pan_deg, tilt_deg, pan_rate, tilt_rate):
        self.pan.vel = self.tilt.vel = 0.0
        self.pan.target = (float(pan_deg), pan_rate)
        self.tilt.target = (float(tilt_deg), tilt_rate)
        self.sockets[s] = ("move", send)
        self.later(self.ack_delay, send, bytes([self.reply_header, 0x40 | s, 0xFF]))

    def degrees(self):
        """Where the head points: pan degrees (right positive), tilt degrees (up positive)."""
        with self.lock:
            self.step()
            return self.pan.pos, self.tilt.pos

    def zoom_position(self):
        """The zoom lens's position in its units."""
        with self.lock:
            self.step()
            return self.zoom.pos

    def magnification(self, position=None):
        """The lens's magnification (1.0 without a zoom) by its profile's table, linear between its
        points: at `position`, or where the lens is now."""
        if self.zoom is None:
            return 1.0
        table = self.profile["zoom"]
        points = list(zip(table["positions"], table["magnifications"]))
        p = min(points[-1][0], max(points[0][0], self.zoom_position() if position is None else position))
        for (p0, m0), (p1, m1) in zip(points, points[1:]):
            if p <= p1:
                return m0 + (m1 - m0) * (p - p0) / (p1 - p0)

    def moving(self):
        with self.lock:
            return self.pan.vel != 0 or self.tilt.vel != 0 or self.pan.target is not None or self.tilt.target is not None

    def messages(self, prefix, since=0.0):
        """(time, message) received since `since` whose bytes after the address start with `prefix`."""
        return [(t, m) for t, _, m in list(self.log) if t >= since and m[1:1 + len(prefix)] == prefix]


STOP_BODY = b"\x01\x06\x01"  # Pan-tiltDrive, followed by VV WW 03 03 for a Stop


def is_stop(message):
    return message[1:4] == STOP_BODY and message[6:8] == b"\x03\x03"


def is_moving_drive(message):
    return message[1:4] == STOP_BODY and message[6:8] != b"\x03\x03"


class Link:
    def __init__(self, camera):
        self.camera = camera
        self.stopping = threading.Event()
        self.threads = []

    def spawn(self, fn):
        t = threading.Thread(target=fn, daemon=True)
        t.start()
        self.threads.append(t)

    def start(self):
        def physics():
            while not self.stopping.is_set():
                self.camera.step()
                time.sleep(0.005)
        self.spawn(physics)
        self.spawn(self.serve)
        return self

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=1)
        self.close()


class PtyLink(Link):
    """Serial VISCA on a pty: `path` is the device the controller opens. With `device`, on that tty
    instead (a USB gadget's /dev/ttyGS0, whose host side the controller opens)."""

    def __init__(self, camera, device=None):
        super().__init__(camera)
        if device:
            self.master = os.open(device, os.O_RDWR | os.O_NOCTTY)
            tty.setraw(self.master)
            self.slave, self.path = None, device
        else:
            self.master, self.slave = os.openpty()
            tty.setraw(self.slave)
            self.path = os.ttyname(self.slave)
        self.wlock = threading.Lock()

    def write(self, data):
        with self.wlock:
            try:
                os.write(self.master, data)
            except OSError:
                pass

    def serve(self):
        buf = b""
        while not self.stopping.is_set():
            r, _, _ = select.select([self.master], [], [], 0.05)
            if not r:
                continue
            try:
                chunk = os.read(self.master, 256)
            except OSError:
                time.sleep(0.01)
                continue
            buf += chunk
            while b"\xff" in buf:
                msg, buf = buf.split(b"\xff", 1)
                self.camera.handle(msg + b"\xff", self.write)

    def close(self):
        for fd in (self.master, self.slave):
            try:
                if fd is not None:
                    os.close(fd)
            except OSError:
                pass


def free_udp_port(host="127.0.0.2"):
    """A UDP port free on `host` now, for a run's VISCA-over-IP camera: 52381, the protocol's own,
    is taken by another test run on the same machine (visca-over-ip binds it on every address)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class UdpLink(Link):
    """VISCA-over-IP (8-byte header) or, with raw=True, bare VISCA in datagrams."""

    def __init__(self, camera, host="127.0.0.2", port=52381, raw=False):
        super().__init__(camera)
        self.raw = raw
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.settimeout(0.05)
        self.address = self.sock.getsockname()
        self.control = []
        # Datagrams that carried more than one message: a camera reads one message per datagram
        # (VISCA-over-IP: the header's length; raw: up to the first FF) and drops the rest.
        self.overfull = []

    def serve(self):
        while not self.stopping.is_set():
            try:
                data, peer = self.sock.recvfrom(2048)
            except (socket.timeout, OSError):
                continue
            if self.raw:
                first = data[:data.find(b"\xff") + 1] if b"\xff" in data else data
                if len(first) < len(data):
                    self.overfull.append((time.monotonic(), bytes(data)))
                self.camera.handle(first, lambda out, peer=peer: self.sock.sendto(out, peer))
                continue
            if len(data) < 8:
                continue
            ptype = int.from_bytes(data[0:2], "big")
            length = int.from_bytes(data[2:4], "big")
            seq = data[4:8]
            payload = data[8:8 + length]
            if len(data) > 8 + length:
                self.overfull.append((time.monotonic(), bytes(data)))
            if ptype == 0x0200:  # control command: RESET of the sequence number
                self.control.append(bytes(payload))
                if not self.camera.silent:
                    self.camera.later(0, lambda out, peer=peer: self.sock.sendto(out, peer), b"\x02\x01\x00\x01" + seq + b"\x01")
                continue

            def reply(out, peer=peer, seq=seq):
                try:
                    self.sock.sendto(b"\x01\x11" + len(out).to_bytes(2, "big") + seq + out, peer)
                except OSError:
                    pass
            self.camera.handle(payload, reply, payload_type=ptype)

    def close(self):
        self.sock.close()


class TcpLink(Link):
    """Raw VISCA on a TCP stream (as PTZOptics' port 5678): one controller at a time."""

    def __init__(self, camera, host="127.0.0.1", port=0):
        super().__init__(camera)
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind((host, port))
        self.server.listen(1)
        self.server.settimeout(0.05)
        self.address = self.server.getsockname()
        self.conn = None

    def serve(self):
        buf = b""
        while not self.stopping.is_set():
            if self.conn is None:
                try:
                    self.conn, _ = self.server.accept()
                    self.conn.settimeout(0.05)
                except (socket.timeout, OSError):
                    continue
            try:
                chunk = self.conn.recv(256)
            except socket.timeout:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self.conn, buf = None, b""
                continue
            buf += chunk
            while b"\xff" in buf:
                msg, buf = buf.split(b"\xff", 1)
                conn = self.conn
                self.camera.handle(msg + b"\xff", lambda out, conn=conn: self._send(conn, out))

    @staticmethod
    def _send(conn, data):
        try:
            conn.sendall(data)
        except OSError:
            pass

    def close(self):
        for s in (self.conn, self.server):
            if s:
                s.close()


def load_profile(path):
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", required=True)
    ap.add_argument("--address", type=int, default=1)
    ap.add_argument("--pty", action="store_true")
    ap.add_argument("--tty", help="serve this tty (a USB gadget's /dev/ttyGS0) rather than a pty of its own")
    ap.add_argument("--udp", help="HOST:PORT")
    ap.add_argument("--raw", action="store_true", help="raw VISCA in UDP datagrams (no VISCA-over-IP header)")
    ap.add_argument("--latency", type=float, default=0.0, help="every reply this many seconds late")
    ap.add_argument("--pan-sign", type=int, choices=(-1, 1), help="the head's pan units grow this way, whatever the profile says")
    a = ap.parse_args()
    cam = Camera(load_profile(a.profile), address=a.address, latency=a.latency, pan_sign=a.pan_sign)
    if a.pty or a.tty:
        link = PtyLink(cam, device=a.tty).start()
        print(link.path, flush=True)
    else:
        host, port = a.udp.rsplit(":", 1)
        link = UdpLink(cam, host, int(port), raw=a.raw).start()
        print(f"{host}:{port}", flush=True)
    try:
        while True:
            time.sleep(0.5)
    except KeyboardInterrupt:
        link.stop()


if __name__ == "__main__":
    main()
