#!/usr/bin/env python3
"""make bench, daemon part: measures the release dockd from the outside and reports the figures.

The bench plays the stand itself on a pty (protocol/reference/dockproto.py encodes and decodes the
frames), so every figure is dockd's own cost plus the kernel and this harness -- no dock-sim in the
loop. Sections:

  * time to READY: Popen -> the READY=1 datagram on a NOTIFY_SOCKET we bound;
  * CPU and RSS of dockd: idle without a stand, idle with a stand streaming 100 Hz FEEDBACK;
  * command -> frame latency: `motion.velocity` written to the API socket -> the VELOCITY frame
    carrying that value read on the pty master;
  * requests/s: `dockd.version` round trips, 1 client and 8 concurrent clients;
  * fan-out: 64 subscribers to `motion` at motion_rate 100 while the stand streams 100 Hz FEEDBACK.

Figures are measured, never asserted: the script fails only when something does not work at all
(dockd does not start, the stand never connects). Standard library only, plus dockproto.py.

    python3 bench/daemon_bench.py --bin "$(swift build -c release --show-bin-path)" [--write BENCHMARKS.md]
"""
import argparse
import datetime
import json
import multiprocessing
import os
import platform
import random
import re
import selectors
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import tty
from collections import OrderedDict, deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "protocol" / "reference"))
import dockproto  # noqa: E402

START_MARK = "<!-- bench:daemon:start -->"
END_MARK = "<!-- bench:daemon:end -->"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def now_ns():
    return time.monotonic_ns()


def f32(x):
    """x as it comes back from a float32 on the wire."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def pct(values, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100 * len(s) + 0.5)) - 1))
    return s[k]


def ms(ns):
    return ns / 1e6


def fmt(x, digits=2):
    return "n/a" if x is None else f"{x:.{digits}f}"


def cpu_text(x):
    """CPU % of a window; /proc counts whole clock ticks, so zero ticks is shown as below one tick. With
    the schedstat figure where the window has one (`run_cpu`)."""
    ticks = f"< {100 / CLK_TCK / x['seconds']:.1f} (no tick)" if x["cpu"] == 0 else f"{x['cpu']:.1f}"
    return f"{ticks} (schedstat {x['run_cpu']:.2f})" if "run_cpu" in x else ticks


# --- /proc -----------------------------------------------------------------------------------------


def cpu_ticks(pid):
    """utime + stime of the whole process (all threads), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def run_ns(pid):
    """Time on a CPU of every thread the process has now, ns (/proc/PID/task/*/schedstat: no clock-tick
    rounding, where utime + stime counts 10 ms ticks, 0.1 % of a core over a 10 s window)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def thread_count(pid):
    return status_kb(pid, "Threads")


class Window:
    """CPU % (of one core) and RSS of a process over a measuring window, sampled every 0.25 s."""

    def __init__(self, pid):
        self.pid = pid
        self.rss = []

    def __enter__(self):
        self.t0 = now_ns()
        self.c0 = cpu_ticks(self.pid)
        self.run0 = run_ns(self.pid)
        self.own0 = os.times()
        self.sample()
        return self

    def sample(self):
        kb = status_kb(self.pid, "VmRSS")
        if kb is not None:
            self.rss.append(kb)

    def __exit__(self, *exc):
        self.sample()
        self.seconds = (now_ns() - self.t0) / 1e9
        self.cpu = 100 * (cpu_ticks(self.pid) - self.c0) / CLK_TCK / self.seconds
        self.run_cpu = 100 * (run_ns(self.pid) - self.run0) / 1e9 / self.seconds
        own = os.times()
        self.harness_cpu = 100 * ((own.user - self.own0.user) + (own.system - self.own0.system)) / self.seconds
        return False

    def run_for(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            time.sleep(min(0.25, max(0, deadline - time.monotonic())))
            self.sample()

    @property
    def rss_mib(self):
        return max(self.rss) / 1024 if self.rss else None


# --- processes -------------------------------------------------------------------------------------


class Processes:
    """Every child we start, so that they are all stopped however the bench ends."""

    def __init__(self):
        self.children = []

    def start(self, argv, **kwargs):
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, **kwargs)
        self.children.append(p)
        return p

    @staticmethod
    def stop(p, timeout=5):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)

    def stop_all(self):
        for p in self.children:
            try:
                self.stop(p)
            except Exception:
                pass


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


# --- JSON-RPC client -------------------------------------------------------------------------------


class Client:
    """Newline-delimited JSON-RPC 2.0 on dockd's Unix socket (protocol/API.md)."""

    def __init__(self, path, timeout=5):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.buffer = b""
        self.next_id = 1
        self.timeout = timeout

    def close(self):
        self.sock.close()

    def send(self, method, params=None):
        request_id = self.next_id
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            request["params"] = params
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        return request_id

    def read_message(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("dockd closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def reply(self, request_id):
        """The reply to request_id; notifications in between are skipped."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            message = self.read_message()
            if message.get("id") == request_id:
                return message
        raise TimeoutError(f"no reply to request {request_id}")

    def call(self, method, params=None):
        return self.reply(self.send(method, params))

    def result(self, method, params=None):
        reply = self.call(method, params)
        if "error" in reply:
            raise RuntimeError(f"{method} failed: {reply['error']}")
        return reply["result"]


# --- the stand, played on a pty --------------------------------------------------------------------

YAW_CAPS = {"axis": "yaw", "flags": 1, "min": -3.1415927, "max": 3.1415927, "max_speed": 3.0, "max_accel": 12.0,
            "counts_per_rev": 16384}
PITCH_CAPS = {"axis": "pitch", "flags": 0, "min": -0.6, "max": 0.9, "max_speed": 2.0, "max_accel": 10.0,
              "counts_per_rev": 16384}


class FakeStand:
    """A protocol v1 stand on the master side of a pty: answers HELLO like PROTOCOL.md §2 (HELLO_REPLY,
    CAPABILITIES, BATTERY, EVENT docked), ACKs what asks for it, and streams FEEDBACK at `hz` from a
    thread once the session is up. Every VELOCITY frame is stamped with the time its bytes were read.
    FEEDBACK `time_us` is this process's CLOCK_MONOTONIC in µs, and `sent_at` maps it to the time the
    frame's write() returned."""

    def __init__(self, hz=100, axes=(YAW_CAPS, PITCH_CAPS)):
        self.hz = hz
        self.axes = list(axes)
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.sender = dockproto.Sender()
        self.write_lock = threading.Lock()
        self.decoder = dockproto.StreamDecoder()
        self.stopping = threading.Event()
        self.streaming = threading.Event()
        self.rates = {"yaw": 0.0, "pitch": 0.0}
        self.positions = {"yaw": 0.0, "pitch": 0.0}
        self.sent_at = OrderedDict()  # time_us -> write() done, ns
        self.feedback_times = deque(maxlen=4096)  # ns
        self.feedback_count = 0
        self.hellos = 0
        self.velocity_frames = 0
        self.cond = threading.Condition()
        self.target = None  # yaw value awaited by wait_velocity
        self.hit = None
        self.reader = threading.Thread(target=self._read_loop, name="stand-reader", daemon=True)
        self.ticker = threading.Thread(target=self._feedback_loop, name="stand-feedback", daemon=True)
        self.reader.start()
        self.ticker.start()

    def close(self):
        self.stopping.set()
        self.reader.join(2)
        self.ticker.join(2)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def _send(self, type_name, payload=None, ack_request=False):
        _, data = self.sender.encode(type_name, payload, ack_request)
        with self.write_lock:
            os.write(self.master, data)

    def _read_loop(self):
        sel = selectors.DefaultSelector()
        sel.register(self.master, selectors.EVENT_READ)
        while not self.stopping.is_set():
            if not sel.select(0.1):
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            stamp = now_ns()
            for kind, frame in self.decoder.feed(data):
                if kind == "frame":
                    self._handle(frame, stamp)

    def _handle(self, frame, stamp):
        t = frame["type"]
        p = frame["payload"]
        if t == "hello":
            self.hellos += 1
            self._send("hello_reply", {"major": 1, "minor": 0, "heartbeat_timeout_ms": p["heartbeat_timeout_ms"] or 500,
                                       "model": "bench-stand", "firmware": "1.0.0", "hardware": "A", "serial": "BENCH-0001"})
            self._send("capabilities", {"feedback_hz": self.hz, "imu_hz": 0, "features": 1 << 3, "buttons": 0,
                                        "custom_buttons": 0, "axes": self.axes, "batteries": ["internal"]})
            self._send("battery", {"index": 0, "level": 0.8, "charge": 0, "flags": 0})
            self._send("event", {"time_us": now_ns() // 1000, "kind": 1, "value": 1, "button": 0, "factor": 1.0})
            self.streaming.set()
            return
        if frame["flags"] & dockproto.FLAG_ACK_REQUEST:
            self._send("ack", {"ack_seq": frame["seq"], "ack_type": dockproto.MESSAGE_TYPES[t]})
        if t == "velocity":
            self.velocity_frames += 1
            for a in p["axes"]:
                self.rates[a["axis"]] = a["velocity"]
            yaw = next((a["velocity"] for a in p["axes"] if a["axis"] == "yaw"), None)
            with self.cond:
                if self.target is not None and self.hit is None and yaw == self.target:
                    self.hit = stamp
                    self.cond.notify_all()
        elif t == "stop":
            self.rates = {"yaw": 0.0, "pitch": 0.0}

    def _feedback_loop(self):
        period = 1 / self.hz
        next_t = None
        while not self.stopping.is_set():
            if not self.streaming.wait(0.1):
                continue
            now = time.monotonic()
            if next_t is None or now - next_t > period:
                next_t = now  # late by more than a period (or first tick): restart the schedule
            else:
                time.sleep(max(0, next_t - now))
            next_t += period
            axes = []
            for name in ("yaw", "pitch"):
                self.positions[name] += self.rates[name] * period
                if name == "pitch":
                    self.positions[name] = min(0.9, max(-0.6, self.positions[name]))
                axes.append({"axis": name, "position": self.positions[name], "velocity": self.rates[name],
                             "effort": float("nan"), "status": 0})
            time_us = now_ns() // 1000
            _, data = self.sender.encode("feedback", {"time_us": time_us, "axes": axes})
            with self.write_lock:
                try:
                    os.write(self.master, data)
                except OSError:
                    return
                done = now_ns()
            self.sent_at[time_us] = done
            while len(self.sent_at) > 4096:
                self.sent_at.popitem(last=False)
            self.feedback_times.append(done)
            self.feedback_count += 1

    def arm(self, value):
        with self.cond:
            self.target = value
            self.hit = None

    def wait_velocity(self, timeout):
        with self.cond:
            self.cond.wait_for(lambda: self.hit is not None, timeout)
            hit, self.target = self.hit, None
            return hit

    def feedback_between(self, a, b):
        return any(a < t < b for t in list(self.feedback_times)[-50:])


# --- the bench -------------------------------------------------------------------------------------


class Bench:
    def __init__(self, args):
        self.args = args
        self.bin = Path(args.bin)
        self.tmp = Path(tempfile.mkdtemp(prefix="dockd-bench."))
        self.procs = Processes()
        self.results = {}
        self.notes = []

    def cleanup(self):
        self.procs.stop_all()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def dockd(self, name, device=None, env=None, hotplug=False, bin_dir=None):
        sock = self.tmp / f"{name}.sock"
        argv = [str((bin_dir or self.bin) / "dockd"), "--ignore-missing-config", "--config", "/nonexistent",
                "--socket", str(sock), "--socket-group", "", "--log-level", "warning"]
        if not hotplug:
            argv.append("--no-hotplug")
        if device:
            argv += ["--device", device]
        log = open(self.tmp / f"{name}.log", "ab")
        p = self.procs.start(argv, stderr=log, env=env)
        log.close()
        p.sock_path = sock
        p.log_path = self.tmp / f"{name}.log"
        return p

    def wait_socket(self, p, timeout=10):
        def up():
            if p.poll() is not None:
                raise RuntimeError(f"dockd exited with {p.returncode}: {p.log_path.read_text(errors='replace')[-2000:]}")
            if not p.sock_path.exists():
                return False
            try:  # bound is not yet listening: wait until a connection is accepted
                Client(p.sock_path, timeout=1).close()
                return True
            except OSError:
                return False
        wait_for(up, timeout, "dockd's API socket")

    # time to READY ------------------------------------------------------------------------------

    def ready(self, runs, hotplug):
        times = []
        failures = 0
        for i in range(runs):
            path = self.tmp / f"notify{i}.sock"
            ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            ns.bind(str(path))
            env = dict(os.environ, NOTIFY_SOCKET=str(path))
            env.pop("WATCHDOG_USEC", None)
            env.pop("LISTEN_FDS", None)
            t0 = now_ns()
            p = self.dockd(f"ready{i}{'h' if hotplug else ''}", env=env, hotplug=hotplug)
            got = None
            deadline = time.monotonic() + 10
            while got is None and time.monotonic() < deadline:
                ns.settimeout(max(0.001, deadline - time.monotonic()))
                try:
                    data = ns.recv(4096)
                except socket.timeout:
                    break
                if b"READY=1" in data.split(b"\n"):
                    got = now_ns()
            Processes.stop(p)
            ns.close()
            path.unlink(missing_ok=True)
            if got is None:
                failures += 1
            else:
                times.append(ms(got - t0))
        return {"runs": runs, "ok": len(times), "failures": failures,
                "median": statistics.median(times) if times else None, "min": min(times) if times else None,
                "max": max(times) if times else None}

    # CPU/RSS idle without a stand, then requests/s ------------------------------------------------

    def idle_no_stand(self, seconds):
        p = self.dockd("idle")
        self.wait_socket(p)
        time.sleep(1)  # let it settle after start-up
        with Window(p.pid) as w:
            w.run_for(seconds)
        result = {"cpu": w.cpu, "rss": w.rss_mib, "threads": thread_count(p.pid), "seconds": w.seconds}
        Processes.stop(p)
        return result

    def requests(self, sock_path, clients, seconds, pid):
        barrier = threading.Barrier(clients + 1)
        lat = [[] for _ in range(clients)]
        errors = []

        def worker(i):
            try:
                c = Client(sock_path)
                c.call("dockd.version")  # connected and warm
                barrier.wait(10)
                deadline = time.monotonic() + seconds
                out = lat[i]
                while time.monotonic() < deadline:
                    t = now_ns()
                    r = c.call("dockd.version")
                    out.append(now_ns() - t)
                    if "result" not in r:
                        errors.append(r)
                c.close()
            except Exception as e:  # noqa: BLE001 -- reported, not hidden
                errors.append(repr(e))
                try:
                    barrier.abort()
                except Exception:
                    pass

        threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(clients)]
        for t in threads:
            t.start()
        barrier.wait(10)
        with Window(pid) as w:
            for t in threads:
                t.join(seconds + 10)
        all_lat = [x for l in lat for x in l]
        return {"clients": clients, "requests": len(all_lat), "seconds": w.seconds,
                "rps": len(all_lat) / w.seconds if all_lat else 0,
                "p50": ms(pct(all_lat, 50)) if all_lat else None, "p99": ms(pct(all_lat, 99)) if all_lat else None,
                "errors": len(errors), "cpu": w.cpu, "harness_cpu": w.harness_cpu}

    # with a stand ---------------------------------------------------------------------------------

    def with_stand(self):
        stand = FakeStand(hz=100)
        try:
            p = self.dockd("stand", device=stand.path)
            self.wait_socket(p)
            c = Client(p.sock_path)

            def connected():
                return any(s["state"] == "connected" for s in c.result("stands.list"))
            wait_for(connected, 10, "the fake stand to connect")
            c.close()
            time.sleep(1)  # streaming steadily, no API client

            fb = stand.feedback_count
            with Window(p.pid) as w:
                w.run_for(self.args.idle_seconds)
            self.results["idle_stand"] = {"cpu": w.cpu, "rss": w.rss_mib, "threads": thread_count(p.pid),
                                          "seconds": w.seconds, "feedback_rate": (stand.feedback_count - fb) / w.seconds}

            self.results["latency"] = self.latency(stand, p)
            self.results["rps1"] = self.requests(p.sock_path, 1, self.args.rps_seconds, p.pid)
            self.results["rps8"] = self.requests(p.sock_path, 8, self.args.rps_seconds, p.pid)
            self.results["fanout1"] = self.fanout(stand, p, 1, min(3, self.args.fanout_seconds))
            self.results["fanout"] = self.fanout(stand, p, self.args.subscribers, self.args.fanout_seconds)
            self.results["stand_hellos"] = stand.hellos
            dropped_log = p.log_path.read_text(errors="replace").count("stopped reading its notifications")
            self.results["fanout"]["dropped_log"] = dropped_log
            Processes.stop(p)
            log = p.log_path.read_text(errors="replace")
            self.results["stand_log_errors"] = [l for l in log.splitlines() if "error" in l.lower()][:5]
        finally:
            stand.close()

    def latency(self, stand, p):
        c = Client(p.sock_path)
        n = self.args.samples
        lat, reply_lat, after_tick, misses = [], [], 0, 0
        base = stand.velocity_frames
        fb0 = stand.feedback_count
        rng = random.Random(1)
        t_start = now_ns()
        with Window(p.pid) as w:
            for k in range(n):
                # A fresh value each time, 1e-4 rad/s apart: within what the acceleration limit
                # (12 rad/s²) lets the controller send at once, so the first frame after the command
                # carries it exactly.
                value = f32(0.2 + 1e-4 * (k + 1))
                time.sleep(rng.uniform(0, 1 / stand.hz))  # a random phase against the feedback tick
                stand.arm(value)
                t0 = now_ns()
                request_id = c.send("motion.velocity", {"yaw": value})
                hit = stand.wait_velocity(2.0)
                reply = c.reply(request_id)
                t_reply = now_ns()
                if "error" in reply:
                    raise RuntimeError(f"motion.velocity failed: {reply['error']}")
                if hit is None:
                    misses += 1
                    continue
                lat.append(hit - t0)
                reply_lat.append(t_reply - t0)
                if stand.feedback_between(t0, hit):
                    after_tick += 1
        duration = (now_ns() - t_start) / 1e9
        c.call("motion.stop")
        c.close()
        frames = stand.velocity_frames - base
        feedback = stand.feedback_count - fb0
        return {"n": n, "matched": len(lat), "misses": misses,
                "p50": ms(pct(lat, 50)), "p90": ms(pct(lat, 90)), "p99": ms(pct(lat, 99)), "max": ms(max(lat)),
                "min": ms(min(lat)), "reply_p50": ms(pct(reply_lat, 50)), "reply_p99": ms(pct(reply_lat, 99)),
                "after_tick": after_tick, "velocity_frames_per_s": frames / duration, "cpu": w.cpu,
                "feedback_rate": feedback / duration, "seconds": duration}

    def fanout(self, stand, p, n, seconds):
        """The subscribers are read by a forked child process, so that parsing thousands of
        notifications a second does not hold this process's GIL and jitter the stand's FEEDBACK."""
        parent_end, child_end = multiprocessing.Pipe(duplex=False)
        child = multiprocessing.get_context("fork").Process(
            target=_fanout_reader, args=(p.sock_path, p.pid, n, seconds, child_end), daemon=True)
        child.start()
        child_end.close()
        try:
            if not parent_end.poll(seconds + 60):
                raise RuntimeError("the fan-out reader did not report")
            x = parent_end.recv()
        finally:
            child.join(5)
            if child.is_alive():
                child.kill()
        if "error" in x:
            raise RuntimeError(f"fan-out reader: {x['error']}")
        t0, t1 = x.pop("t0"), x.pop("t1")
        sends = [t for t in list(stand.feedback_times) if t0 <= t <= t1]
        gaps = [b - a for a, b in zip(sends, sends[1:])]
        lat, unmatched = [], 0
        for stand_us, recv_ns in x.pop("stamps"):
            sent = stand.sent_at.get(stand_us)
            if sent is None:
                unmatched += 1
            else:
                lat.append(recv_ns - sent)
        x.update({"feedback_rate": len(sends) / x["seconds"], "samples": len(lat), "unmatched": unmatched,
                  "p50": ms(pct(lat, 50)) if lat else None, "p99": ms(pct(lat, 99)) if lat else None,
                  "max": ms(max(lat)) if lat else None,
                  "send_gap_p1": ms(pct(gaps, 1)) if gaps else None, "send_gap_p50": ms(pct(gaps, 50)) if gaps else None,
                  "send_gap_p99": ms(pct(gaps, 99)) if gaps else None})
        return x

    def run(self):
        a = self.args
        print(f"bench: dockd from {self.bin}", file=sys.stderr)
        print("bench: time to READY ...", file=sys.stderr)
        self.results["ready"] = self.ready(a.ready_runs, hotplug=False)
        self.results["ready_hotplug"] = self.ready(max(3, a.ready_runs // 2), hotplug=True)
        print("bench: idle without a stand ...", file=sys.stderr)
        self.results["idle"] = self.idle_no_stand(a.idle_seconds)
        print("bench: with a stand (idle, latency, requests/s, fan-out) ...", file=sys.stderr)
        self.with_stand()


def _fanout_reader(sock_path, pid, n, seconds, conn):
    """In a child process: n subscribers to `motion` at 100 Hz, read for `seconds` after a 1 s
    warm-up. Sends back counts, (stand_time_us, received ns) pairs, EOFs, dockd's CPU/RSS."""
    try:
        conn.send(_fanout_read(sock_path, pid, n, seconds))
    except Exception as e:  # noqa: BLE001 -- reported to the parent
        conn.send({"error": repr(e)})
    finally:
        conn.close()


def _fanout_read(sock_path, pid, n, seconds):
    subs = []
    for _ in range(n):
        c = Client(sock_path)
        r = c.call("subscribe", {"topics": ["motion"], "motion_rate": 100})
        if "error" in r:
            raise RuntimeError(f"subscribe failed: {r['error']}")
        subs.append(c)
    counts = [0] * n
    eof = [False] * n
    buffers = [c.buffer for c in subs]
    stamps = []
    sel = selectors.DefaultSelector()
    for i, c in enumerate(subs):
        c.sock.setblocking(False)
        sel.register(c.sock, selectors.EVENT_READ, i)

    def pump(until, measure):
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            for key, _ in sel.select(min(left, 0.1)):
                i = key.data
                try:
                    chunk = key.fileobj.recv(262144)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                t = now_ns()
                if not chunk:
                    eof[i] = True
                    sel.unregister(key.fileobj)
                    continue
                *lines, buffers[i] = (buffers[i] + chunk).split(b"\n")
                if not measure:
                    continue
                for line in lines:
                    m = json.loads(line)
                    if m.get("method") == "motion.state":
                        counts[i] += 1
                        stamps.append((m["params"].get("stand_time_us"), t))

    pump(time.monotonic() + 1.0, measure=False)  # warm-up: subscriptions settle
    with Window(pid) as w:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pump(min(end, time.monotonic() + 0.25), measure=True)
            w.sample()
    t1 = now_ns()
    # Still connected and served? Each subscriber makes one call.
    alive = 0
    for i, c in enumerate(subs):
        if eof[i]:
            continue
        try:
            sel.unregister(c.sock)
        except (KeyError, ValueError):
            pass
        c.sock.setblocking(True)
        c.sock.settimeout(5)
        c.buffer = buffers[i]
        try:
            if "result" in c.call("dockd.version"):
                alive += 1
        except (OSError, ConnectionError, TimeoutError, ValueError):
            pass
    for c in subs:
        c.close()
    rates = [x / w.seconds for x in counts]
    return {"subscribers": n, "seconds": w.seconds, "t0": w.t0, "t1": t1, "stamps": stamps,
            "rate_min": min(rates), "rate_median": statistics.median(rates), "rate_max": max(rates),
            "total": sum(counts) / w.seconds, "eof": sum(eof), "alive": alive,
            "cpu": w.cpu, "rss": w.rss_mib, "harness_cpu": w.harness_cpu}


# --- report ----------------------------------------------------------------------------------------


def sh(*argv):
    try:
        return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception:
        return ""


def machine():
    model = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = sh("git", "rev-parse", "--short", "HEAD") or "unknown"
    if sh("git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!BENCHMARKS.md"):
        commit += " (with uncommitted changes)"
    swift = sh("swift", "--version").splitlines()
    return {"nproc": os.cpu_count(), "cpu": model, "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "commit": commit, "kernel": platform.release(), "python": platform.python_version(),
            "swift": swift[0] if swift else "unknown", "load": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def report(r, m, args):
    out = []
    w = out.append
    w("## dockd (daemon)")
    w("")
    w("Measured by `make bench` (`bash scripts/bench.sh`, which runs `bench/daemon_bench.py` against the release "
      "binaries). The bench plays the stand itself on a pty (`protocol/reference/dockproto.py`): HELLO answered "
      "with HELLO_REPLY, CAPABILITIES (yaw continuous 3 rad/s 12 rad/s², pitch −0.6…0.9 rad), BATTERY and "
      "EVENT docked, then FEEDBACK at 100 Hz from a thread. Figures are measured, never asserted.")
    w("")
    w(f"Reproduce: `{args.reproduce}`")
    w("")
    w("| machine | |")
    w("|---|---|")
    w(f"| CPU | {m['cpu']} |")
    w(f"| nproc | {m['nproc']} |")
    w(f"| load average at start (1/5/15 min) | {m['load']} |")
    w(f"| load average at end | {m.get('load_end', '?')} |")
    w(f"| kernel | {m['kernel']} |")
    w(f"| toolchain | {m['swift']}; Python {m['python']} (harness) |")
    w(f"| date | {m['date']} |")
    w(f"| commit | {m['commit']} |")
    w("")

    w("### Time to READY")
    w("")
    w("From `Popen` to the `READY=1` datagram on a `NOTIFY_SOCKET` the bench bound (READY is sent once the API "
      "socket is bound). No device configured.")
    w("")
    w("| start | runs | median ms | min ms | max ms | failed |")
    w("|---|---|---|---|---|---|")
    for key, label in (("ready", "`--no-hotplug`"), ("ready_hotplug", "hotplug on (udev startup scan)")):
        x = r[key]
        w(f"| {label} | {x['runs']} | {fmt(x['median'], 1)} | {fmt(x['min'], 1)} | {fmt(x['max'], 1)} | {x['failures']} |")
    w("")

    w("### CPU and RSS")
    w("")
    w("dockd's utime+stime delta over the window from `/proc/<pid>/stat` (100 % = one core) and the highest "
      "`VmRSS` sampled every 0.25 s.")
    w("")
    w("| state | window s | CPU % | RSS MiB | threads |")
    w("|---|---|---|---|---|")
    x = r["idle"]
    w(f"| idle, no stand | {x['seconds']:.1f} | {cpu_text(x)} | {x['rss']:.1f} | {x['threads']} |")
    x = r["idle_stand"]
    w(f"| one stand streaming FEEDBACK at 100 Hz ({x['feedback_rate']:.0f}/s achieved), no client | {x['seconds']:.1f} | {cpu_text(x)} | {x['rss']:.1f} | {x['threads']} |")
    x = r["latency"]
    w(f"| the same + one client sending `motion.velocity` ({x['n'] / x['seconds']:.0f}/s) | {x['seconds']:.1f} | {cpu_text(x)} | | |")
    x = r["fanout"]
    w(f"| the same + {x['subscribers']} subscribers to `motion` at 100 Hz | {x['seconds']:.1f} | {cpu_text(x)} | {x['rss']:.1f} | |")
    w("")

    x = r["latency"]
    w("### Command → frame latency")
    w("")
    w("`motion.velocity {yaw}` written to the API socket → the VELOCITY frame carrying that yaw (float32-exact) "
      "read on the pty master; one client holding the lease, a new value each sample, a random 0–10 ms pause "
      "before each so commands land at every phase of the 100 Hz feedback tick.")
    w("")
    w("| samples | p50 ms | p90 ms | p99 ms | max ms | min ms | reply p50 ms | reply p99 ms | frame after a FEEDBACK tick | dockd CPU % |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    w(f"| {x['matched']}/{x['n']} | {x['p50']:.3f} | {x['p90']:.3f} | {x['p99']:.3f} | {x['max']:.3f} | {x['min']:.3f} | "
      f"{x['reply_p50']:.3f} | {x['reply_p99']:.3f} | {x['after_tick']} | {x['cpu']:.1f} |")
    w("")
    w("\"reply\" is the JSON-RPC round trip of the same call. \"frame after a FEEDBACK tick\": samples in which the "
      "bench wrote a FEEDBACK frame between the command and the matching VELOCITY (the frame may then be the "
      f"tick's rather than the command's own). VELOCITY frames seen during the run: {x['velocity_frames_per_s']:.0f}/s "
      "(the controller also sends one per FEEDBACK while a velocity is set).")
    w("")

    w("### Requests/s")
    w("")
    w("`dockd.version` round trips, each client waiting for its reply before the next request (threads in "
      "one Python process); the stand is connected and streaming meanwhile.")
    w("")
    w("| clients | window s | requests | req/s | p50 ms | p99 ms | errors | dockd CPU % | harness CPU % |")
    w("|---|---|---|---|---|---|---|---|---|")
    for key in ("rps1", "rps8"):
        x = r[key]
        w(f"| {x['clients']} | {x['seconds']:.1f} | {x['requests']} | {x['rps']:.0f} | {fmt(x['p50'], 3)} | {fmt(x['p99'], 3)} | "
          f"{x['errors']} | {x['cpu']:.0f} | {x['harness_cpu']:.0f} |")
    w("")

    x = r["fanout"]
    w("### Fan-out")
    w("")
    w(f"1, then {x['subscribers']} connections `subscribe {{topics: [motion], motion_rate: 100}}`, the stand streaming "
      "FEEDBACK at 100 Hz; a separate Python process reads all of them in one thread. Latency: the FEEDBACK frame's write() on the pty → "
      "the `motion.state` carrying its `stand_time_us` read by the subscriber.")
    w("")
    w("| subscribers | window s | FEEDBACK/s sent | FEEDBACK gap p1 / p99 ms | notif/s per subscriber min / median / max | notif/s total | "
      "latency p50 ms | p99 ms | max ms | dropped (EOF) | still answering | dockd CPU % | harness CPU % |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for x in (r["fanout1"], r["fanout"]):
        w(f"| {x['subscribers']} | {x['seconds']:.1f} | {x['feedback_rate']:.1f} | {fmt(x['send_gap_p1'])} / {fmt(x['send_gap_p99'])} | {x['rate_min']:.1f} / {x['rate_median']:.1f} / "
          f"{x['rate_max']:.1f} | {x['total']:.0f} | {fmt(x['p50'], 3)} | {fmt(x['p99'], 3)} | {fmt(x['max'], 3)} | "
          f"{x['eof']} | {x['alive']}/{x['subscribers']} | {x['cpu']:.0f} | {x['harness_cpu']:.0f} |")
    w("")
    x = r["fanout"]
    if x["unmatched"] or x["dropped_log"]:
        w(f"{x['unmatched']} notifications carried a `stand_time_us` the bench did not send; dockd logged "
          f"{x['dropped_log']} dropped subscriber(s).")
        w("")
    worst = min((r["fanout1"], r["fanout"]), key=lambda y: y["rate_median"] / y["feedback_rate"])
    if worst["rate_median"] < 0.98 * worst["feedback_rate"]:
        w(f"Subscribers got fewer `motion.state` than FEEDBACK frames (down to {worst['rate_median']:.1f}/s against "
          f"{worst['feedback_rate']:.1f}/s with {worst['subscribers']} subscriber(s)): dockd's hub skips a `motion.state` that comes less than 0.95/motion_rate "
          "after the previous one by dockd's clock at processing time, so FEEDBACK frames handled in a burst "
          "(after a delay) are skipped, not queued, and so is any frame handled less than 9.5 ms after the last one "
          "published, for every subscriber at motion_rate 100: ordinary jitter is enough (see the FEEDBACK gaps: the "
          "bench's writes are paced by a Python thread, a stand on USB or Bluetooth jitters too).")
        w("")
    w("The harness and dockd share the machine's cores, and the machine may be busy with other work (see the load "
      "average above): latencies include scheduling delay and the Python reader, not only dockd.")
    return "\n".join(out)


def write_section(path, text, start=START_MARK, end=END_MARK, heading=None):
    """`text` between the markers `start` and `end` of the Markdown file at `path` (the other benches
    pass their own); a file without them gets the block at its end, under `heading` when given."""
    block = f"{start}\n{text}\n{end}"
    path = Path(path)
    if path.exists():
        old = path.read_text()
        if start in old and end in old:
            head, rest = old.split(start, 1)
            _, tail = rest.split(end, 1)
            new = head + block + tail
        else:
            new = old.rstrip("\n") + "\n\n" + (f"{heading}\n\n" if heading else "") + block + "\n"
    else:
        new = "# Benchmarks\n\nFigures from `make bench`; each section says how it was measured and how to reproduce it.\n\n" + block + "\n"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(new)
    tmp.replace(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory with the release dockd")
    ap.add_argument("--write", metavar="FILE", help="replace the daemon section of this Markdown file")
    ap.add_argument("--json", metavar="FILE", help="also write the raw figures as JSON")
    ap.add_argument("--samples", type=int, default=1000, help="command → frame samples (default 1000)")
    ap.add_argument("--ready-runs", type=int, default=10)
    ap.add_argument("--idle-seconds", type=float, default=5)
    ap.add_argument("--rps-seconds", type=float, default=3)
    ap.add_argument("--fanout-seconds", type=float, default=5)
    ap.add_argument("--subscribers", type=int, default=64)
    ap.add_argument("--reproduce", default="make bench", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not (Path(args.bin) / "dockd").exists():
        sys.exit(f"bench: no dockd in {args.bin}; build it with: swift build -c release")

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    sys.setswitchinterval(0.0005)  # the feedback and reader threads wake promptly
    m = machine()
    bench = Bench(args)
    t0 = time.monotonic()
    try:
        bench.run()
    finally:
        bench.cleanup()
    m["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text = report(bench.results, m, args)
    print(text)
    print(f"\nbench: daemon part took {time.monotonic() - t0:.0f} s", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": m, "results": bench.results}, indent=1, default=str))
    if args.write:
        write_section(args.write, text)
        print(f"bench: wrote the daemon section of {args.write}", file=sys.stderr)


if __name__ == "__main__":
    main()
