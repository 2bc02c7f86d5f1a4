"""A VISCA PTZ camera emulator for tests: a profile from profiles/visca/*.json (nibble widths,
units per degree, ranges, speed tables), two command sockets with ACK then completion after
configurable delays, the VISCA errors (length, syntax, buffer full, cancelled, not executable)
and Pan-tiltPosInq answers from a simple motion model. Links: a pty (serial VISCA), UDP with
Sony's VISCA-over-IP header, or raw VISCA in UDP datagrams.

Written from the VISCA command lists, not from dockd's code. Run alone:
    python visca_camera.py --profile ../../profiles/visca/generic-ptzoptics.json --pty
    python visca_camera.py --profile ... --udp 127.0.0.2:52381 [--raw]
"""
import argparse
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


class Axis:
    def __init__(self, p):
        self.nibbles = p["nibbles"]
        self.upd = p["unitsPerDegree"]
        self.lo = p["minDegrees"] * self.upd
        self.hi = p["maxDegrees"] * self.upd
        self.speeds = p["speeds"]  # deg/s for byte 1..n
        self.pos = 0.0  # units
        self.vel = 0.0  # units/s
        self.target = None

    def speed(self, byte):
        return self.speeds[byte - 1] * self.upd

    def step(self, dt):
        if self.target is not None:
            goal, rate = self.target
            d = goal - self.pos
            move = min(abs(d), rate * dt)
            self.pos += move if d > 0 else -move
            if abs(goal - self.pos) < 1e-6:
                self.target = None
        else:
            self.pos += self.vel * dt
        self.pos = min(self.hi, max(self.lo, self.pos))


class Camera:
    """The camera's logic, independent of the link. `send(bytes)` is called with each reply."""

    def __init__(self, profile, address=1, ack_delay=0.002, completion_delay=0.004, inquiry_delay=0.002):
        self.profile = profile
        self.address = address
        self.pan = Axis(profile["pan"])
        self.tilt = Axis(profile["tilt"])
        self.ack_delay = ack_delay
        self.completion_delay = completion_delay
        self.inquiry_delay = inquiry_delay
        self.lock = threading.RLock()
        self.sockets = {1: None, 2: None}  # socket -> "drive" | "move"
        self.received = []  # every message received, with its payload type when over IP
        self.inject = []  # errors to answer the next commands with: "buffer_full", "not_executable"
        self.counts = {"commands": 0, "inquiries": 0, "errors": 0, "buffer_full": 0}
        self.timers = []
        self.last_step = time.monotonic()

    # -- motion model
    def step(self):
        with self.lock:
            now = time.monotonic()
            dt, self.last_step = now - self.last_step, now
            for axis in (self.pan, self.tilt):
                axis.step(dt)
            for s, kind in list(self.sockets.items()):
                if kind and kind[0] == "move" and self.pan.target is None and self.tilt.target is None:
                    self.sockets[s] = None
                    kind[1](bytes([self.reply_header, 0x50 | s, 0xFF]))

    @property
    def reply_header(self):
        return 0x80 | ((self.address + 8) << 4)

    def later(self, delay, send, data):
        t = threading.Timer(delay, send, args=(data,))
        t.daemon = True
        t.start()

    def error(self, send, socket_no, code, delay=None):
        self.counts["errors"] += 1
        self.later(self.ack_delay if delay is None else delay, send, bytes([self.reply_header, 0x60 | socket_no, code, 0xFF]))

    def free_socket(self):
        for s in (1, 2):
            if self.sockets[s] is None:
                return s
        return None

    def cancel_moves(self, send):
        for s, kind in self.sockets.items():
            if kind and kind[0] == "move":
                self.sockets[s] = None
                self.error(kind[1], s, 0x04, delay=0)
        self.pan.target = self.tilt.target = None

    # -- messages
    def handle(self, msg, send, payload_type=None):
        with self.lock:
            self.received.append((payload_type, bytes(msg)))
            h = self.reply_header
            if len(msg) < 3 or msg[-1] != 0xFF:
                return self.error(send, 0, 0x01)
            if msg[0] == 0x88:
                if msg[1:3] == b"\x30\x01":  # AddressSet: one camera, the next address is 2
                    return self.later(self.ack_delay, send, bytes([0x88, 0x30, self.address + 1, 0xFF]))
                if msg[1:4] == b"\x01\x00\x01":  # broadcast IF_Clear
                    return self.later(self.ack_delay, send, bytes(msg))
                return
            if msg[0] != 0x80 | self.address:
                return  # another camera's
            if msg[1] == 0x09:
                self.counts["inquiries"] += 1
                if msg[2:4] == b"\x06\x12" and len(msg) == 5:
                    reply = bytes([h, 0x50]) + nibbles(self.pan.pos, self.pan.nibbles) + nibbles(self.tilt.pos, self.tilt.nibbles) + b"\xFF"
                    return self.later(self.inquiry_delay, send, reply)
                return self.error(send, 0, 0x02)
            if msg[1] == 0x01 and msg[2:4] == b"\x00\x01" and len(msg) == 5:  # IF_Clear
                self.cancel_moves(send)
                self.sockets = {1: None, 2: None}
                return self.later(self.ack_delay, send, bytes([h, 0x50, 0xFF]))
            if msg[1] >> 4 == 0x2 and len(msg) == 3:  # Cancel socket
                s = msg[1] & 0x0F
                if self.sockets.get(s) is None:
                    return self.error(send, s, 0x05)
                self.cancel_moves(send)
                return
            if msg[1] != 0x01:
                return self.error(send, 0, 0x02)
            self.counts["commands"] += 1
            if self.inject:
                kind = self.inject.pop(0)
                if kind == "buffer_full":
                    self.counts["buffer_full"] += 1
                    return self.error(send, 0, 0x03)
                if kind == "not_executable":
                    return self.error(send, 1, 0x41)
            s = self.free_socket()
            if s is None:
                self.counts["buffer_full"] += 1
                return self.error(send, 0, 0x03)
            body = msg[2:-1]
            if body[:2] == b"\x06\x01" and len(body) == 6:
                vv, ww, pd, td = body[2:]
                if not (0 <= vv <= len(self.pan.speeds) and 0 <= ww <= len(self.tilt.speeds)) or pd not in (1, 2, 3) or td not in (1, 2, 3):
                    return self.error(send, 0, 0x02)
                if (pd != 3 and vv == 0) or (td != 3 and ww == 0):
                    return self.error(send, 0, 0x02)
                self.cancel_moves(send)
                self.pan.vel = 0.0 if pd == 3 else (-1 if pd == 1 else 1) * self.pan.speed(vv)
                self.tilt.vel = 0.0 if td == 3 else (1 if td == 1 else -1) * self.tilt.speed(ww)
                return self.ack_then_complete(send, s, "drive")
            if body[:2] in (b"\x06\x02", b"\x06\x03") and len(body) == 4 + self.pan.nibbles + self.tilt.nibbles:
                vv, ww = body[2], body[3]
                if not (1 <= vv <= len(self.pan.speeds) and 1 <= ww <= len(self.tilt.speeds)):
                    return self.error(send, 0, 0x02)
                p = signed(body[4:4 + self.pan.nibbles])
                t = signed(body[4 + self.pan.nibbles:])
                if body[1] == 0x03:
                    p, t = p + self.pan.pos, t + self.tilt.pos
                if not (self.pan.lo <= p <= self.pan.hi and self.tilt.lo <= t <= self.tilt.hi):
                    return self.error(send, s, 0x41)
                self.cancel_moves(send)
                return self.start_move(send, s, p, t, self.pan.speed(vv), self.tilt.speed(ww))
            if body == b"\x06\x04":  # Home
                self.cancel_moves(send)
                return self.start_move(send, s, 0, 0, self.pan.speed(len(self.pan.speeds)), self.tilt.speed(len(self.tilt.speeds)))
            # Anything else (zoom, focus…): accepted and completed.
            return self.ack_then_complete(send, s, "other")

    def ack_then_complete(self, send, s, kind):
        self.sockets[s] = (kind, send)
        self.later(self.ack_delay, send, bytes([self.reply_header, 0x40 | s, 0xFF]))

        def complete(data):
            with self.lock:
                if self.sockets.get(s) and self.sockets[s][0] == kind:
                    self.sockets[s] = None
            send(data)
        self.later(self.completion_delay, complete, bytes([self.reply_header, 0x50 | s, 0xFF]))

    def start_move(self, send, s, p, t, pan_rate, tilt_rate):
        self.pan.vel = self.tilt.vel = 0.0
        self.pan.target = (float(p), pan_rate)
        self.tilt.target = (float(t), tilt_rate)
        self.sockets[s] = ("move", send)
        self.later(self.ack_delay, send, bytes([self.reply_header, 0x40 | s, 0xFF]))

    def degrees(self):
        with self.lock:
            return self.pan.pos / self.pan.upd, self.tilt.pos / self.tilt.upd


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
    """Serial VISCA on a pty: `path` is the device the controller opens."""

    def __init__(self, camera):
        super().__init__(camera)
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
                os.close(fd)
            except OSError:
                pass


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

    def serve(self):
        while not self.stopping.is_set():
            try:
                data, peer = self.sock.recvfrom(2048)
            except (socket.timeout, OSError):
                continue
            if self.raw:
                self.camera.handle(data, lambda out, peer=peer: self.sock.sendto(out, peer))
                continue
            if len(data) < 8:
                continue
            ptype = int.from_bytes(data[0:2], "big")
            length = int.from_bytes(data[2:4], "big")
            seq = data[4:8]
            payload = data[8:8 + length]
            if ptype == 0x0200:  # control command: RESET of the sequence number
                self.control.append(bytes(payload))
                self.sock.sendto(b"\x02\x01\x00\x01" + seq + b"\x01", peer)
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
    ap.add_argument("--udp", help="HOST:PORT")
    ap.add_argument("--raw", action="store_true", help="raw VISCA in UDP datagrams (no VISCA-over-IP header)")
    a = ap.parse_args()
    cam = Camera(load_profile(a.profile), address=a.address)
    if a.pty:
        link = PtyLink(cam).start()
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
