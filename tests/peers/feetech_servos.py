"""Feetech STS serial bus servos (an STS3215 per id) on one half-duplex bus, for tests.

Written from the protocol's published description, not from dockd's code:
- the vendor SDK (PyPI feetech-servo-sdk 1.0.0, scservo_sdk): instruction packets
  `FF FF id len instr params… sum`, status packets `FF FF id len error params… sum`,
  sum = ~(id + len + …) & 0xFF, PING 0x01, READ 0x02, WRITE 0x03, SYNC WRITE 0x83 to id 0xFE
  (answered by none), little-endian words (protocol end 0), the error bits (1 voltage, 2 angle,
  4 overheat, 8 overcurrent, 32 overload);
- the STS/SMS control table as LeRobot lists it from Feetech's manual
  (lerobot/motors/feetech/tables.py): model number at 3 (777 = STS3215), torque enable 40,
  acceleration 41, goal position 42, goal time 44, goal speed 46 (steps/s), present position 56,
  present speed 58 (sign in bit 15), moving 66.

Motion: with torque on, each servo turns toward its goal position at its goal speed (0: its top
speed, TOP_SPEED steps/s), from when each write arrived (positions are advanced on every packet
and by a physics thread); the acceleration register is kept but not modelled (instant speed).
Misbehaviour: `errors` ({id: error byte}) is the error byte of every status packet that servo
sends. Every packet received is kept with its arrival time (`received`).

dockd's driver (Sources/DockDrivers/Feetech), its virtual peer (FeetechServosPeer in
Tests/DockDriversTests/VirtualPeers.swift) and this emulator are written from those same two
references (docs/HARDWARE.md, "Feetech bus servo heads", lists what dockd uses); the vendor SDK is
the arbiter: this emulator is checked against it (tests/integration/test_feetech.py) before dockd
is run on it.

Run alone:  python feetech_servos.py --pty [--ids 1,2]
"""
import argparse
import os
import select
import threading
import time
import tty

TOP_SPEED = 3400.0  # steps/s at goal speed 0: a round figure for the emulator, not a servo's cited one
TORQUE_ENABLE, ACCELERATION, GOAL_POSITION, GOAL_SPEED = 40, 41, 42, 46
PRESENT_POSITION, PRESENT_SPEED, MOVING = 56, 58, 66
MODEL_STS3215 = 777


def checksum(body):
    return ~sum(body) & 0xFF


def status(servo_id, error, params=b""):
    body = bytes([servo_id, len(params) + 2, error]) + bytes(params)
    return b"\xff\xff" + body + bytes([checksum(body)])


class Servo:
    def __init__(self, servo_id, position=2048):
        self.id = servo_id
        self.table = bytearray(0x50)
        self.table[3:5] = MODEL_STS3215.to_bytes(2, "little")
        self.table[5] = servo_id
        self.table[GOAL_POSITION:GOAL_POSITION + 2] = int(position).to_bytes(2, "little")
        self.position = float(position)
        self.velocity = 0.0
        self.refresh()

    def word(self, address):
        return int.from_bytes(self.table[address:address + 2], "little")

    def advance(self, dt):
        goal, asked = self.word(GOAL_POSITION), self.word(GOAL_SPEED)
        speed = TOP_SPEED if asked == 0 else min(asked, TOP_SPEED)
        self.velocity = 0.0
        if self.table[TORQUE_ENABLE] == 1 and goal != self.position:
            step = min(abs(goal - self.position), speed * dt)
            self.velocity = speed if goal > self.position else -speed
            self.position += step if goal > self.position else -step
            if self.position == goal:
                self.velocity = 0.0
        self.refresh()

    def refresh(self):
        steps, magnitude = int(round(self.position)), int(round(abs(self.velocity)))
        self.table[PRESENT_POSITION:PRESENT_POSITION + 2] = (steps & 0xFFFF).to_bytes(2, "little")
        self.table[PRESENT_SPEED:PRESENT_SPEED + 2] = ((magnitude & 0x7FFF) | (0x8000 if self.velocity < 0 else 0)).to_bytes(2, "little")
        self.table[MOVING] = 1 if self.velocity else 0


class Bus:
    def __init__(self, ids=(1, 2), position=2048, errors=None):
        self.servos = {i: Servo(i, position) for i in ids}
        self.errors = dict(errors or {})
        self.lock = threading.Lock()
        self.received = []
        self.time = time.monotonic()

    def step(self, now=None):
        with self.lock:
            self._advance(now or time.monotonic())

    def _advance(self, now):
        dt = max(0.0, now - self.time)
        self.time = max(self.time, now)
        for s in self.servos.values():
            s.advance(dt)

    def steps(self, servo_id):
        self.step()
        with self.lock:
            return self.servos[servo_id].position

    def still(self):
        self.step()
        with self.lock:
            return all(s.velocity == 0 for s in self.servos.values())

    def handle(self, packet, send):
        """One whole instruction packet (checked by the caller); answers through `send`."""
        now = time.monotonic()
        with self.lock:
            self._advance(now)
            self.received.append((now, bytes(packet)))
            servo_id, instruction, params = packet[2], packet[4], packet[5:-1]
            servo = self.servos.get(servo_id)
            error = self.errors.get(servo_id, 0)
            if instruction == 0x83 and servo_id == 0xFE and len(params) >= 2:
                address, count = params[0], params[1]
                rest = params[2:]
                while len(rest) >= count + 1:
                    target = self.servos.get(rest[0])
                    if target:
                        target.table[address:address + count] = rest[1:1 + count]
                    rest = rest[1 + count:]
                return
            if servo is None:
                return  # no such servo on the bus: silence
            if instruction == 0x01:
                send(status(servo_id, error))
            elif instruction == 0x02 and len(params) == 2:
                address, count = params
                send(status(servo_id, error, servo.table[address:address + count]))
            elif instruction == 0x03 and len(params) >= 1:
                servo.table[params[0]:params[0] + len(params) - 1] = params[1:]
                send(status(servo_id, error))


def packets(buffer):
    """Whole, checked instruction packets from the front of `buffer`; returns (packets, rest)."""
    out = []
    while len(buffer) >= 4:
        if buffer[0] != 0xFF or buffer[1] != 0xFF:
            buffer = buffer[1:]
            continue
        length = buffer[3]
        if len(buffer) < 4 + length:
            break
        packet, buffer = buffer[:4 + length], buffer[4 + length:]
        if checksum(packet[2:-1]) == packet[-1]:
            out.append(packet)
    return out, buffer


class PtyLink:
    """The bus on a pty: `path` is the device the controller opens (any baud: a pty has none)."""

    def __init__(self, bus):
        self.bus = bus
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.stopping = threading.Event()
        self.threads = []

    def write(self, data):
        try:
            os.write(self.master, data)
        except OSError:
            pass

    def start(self):
        for fn in (self.physics, self.serve):
            t = threading.Thread(target=fn, daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def physics(self):
        while not self.stopping.is_set():
            self.bus.step()
            time.sleep(0.005)

    def serve(self):
        buf = b""
        while not self.stopping.is_set():
            r, _, _ = select.select([self.master], [], [], 0.05)
            if not r:
                continue
            try:
                buf += os.read(self.master, 256)
            except OSError:
                time.sleep(0.01)
                continue
            found, buf = packets(buf)
            for packet in found:
                self.bus.handle(packet, self.write)

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=1)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pty", action="store_true", required=True)
    parser.add_argument("--ids", default="1,2")
    args = parser.parse_args()
    link = PtyLink(Bus(ids=[int(i) for i in args.ids.split(",")])).start()
    print(link.path, flush=True)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        link.stop()
