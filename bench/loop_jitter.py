#!/usr/bin/env python3
"""make bench, control-loop part: how steady dockd's control loop stays while clients abuse the API.

The bench plays the stand on a pty (daemon_bench.FakeStand: 100 Hz FEEDBACK, written by a thread
and stamped when write() returns) and keeps dockd in velocity mode, its yaw always ramping (the
stand's acceleration limit: RAMPING_YAW), so that dockd answers every FEEDBACK with a new VELOCITY. For each load it measures, on the stand's side of the pty:

  * response: FEEDBACK written -> the next VELOCITY read (dockd's whole control step plus the pty);
  * command interval: between consecutive VELOCITY frames (100 Hz nominal: 10 ms);
  * VELOCITY per FEEDBACK (1.0 when no step is skipped or merged), dockd's CPU.

Loads, each for --seconds after a 1 s warm-up: none; 1000 idle clients connected; one client
flooding `tracking.observe` at ~1 kHz; 64 subscribers to `motion` at 100 Hz (read by a child
process); a subscriber that never reads plus a client sending 10 MB lines; all of them together.
Nothing is asserted: the figures go to stdout and, with --write, between <!-- bench:jitter:start -->
and <!-- bench:jitter:end --> in BENCHMARKS.md.

    python3 bench/loop_jitter.py --bin "$(swift build -c release --show-bin-path)" [--write BENCHMARKS.md]
"""
import argparse
import datetime
import json
import multiprocessing
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daemon_bench as db  # noqa: E402

START_MARK = "<!-- bench:jitter:start -->"
END_MARK = "<!-- bench:jitter:end -->"


# dockd writes a VELOCITY equal to the last one only every 50 ms (PROTOCOL.md §3.3). A yaw that
# accelerates at 0.5 rad/s² never reaches the ±0.2 rad/s VelocityKeeper asks before the sign turns
# (0.2 s later), so every control step's VELOCITY is a new one and each FEEDBACK is answered.
RAMPING_YAW = {**db.YAW_CAPS, "max_accel": 0.5}


class TimedStand(db.FakeStand):
    """The bench stand, also stamping every VELOCITY frame it reads."""

    def __init__(self, hz=100):
        self.velocity_times = deque(maxlen=100_000)
        super().__init__(hz, axes=(RAMPING_YAW, db.PITCH_CAPS))

    def _handle(self, frame, stamp):
        if frame["type"] == "velocity":
            self.velocity_times.append(stamp)
        super()._handle(frame, stamp)


class Load:
    """Something abusing dockd's API from threads of this process (or a child), until stopped."""

    def __init__(self, sock_path, pid):
        self.sock_path = sock_path
        self.pid = pid
        self.stopping = threading.Event()
        self.threads = []
        self.sockets = []
        self.children = []
        self.requests = 0

    def idle_clients(self, n):
        for _ in range(n):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(self.sock_path))
            self.sockets.append(s)

    def observation_flood(self):
        def flood():
            c = db.Client(self.sock_path)
            frame = (b'{"jsonrpc":"2.0","id":1,"method":"tracking.observe","params":{"observations":'
                     b'[{"kind":"face","rect":{"x":0.4,"y":0.4,"width":0.1,"height":0.1}}]}}\n')
            while not self.stopping.is_set():
                c.sock.sendall(frame)
                c.read_message()
                self.requests += 1
                time.sleep(0.001)
            c.close()
        self._thread(flood)

    def subscribers(self, n, seconds):
        parent_end, child_end = multiprocessing.Pipe(duplex=False)
        child = multiprocessing.get_context("fork").Process(
            target=db._fanout_reader, args=(self.sock_path, self.pid, n, seconds, child_end), daemon=True)
        child.start()
        self.children.append(child)

    def never_reads_and_huge_lines(self):
        stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(str(self.sock_path))
        stuck.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"topics":["motion"],"motion_rate":100}}\n')
        self.sockets.append(stuck)

        def huge():
            line = b'{"jsonrpc":"2.0","id":1,"method":"dockd.version","params":{"pad":"' + b"x" * (10 << 20) + b'"}}\n'
            while not self.stopping.is_set():
                try:
                    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                        s.settimeout(5)
                        s.connect(str(self.sock_path))
                        s.sendall(line)
                        s.recv(4096)
                        self.requests += 1
                except OSError:
                    time.sleep(0.05)  # dockd closes after the error: expected
        self._thread(huge)

    def loadgen(self, *args):
        """bench/loadgen (C) for the load's duration: its output's line count becomes the requests."""
        tools = os.environ.get("DOCKD_BENCH_TOOLS")
        if not tools:
            raise RuntimeError("set DOCKD_BENCH_TOOLS (or --tools) to the directory with bench/loadgen")

        def run():
            out = subprocess.run([str(Path(tools) / "loadgen"), str(self.sock_path), *map(str, args)],
                                 capture_output=True, text=True)
            try:
                self.requests += json.loads(out.stdout)["lines"]
            except ValueError:
                self.requests = f"loadgen failed: {out.stderr.strip()}"
        self._thread(run)

    def _thread(self, target):
        t = threading.Thread(target=target, daemon=True)
        t.start()
        self.threads.append(t)

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(10)
        for s in self.sockets:
            s.close()
        for child in self.children:
            child.join(15)
            if child.is_alive():
                child.kill()


LOADS = [
    ("none", lambda load, s: None),
    ("1000 idle clients", lambda load, s: load.idle_clients(1000)),
    ("tracking.observe flood (~1 kHz)", lambda load, s: load.observation_flood()),
    ("64 subscribers, motion at 100 Hz", lambda load, s: load.subscribers(64, s)),
    ("a subscriber that never reads + 10 MB lines", lambda load, s: load.never_reads_and_huge_lines()),
    ("10 000 pipelined requests at a time (`dockd.version`, loadgen burst)", lambda load, s: load.loadgen("burst", 1, 10000, s)),
    ("200 subscribers, motion at 100 Hz (loadgen)",
     lambda load, s: load.loadgen("subs", 200, 0, s, 0,
                                  '{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"topics":["motion"],"motion_rate":100}}')),
    ("all of the above", lambda load, s: (load.idle_clients(1000), load.observation_flood(), load.subscribers(64, s),
                                          load.never_reads_and_huge_lines())),
]


def _run_load(sock_path, pid, index, seconds, conn):
    """In a forked child, so the load's Python work does not hold this process's GIL and delay the
    stand's FEEDBACK thread: starts load `index`, keeps it up for `seconds`, reports its requests."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))  # 1000 idle clients and more
    load = Load(sock_path, pid)
    try:
        LOADS[index][1](load, seconds)
        time.sleep(seconds)
        load.stop()
        conn.send(load.requests)
    except Exception as e:  # noqa: BLE001 -- reported in the table instead of the figures
        load.stop()
        conn.send(f"load failed: {e!r}")
    finally:
        conn.close()


def measure(stand, dockd, keeper, index, seconds):
    name = LOADS[index][0]
    parent_end, child_end = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(
        target=_run_load, args=(dockd.sock_path, dockd.pid, index, seconds + 1.5, child_end))  # it forks the subscribers' reader
    child.start()
    child_end.close()
    time.sleep(1)  # warm-up: connections made, subscribers reading
    t0 = db.now_ns()
    with db.Window(dockd.pid) as w:
        w.run_for(seconds)
    t1 = db.now_ns()
    reader = db.Client(dockd.sock_path)
    rtt = reader.result("stand.get")["counters"]["round_trip_ms"]
    reader.close()
    requests = parent_end.recv() if parent_end.poll(60) else None
    child.join(15)
    if child.is_alive():
        child.kill()
    feedback = [t for t in list(stand.feedback_times) if t0 <= t <= t1]
    velocity = [t for t in list(stand.velocity_times) if t0 <= t <= t1]
    intervals = [b - a for a, b in zip(velocity, velocity[1:])]
    response, j = [], 0
    for f in feedback:  # each FEEDBACK -> the first VELOCITY read after it
        while j < len(velocity) and velocity[j] <= f:
            j += 1
        if j < len(velocity):
            response.append(velocity[j] - f)
    return {"load": name, "seconds": w.seconds, "cpu": w.cpu, "rss": w.rss_mib, "feedback": len(feedback),
            "velocity": len(velocity), "ratio": len(velocity) / max(1, len(feedback)),
            "resp": [db.ms(db.pct(response, p)) for p in (50, 99)] + [db.ms(max(response))] if response else None,
            "interval": [db.ms(db.pct(intervals, p)) for p in (1, 50, 99)] + [db.ms(max(intervals))] if intervals else None,
            "requests": requests, "keeper_errors": keeper.errors, "rtt": rtt}


class VelocityKeeper:
    """Renews `motion.velocity` every 0.2 s (the deadman is 0.5 s) so dockd stays in velocity mode."""

    def __init__(self, sock_path):
        self.client = db.Client(sock_path)
        self.stopping = threading.Event()
        self.errors = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        sign = 1
        while not self.stopping.is_set():
            try:
                self.client.result("motion.velocity", {"yaw": 0.2 * sign})
            except Exception:  # noqa: BLE001 -- counted and reported
                self.errors += 1
            sign = -sign
            time.sleep(0.2)

    def stop(self):
        self.stopping.set()
        self.thread.join(5)
        self.client.close()


def report(rows, args, load_avg):
    out = []
    w = out.append
    w(f"Measured {datetime.date.today()} at {db.sh('git', 'rev-parse', '--short', 'HEAD') or '?'}, release build, "
      f"{os.cpu_count()} cores, load average {load_avg[0]} at the start and {load_avg[1]} at the end.")
    w(f"Command: `{args.reproduce}`.")
    w("")
    w("dockd in velocity mode on a 100 Hz stand played on a pty; every figure is read on the stand's side. "
      "*Response*: FEEDBACK written → the next VELOCITY read. *Interval*: between VELOCITY frames (10 ms nominal). "
      "*Link round trip*: dockd's own smoothed estimate at the end of the window (`stand.get` "
      "`counters.round_trip_ms`: a frame with an ACK request (twice a second on a steady link, every 50 ms while its timing changes), timed until its ACK is handled; the "
      "stand here answers at once, so this is dockd's loop delay).")
    w("")
    w("| load | response p50 / p99 / max ms | interval p1 / p50 / p99 / max ms | VELOCITY per FEEDBACK | link round trip dockd measured, ms | dockd CPU % | RSS MiB | load requests |")
    w("|---|---|---|---|---|---|---|---|")
    for r in rows:
        resp = " / ".join(db.fmt(x) for x in r["resp"]) if r["resp"] else "–"
        iv = " / ".join(db.fmt(x) for x in r["interval"]) if r["interval"] else "–"
        w(f"| {r['load']} | {resp} | {iv} | {r['ratio']:.2f} | {db.fmt(r['rtt'], 1)} | {r['cpu']:.0f} | {db.fmt(r['rss'], 1)} | {r['requests'] if r['requests'] is not None else '?'} |")
        if isinstance(r["requests"], str):
            raise SystemExit(f"jitter: the load '{r['load']}' did not run: {r['requests']}")
    w("")
    errors = sum(r["keeper_errors"] for r in rows)
    w(f"The client keeping velocity mode alive got {errors} error(s) over the run. The harness (this Python "
      "process, the stand's thread, the load) shares the cores with dockd, so the figures include its own "
      "scheduling; an idle machine gives tighter tails.")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory with the release dockd")
    ap.add_argument("--seconds", type=float, default=8, help="measuring time per load (default 8)")
    ap.add_argument("--write", metavar="FILE", help="replace the jitter section of this Markdown file")
    ap.add_argument("--tools", help="directory with bench/loadgen (built by scripts/bench.sh)")
    ap.add_argument("--reproduce", default="python3 bench/loop_jitter.py --bin .build/release", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.tools:
        os.environ["DOCKD_BENCH_TOOLS"] = str(Path(args.tools).resolve())
    sys.setswitchinterval(0.0005)
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    bench = db.Bench(argparse.Namespace(bin=args.bin))
    stand = TimedStand(hz=100)
    rows = []
    try:
        dockd = bench.dockd("jitter", device=stand.path)
        bench.wait_socket(dockd)
        c = db.Client(dockd.sock_path)
        db.wait_for(lambda: any(s["state"] == "connected" for s in c.result("stands.list")), 10, "the bench stand")
        c.close()
        keeper = VelocityKeeper(dockd.sock_path)
        for index, (name, _) in enumerate(LOADS):
            print(f"jitter: {name} ...", file=sys.stderr)
            rows.append(measure(stand, dockd, keeper, index, args.seconds))
        keeper.stop()
    finally:
        stand.close()
        bench.cleanup()
    load_end = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text = report(rows, args, (load_start, load_end))
    print(text)
    if args.write:
        db.write_section(args.write, text, START_MARK, END_MARK, heading="## Control-loop timing under API abuse (`make bench`)")
        print(f"jitter: wrote the section of {args.write}", file=sys.stderr)


if __name__ == "__main__":
    main()
