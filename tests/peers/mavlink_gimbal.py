"""A MAVLink gimbal device (gimbal protocol v2) played with pymavlink: HEARTBEAT as
MAV_TYPE_GIMBAL / component 154, GIMBAL_DEVICE_INFORMATION on MAV_CMD_REQUEST_MESSAGE,
GIMBAL_DEVICE_ATTITUDE_STATUS at 50 Hz, and a motion model that follows
GIMBAL_DEVICE_SET_ATTITUDE (attitude quaternion, or angular velocity when the quaternion is NaN).
Every encoding and decoding is pymavlink's. Links: a pty or loopback UDP.

Misbehaviours for the safety tests: `silent` (sends nothing, still listens and moves),
`refuse_commands` ({MAV_CMD: MAV_RESULT}: COMMAND_LONGs answered with that result and not acted on).
Like gimbal protocol v2 devices, it keeps turning at the last rate it was given until told otherwise.
Every SET_ATTITUDE received is kept with its arrival time (`set_attitude_times`)."""
import math
import os
import select
import socket
import threading
import time
import tty

from pymavlink.dialects.v20 import common as mavlink

GIMBAL_SYS, GIMBAL_COMP = 1, 154


def quat_to_euler(q):
    w, x, y, z = q
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1, min(1, 2 * (w * y - z * x))))
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return roll, pitch, yaw


def euler_to_quat(roll, pitch, yaw):
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    return [cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy]


class Gimbal:
    def __init__(self, write, yaw_limits=(-2.6, 2.6), pitch_limits=(-1.5, 0.6), status_hz=50, answer_info=True,
                 refuse_commands=None):
        self.write = write
        self.mav = mavlink.MAVLink(None, srcSystem=GIMBAL_SYS, srcComponent=GIMBAL_COMP)
        self.mav.robust_parsing = True
        self.yaw_limits, self.pitch_limits = yaw_limits, pitch_limits
        self.status_hz = status_hz
        self.answer_info = answer_info
        self.yaw = self.pitch = 0.0  # FRD, rad
        self.rates = (0.0, 0.0)  # yaw (z), pitch (y) rad/s
        self.target = None
        self.failure_flags = 0
        self.lock = threading.RLock()
        self.received = []  # decoded pymavlink messages from the controller
        self.set_attitudes = []
        self.set_attitude_times = []
        self.silent = False
        self.refuse_commands = dict(refuse_commands or {})
        self.stopping = threading.Event()
        self.started = self.last_step = time.monotonic()

    def send(self, msg):
        if not self.silent:
            self.write(msg.pack(self.mav))

    def feed(self, data):
        for m in self.mav.parse_buffer(data) or []:
            with self.lock:
                self.received.append(m)
            t = m.get_type()
            if t == "COMMAND_LONG" and m.target_component in (0, GIMBAL_COMP):
                result = self.refuse_commands.get(m.command, mavlink.MAV_RESULT_ACCEPTED)
                self.send(mavlink.MAVLink_command_ack_message(m.command, result, 0, 0, m.get_srcSystem(), m.get_srcComponent()))
                if result != mavlink.MAV_RESULT_ACCEPTED:
                    continue
                if m.command == mavlink.MAV_CMD_REQUEST_MESSAGE and int(m.param1) == 283 and self.answer_info:
                    self.send(mavlink.MAVLink_gimbal_device_information_message(
                        int((time.monotonic() - self.started) * 1000), b"PeerVendor", b"PeerGimbal", b"",
                        0x00030201, 0x00000001, 0x1234ABCD,
                        mavlink.GIMBAL_DEVICE_CAP_FLAGS_HAS_PITCH_AXIS | mavlink.GIMBAL_DEVICE_CAP_FLAGS_HAS_YAW_AXIS
                        | mavlink.GIMBAL_DEVICE_CAP_FLAGS_HAS_PITCH_LOCK | mavlink.GIMBAL_DEVICE_CAP_FLAGS_HAS_ROLL_LOCK,
                        0, float("nan"), float("nan"), self.pitch_limits[0], self.pitch_limits[1],
                        self.yaw_limits[0], self.yaw_limits[1], 0))
            elif t == "GIMBAL_DEVICE_SET_ATTITUDE" and m.target_component in (0, GIMBAL_COMP):
                with self.lock:
                    self.advance()
                    self.set_attitudes.append(m)
                    # The time it acts from (the step just taken), however late this line runs.
                    self.set_attitude_times.append(self.last_step)
                    if all(math.isfinite(v) for v in m.q):
                        _, p, y = quat_to_euler(m.q)
                        self.target = (y, p)
                        self.rates = (0.0, 0.0)
                    else:
                        self.target = None
                        self.rates = (m.angular_velocity_z if math.isfinite(m.angular_velocity_z) else 0.0,
                                      m.angular_velocity_y if math.isfinite(m.angular_velocity_y) else 0.0)

    def advance(self):
        """Brings the attitude up to now with the motion in force since the last step: the run loop
        every 5 ms, and each SET_ATTITUDE before it changes the motion (when the process is starved,
        a new rate must not act on the time before it arrived). Returns (now, yaw, pitch, rates)."""
        with self.lock:
            now = time.monotonic()
            dt, self.last_step = now - self.last_step, now
            if self.target:
                ty, tp = self.target
                step = 3.0 * dt
                self.yaw += max(-step, min(step, ty - self.yaw))
                self.pitch += max(-step, min(step, tp - self.pitch))
            else:
                self.yaw += self.rates[0] * dt
                self.pitch += self.rates[1] * dt
            self.yaw = max(self.yaw_limits[0], min(self.yaw_limits[1], self.yaw))
            self.pitch = max(self.pitch_limits[0], min(self.pitch_limits[1], self.pitch))
            return now, self.yaw, self.pitch, self.rates

    def run(self):
        next_status = next_hb = time.monotonic()
        while not self.stopping.is_set():
            time.sleep(0.005)
            now, yaw, pitch, rates = self.advance()
            try:
                if now >= next_hb:
                    next_hb += 1
                    self.send(mavlink.MAVLink_heartbeat_message(mavlink.MAV_TYPE_GIMBAL, mavlink.MAV_AUTOPILOT_INVALID, 0, 0,
                                                                mavlink.MAV_STATE_ACTIVE, 3))
                if now >= next_status:
                    next_status += 1 / self.status_hz
                    self.send(mavlink.MAVLink_gimbal_device_attitude_status_message(
                        0, 0, int((now - self.started) * 1000),
                        mavlink.GIMBAL_DEVICE_FLAGS_ROLL_LOCK | mavlink.GIMBAL_DEVICE_FLAGS_PITCH_LOCK
                        | mavlink.GIMBAL_DEVICE_FLAGS_YAW_IN_VEHICLE_FRAME,
                        euler_to_quat(0, pitch, yaw), 0.0, rates[1], rates[0], self.failure_flags))
            except OSError:
                pass


class PtyGimbal:
    def __init__(self, **kw):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.gimbal = Gimbal(self._write, **kw)

    def _write(self, data):
        os.write(self.master, data)

    def start(self):
        threading.Thread(target=self.gimbal.run, daemon=True).start()
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self):
        while not self.gimbal.stopping.is_set():
            r, _, _ = select.select([self.master], [], [], 0.05)
            if r:
                try:
                    self.gimbal.feed(os.read(self.master, 1024))
                except OSError:
                    time.sleep(0.01)

    def stop(self):
        self.gimbal.stopping.set()
        time.sleep(0.1)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


class UdpGimbal:
    """Listens on 127.0.0.1:port and talks to whoever sent the last datagram."""

    def __init__(self, port=0, **kw):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]
        self.peer = None
        self.gimbal = Gimbal(self._write, **kw)

    def _write(self, data):
        if self.peer:
            self.sock.sendto(data, self.peer)

    def start(self):
        threading.Thread(target=self.gimbal.run, daemon=True).start()
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self):
        while not self.gimbal.stopping.is_set():
            try:
                data, self.peer = self.sock.recvfrom(2048)
            except (socket.timeout, OSError):
                continue
            self.gimbal.feed(data)

    def stop(self):
        self.gimbal.stopping.set()
        time.sleep(0.1)
        self.sock.close()
