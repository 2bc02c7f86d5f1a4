#!/usr/bin/env python3
"""make bench, the issue-14 figures: dockd beside the machine's floor, in one run.

The floor is bench/floor_server.c (one epoll thread answering every NDJSON line with a fixed reply)
and the load is bench/loadgen.c (C threads, one connection each), so neither the server's nor the
harness's language is what limits a request figure. The stand is played on a pty by this process
(daemon_bench.FakeStand: 100 Hz FEEDBACK from a thread). Rows:

  * `dockd.version` round trips, one client, one request at a time: floor vs dockd (no stand);
  * the same with 4 clients keeping 32 requests in flight each;
  * dockd's CPU with one stand streaming FEEDBACK at 100 Hz and no client; + one camera client sending
    `tracking.observe` at 30 Hz (a face and a body); + 64 subscribers to `motion` at 100 Hz;
  * RSS with one stand; context switches per second of an idle dockd without a stand;
  * observation → the VELOCITY frame that answers it (tracking on, the subject off-centre);
  * time to READY;
  * with --deb (`make deb`'s package): its size and its installed size; with --before-deb too, the
    other build's package beside it;
  * with --before DIR (another release build, e.g. main's): idle, one stand and the camera client
    measured for both builds alternately, `--before-rounds` times each, in a before/after table
    (with --before-only, that table alone, printed: about 2.5 min a round with three windows a stand
    row, `--stand-windows`; the notes in BENCHMARKS.md before 2026-11-28 13:00 ran one).

CPU is CPU time: dockd's utime + stime from /proc over the window's wall time (100 % = one core),
so other processes on a loaded machine add nothing to it (though they may slow dockd's own work).
Wake-ups are context switches of all dockd's threads (voluntary + involuntary) per second.

Each request row runs floor and dockd alternately `--rounds` times and reports the medians.
Nothing is asserted; the Markdown goes to stdout and, with --write, between <!-- bench:floor:start -->
and <!-- bench:floor:end --> in BENCHMARKS.md.

    python3 bench/api_bench.py --bin .build/release --tools DIR_WITH_loadgen_AND_floor_server [--before DIR] [--write BENCHMARKS.md]
"""
import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daemon_bench as db  # noqa: E402

START_MARK = "<!-- bench:floor:start -->"
END_MARK = "<!-- bench:floor:end -->"
VERSION = '{"jsonrpc":"2.0","id":1,"method":"dockd.version"}'


def loadgen(tools, sock, mode, clients, depth, seconds, pid=0, request=None):
    argv = [str(tools / "loadgen"), str(sock), mode, str(clients), str(depth), str(seconds), str(pid)]
    if request:
        argv.append(request)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    if out.returncode != 0:
        raise RuntimeError(f"loadgen {mode} on {sock} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def private_mib(pid):
    """Memory only this process uses (USS: private clean + dirty pages), MiB; RSS also counts the
    pages of shared libraries it maps."""
    kb = 0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                kb += int(line.split()[1])
    return kb / 1024


def ctx_switches(pid):
    """{thread id: voluntary + involuntary context switches so far} of every thread of `pid`."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                counts[task] = sum(int(line.split()[1]) for line in f
                                   if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        except OSError:
            pass  # a thread that ended meanwhile
    return counts


def switches_between(before, after):
    """Context switches between two `ctx_switches` readings: threads alive at both, plus every switch
    of threads born since (a thread that ended meanwhile is not counted after its last reading)."""
    return sum(n - before.get(task, 0) for task, n in after.items())


class ObservingStand(db.FakeStand):
    """The bench stand, also stamping every VELOCITY frame read (for observation → VELOCITY)."""

    def __init__(self, hz=100):
        self.velocity_reads = []
        self.velocity_cond = threading.Condition()
        super().__init__(hz)

    def _handle(self, frame, stamp):
        if frame["type"] == "velocity":
            with self.velocity_cond:
                self.velocity_reads.append(stamp)
                self.velocity_cond.notify_all()
        super()._handle(frame, stamp)

    def next_velocity_after(self, t0, timeout):
        deadline = time.monotonic() + timeout
        with self.velocity_cond:
            while True:
                after = [t for t in self.velocity_reads[-50:] if t > t0]
                if after:
                    return after[0]
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.velocity_cond.wait(left)


def observation(t, x, y=0.55):
    """tracking.observe with a face and a body, the face's lower-left corner at (x, y) (lower-left origin)."""
    return {"observations": [{"kind": "face", "rect": {"x": x, "y": y, "width": 0.08, "height": 0.12}},
                             {"kind": "body", "rect": {"x": x - 0.04, "y": y - 0.45, "width": 0.16, "height": 0.6}}],
            "timestamp": t}


class Camera:
    """A camera-side client sending tracking.observe at `hz` from a thread. Without `stand`, its
    subject sweeps from 0.3 to 0.5 of the width every 2 s whatever the stand does (a camera that does
    not see the stand turn: dockd turns it at its limit the whole time). With `stand`, the camera is
    on the stand and its subject stands still in the room, `subject` rad (yaw, pitch) from where the
    stand starts: the boxes are projected through the stand's pose at each frame (dockd's default
    camera, 70° × 43°), with a detector's jitter of ±0.003 of the frame, so once the subject is
    framed the stand rests, as it would tracking a person sitting at a desk."""

    HALF_TAN = (math.tan(math.radians(35)), math.tan(math.radians(21.5)))

    def __init__(self, sock_path, hz, stand=None, subject=(0.2, 0.1), seed=1):
        self.client = db.Client(sock_path)
        self.hz = hz
        self.stand = stand
        # Placed from where the stand is when the client starts: another client may have left it
        # turns away on its continuous yaw, where the subject's absolute angle is nowhere in view.
        self.subject = subject if stand is None else (stand.positions["yaw"] + subject[0], stand.positions["pitch"] + subject[1])
        self.rng = random.Random(seed)
        self.stopping = threading.Event()
        self.sent = 0
        self.codes = {}  # error replies by code
        self.lock = threading.Lock()  # codes: written by the client's thread, read by the bench
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        period = 1 / self.hz
        k = 0
        while not self.stopping.is_set():
            if self.stand is None:
                reply = self.client.call("tracking.observe", observation(time.monotonic(), 0.3 + 0.2 * ((k % 60) / 60)))
            else:
                reply = self.client.call("tracking.observe", self.projected(time.monotonic()))
            self.sent += 1
            if "error" in reply:
                with self.lock:
                    code = reply["error"]["code"]
                    self.codes[code] = self.codes.get(code, 0) + 1
            k += 1
            self.stopping.wait(period)

    def mark(self):
        """The error replies so far, for `refused_since`."""
        with self.lock:
            return dict(self.codes)

    def refused_since(self, mark):
        """The error replies since `mark`: {"errors": how many, "codes": how many by code}."""
        with self.lock:
            codes = {c: n - mark.get(c, 0) for c, n in self.codes.items() if n > mark.get(c, 0)}
        return {"errors": sum(codes.values()), "codes": codes}

    def projected(self, t):
        """The subject's face (centre `subject`) and body as the camera on the stand sees them now."""
        yaw, pitch = self.stand.positions["yaw"], self.stand.positions["pitch"]
        jitter = lambda: self.rng.uniform(-0.003, 0.003)  # noqa: E731
        cx = 0.5 - math.tan(self.subject[0] - yaw) / (2 * self.HALF_TAN[0]) + jitter()
        cy = 0.5 + math.tan(self.subject[1] - pitch) / (2 * self.HALF_TAN[1]) + jitter()
        return {"observations": [{"kind": "face", "rect": {"x": cx - 0.04, "y": cy - 0.06, "width": 0.08, "height": 0.12}},
                                 {"kind": "body", "rect": {"x": cx - 0.08, "y": cy - 0.51, "width": 0.16, "height": 0.6}}],
                "timestamp": t}

    def stop(self):
        self.stopping.set()
        self.thread.join(5)
        self.client.close()


class APIBench:
    def __init__(self, args):
        self.args = args
        self.tools = Path(args.tools)
        self.base = db.Bench(argparse.Namespace(bin=args.bin))
        self.r = {}

    def floor(self):
        sock = self.base.tmp / "floor.sock"
        p = self.base.procs.start([str(self.tools / "floor_server"), str(sock)], stderr=subprocess.DEVNULL)

        def listening():
            if p.poll() is not None:
                raise RuntimeError(f"the floor server exited with {p.returncode}")
            try:
                db.Client(sock, timeout=1).close()
                return True
            except OSError:
                return False
        db.wait_for(listening, 5, "the floor server")
        return p, sock

    def requests(self):
        a = self.args
        rows = {"rt": {"floor": [], "dockd": []}, "pipe": {"floor": [], "dockd": []}}
        d = self.base.dockd("requests")
        self.base.wait_socket(d)
        f, fsock = self.floor()
        for _ in range(a.rounds):
            for name, sock, pid in (("floor", fsock, f.pid), ("dockd", d.sock_path, d.pid)):
                rows["rt"][name].append(loadgen(self.tools, sock, "rt", 1, 0, a.seconds, pid))
                rows["pipe"][name].append(loadgen(self.tools, sock, "pipe", 4, 32, a.seconds, pid))
        db.Processes.stop(f)
        db.Processes.stop(d)
        self.r["requests"] = rows

    def idle(self, bin_dir=None):
        d = self.base.dockd("idle", bin_dir=bin_dir)
        self.base.wait_socket(d)
        time.sleep(1)
        c0 = ctx_switches(d.pid)
        with db.Window(d.pid) as w:
            w.run_for(self.args.idle_seconds)
        idle = {"cpu": w.cpu, "rss": w.rss_mib, "seconds": w.seconds, "threads": db.thread_count(d.pid),
                "switches": switches_between(c0, ctx_switches(d.pid)) / w.seconds}
        db.Processes.stop(d)
        return idle

    def windows(self, pid, counts=dict):
        """dockd's CPU and wake-ups over `--stand-windows` windows of `--stand-seconds` each, back to
        back: the row is the median window by CPU (the lower middle one of an even number), and `runs`
        each window's CPU, so a row shows how much the machine moves it (the same binary gave
        1.08-1.77 % in six windows minutes apart).
        `counts` gives the counters whose rate per second a window reports too (read at its start
        and end)."""
        rows = []
        for _ in range(self.args.stand_windows):
            before, c0 = counts(), ctx_switches(pid)
            with db.Window(pid) as w:
                w.run_for(self.args.stand_seconds)
            after = counts()
            rows.append({"cpu": w.cpu, "run_cpu": w.run_cpu, "rss": w.rss_mib, "seconds": w.seconds,
                         "switches": switches_between(c0, ctx_switches(pid)) / w.seconds,
                         **{k: (after[k] - before[k]) / w.seconds for k in after}})
        middle = sorted(rows, key=lambda x: x["run_cpu"])[(len(rows) - 1) // 2]
        return {**middle, "runs": [x["run_cpu"] for x in rows],
                "rss": max((x["rss"] for x in rows if x["rss"] is not None), default=None)}

    def stand_and_camera(self, d, stand):
        """dockd's CPU, RSS and wake-ups with the stand streaming and no client, then with a camera
        client at 30 Hz (each the median window of `windows`)."""
        alone = self.windows(d.pid, lambda: {"feedback": stand.feedback_count})
        alone.update(threads=db.thread_count(d.pid), private=private_mib(d.pid))
        camera = Camera(d.sock_path, 30)
        time.sleep(1)
        refusals = camera.mark()
        with_camera = self.windows(d.pid, lambda: {"rate": camera.sent})
        with_camera.update(camera.refused_since(refusals))
        camera.stop()
        return alone, with_camera

    def still_subject(self, name, bin_dir=None):
        """The camera client on the stand, its subject still, with a dockd and a stand of its own (the
        sweeping client before it leaves its stand turns away): the window opens once the stand has
        come to rest on the subject (no VELOCITY frame for 1 s, within 10 s)."""
        return self.on_own_stand(name, self.still_window, bin_dir)

    def on_own_stand(self, name, measure, bin_dir=None):
        """`measure(d, stand)` with a dockd and a stand of its own, both stopped after."""
        stand = ObservingStand(hz=100)
        try:
            d = self.connected_dockd(stand, name, bin_dir)
            result = measure(d, stand)
            db.Processes.stop(d)
        finally:
            stand.close()
        return result

    def still_window(self, d, stand):
        camera = Camera(d.sock_path, 30, stand=stand)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            frames = stand.velocity_frames
            time.sleep(1)
            if stand.velocity_frames == frames:
                break
        refusals = camera.mark()
        still = self.windows(d.pid, lambda: {"rate": camera.sent, "velocity": stand.velocity_frames})
        still.update(camera.refused_since(refusals), aim=(stand.positions["yaw"], stand.positions["pitch"]))
        camera.stop()
        return still

    def connected_dockd(self, stand, name, bin_dir=None):
        d = self.base.dockd(name, device=stand.path, bin_dir=bin_dir)
        self.base.wait_socket(d)
        c = db.Client(d.sock_path)
        db.wait_for(lambda: any(s["state"] == "connected" for s in c.result("stands.list")), 10, "the bench stand")
        c.close()
        time.sleep(1)
        return d

    def before_and_after(self):
        """Both builds alternately, each with a fresh dockd and stand: idle, one stand, the camera client."""
        rows = {"before": [], "after": []}
        for _ in range(self.args.before_rounds):
            for name, bin_dir in (("before", Path(self.args.before)), ("after", None)):
                idle = self.idle(bin_dir)
                alone, with_camera = self.on_own_stand(f"stand-{name}", self.stand_and_camera, bin_dir)
                still = self.still_subject(f"still-{name}", bin_dir)
                rows[name].append({"idle": idle, "stand": alone, "camera": with_camera, "still": still})
        self.r["before_after"] = rows

    def stand(self):
        a = self.args
        stand = ObservingStand(hz=100)
        try:
            d = self.connected_dockd(stand, "stand")
            self.r["stand"], self.r["camera"] = self.stand_and_camera(d, stand)
            self.r["subs"] = loadgen(self.tools, d.sock_path, "subs", 64, 0, a.stand_seconds, d.pid,
                                     '{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"topics":["motion"],"motion_rate":100}}')
            self.r["subs"]["rss"] = db.status_kb(d.pid, "VmRSS") / 1024
            db.Processes.stop(d)
        finally:
            stand.close()
        self.r["camera"]["still"] = self.still_subject("still")
        self.r["observe"] = self.observe_latency("observe")

    def observe_latency(self, name):
        """tracking.observe written into dockd's socket → the first VELOCITY frame read after it on the
        pty, skipping samples in which a FEEDBACK was written in between (the frame may then be that
        tick's). The harness's own wake-up (a Python thread reading the pty) is included. With a
        dockd and a stand of its own, so that it does not depend on where the rows before left it."""
        return self.on_own_stand(name, self.observe_samples)

    def observe_samples(self, d, stand):
        c = db.Client(d.sock_path)
        rng = random.Random(1)
        lat, reply_lat, skipped, missed, errors = [], [], 0, 0, 0
        for k in range(self.args.observe_samples):
            time.sleep(0.035 + rng.uniform(0, 0.01))  # ~25 Hz, every phase of the 100 Hz tick
            # A face swaying across the middle of the frame, about 1.6 s each way: each observation asks
            # a new VELOCITY. (A subject left of the middle at a fixed height, as before, ran the stand
            # to its pitch limit and its top yaw speed within seconds; from then on its VELOCITY did
            # not change, an observation asked none, and most samples waited for a FEEDBACK's.)
            x = 0.46 + 0.15 * math.sin(2 * math.pi * k / 80)
            request_id = c.next_id
            c.next_id += 1
            line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tracking.observe",
                               "params": observation(time.monotonic(), x, 0.44)}).encode() + b"\n"
            c.sock.sendall(line)
            t0 = db.now_ns()  # the observation is in dockd's socket
            hit = stand.next_velocity_after(t0, 0.05)
            reply = c.reply(request_id)
            t_reply = db.now_ns()
            if "error" in reply:
                errors += 1
                continue
            reply_lat.append(t_reply - t0)
            if hit is None:
                missed += 1
            elif stand.feedback_between(t0, hit):
                skipped += 1
            else:
                lat.append(hit - t0)
        c.close()
        return {"n": self.args.observe_samples, "samples": len(lat), "skipped": skipped, "missed": missed, "errors": errors,
                "p50": db.ms(db.pct(lat, 50)) if lat else None, "p90": db.ms(db.pct(lat, 90)) if lat else None,
                "p99": db.ms(db.pct(lat, 99)) if lat else None,
                "reply_p50": db.ms(db.pct(reply_lat, 50)) if reply_lat else None}

    def run(self):
        print("api bench: requests vs the floor ...", file=sys.stderr)
        self.requests()
        print("api bench: idle ...", file=sys.stderr)
        self.r["idle"] = self.idle()
        print("api bench: one stand, a camera client, 64 subscribers, observation → VELOCITY ...", file=sys.stderr)
        self.stand()
        print("api bench: time to READY ...", file=sys.stderr)
        self.r["ready"] = self.base.ready(self.args.ready_runs, hotplug=False)
        if self.args.before:
            print(f"api bench: before ({self.args.before}) and after, alternately ...", file=sys.stderr)
            self.before_and_after()
        if self.args.deb:
            self.r["package"] = package_figures(self.args.deb)

    def cleanup(self):
        self.base.cleanup()


def package_figures(deb):
    """The .deb's size and its Installed-Size (dpkg's KiB, the sum of its files' `du -k`), in MB
    (10^6 bytes; installed: 1000 KiB)."""
    installed = subprocess.run(["dpkg-deb", "--field", str(deb), "Installed-Size"], capture_output=True, text=True, check=True)
    return {"deb": Path(deb).stat().st_size / 1e6, "installed": int(installed.stdout) / 1000}


def med(rows, key):
    return statistics.median(x[key] for x in rows)


def errors_text(row):
    """A camera client's error replies over its windows, by code: what dockd refused and why (API.md's codes)."""
    codes = row.get("codes") or {}
    by_code = ", ".join(f"{code}: {n}" for code, n in sorted(codes.items()))
    return f"{row['errors']} errors in its windows" + (f" ({by_code})" if by_code else "")


def stand_cpu_text(row):
    """A stand row's CPU (its median window), with the range of its windows."""
    runs = row.get("runs") or []
    spread = f" [{min(runs):.2f}–{max(runs):.2f}]" if len(runs) > 1 else ""
    return db.cpu_text(row) + spread


def camera_met(row):
    """A camera client's row meets the 1 % goal only if dockd took its observations: refused ones cost
    less than tracking them, so the figure would not be of the work the row names."""
    if row["errors"]:
        return "**not measured** (observations refused)"
    return "yes" if row["run_cpu"] <= 1 else "**no**"


def report(r, m, args):
    out = []
    w = out.append
    w(f"Measured {m['date']} at {m['commit']}, release build, {m['nproc']} cores ({m['cpu']}), load average "
      f"{m['load']} at the start and {m['load_end']} at the end. Command: `{args.reproduce}`.")
    w("")
    w("Request rows: `bench/loadgen` (C, a thread and a connection per client) against `bench/floor_server` (C, one "
      "epoll thread answering every line with a fixed reply, writing one reply batch per read) and against dockd "
      f"(no stand), alternately, {args.rounds} rounds of {args.seconds:g} s; medians. Server CPU is its /proc utime+stime "
      "over the window (100 % = one core). Stand rows: dockd with one stand played on a pty by the harness "
      f"(100 Hz FEEDBACK); the CPU, wake-ups and rates of a stand row are its median window of {args.stand_windows}, "
      f"each {args.stand_seconds:g} s, back to back (the range of the windows' schedstat CPU in brackets). CPU is CPU "
      "time: dockd's utime + stime from /proc over the window's wall time, so the machine's other load adds nothing "
      "to it (though it may slow dockd's own work). Wake-ups: context switches of all dockd's threads per second.")
    w("")
    w("| figure | floor | goal | dockd | dockd / floor | met |")
    w("|---|---|---|---|---|---|")
    q = r["requests"]
    f_rt, d_rt = med(q["rt"]["floor"], "per_second"), med(q["rt"]["dockd"], "per_second")
    f_cpu, d_cpu = med(q["rt"]["floor"], "target_cpu"), med(q["rt"]["dockd"], "target_cpu")
    w(f"| `dockd.version` round trips, 1 client, one at a time | {f_rt:,.0f} req/s (p50 {med(q['rt']['floor'], 'p50_us'):.1f} µs, "
      f"server CPU {f_cpu:.0f} %) | ≥ 0.5× floor | {d_rt:,.0f} req/s (p50 {med(q['rt']['dockd'], 'p50_us'):.1f} µs, "
      f"CPU {d_cpu:.0f} %, {1e4 * d_cpu / d_rt:.1f} µs CPU/request) | {d_rt / f_rt:.2f}× | {'yes' if d_rt >= 0.5 * f_rt else '**no**'} |")
    f_p, d_p = med(q["pipe"]["floor"], "per_second"), med(q["pipe"]["dockd"], "per_second")
    d_pcpu = med(q["pipe"]["dockd"], "target_cpu")
    w(f"| the same, 4 clients × 32 in flight | {f_p:,.0f} req/s (CPU {med(q['pipe']['floor'], 'target_cpu'):.0f} %) | ≥ 0.2× floor "
      f"| {d_p:,.0f} req/s (CPU {d_pcpu:.0f} %, {1e4 * d_pcpu / d_p:.1f} µs CPU/request) | {d_p / f_p:.2f}× | "
      f"{'yes' if d_p >= 0.2 * f_p else '**no**'} |")
    s = r["stand"]
    w(f"| one stand streaming FEEDBACK at 100 Hz ({s['feedback']:.0f}/s), no client | | ≤ 0.5 % | {stand_cpu_text(s)} % "
      f"({s['switches']:.0f} wake-ups/s) | | {'yes' if s['run_cpu'] <= 0.5 else '**no**'} |")
    c = r["camera"]
    w(f"| + one camera client, `tracking.observe` at 30 Hz ({c['rate']:.1f}/s, a face and a body, {errors_text(c)}) | | ≤ 1 % "
      f"| {stand_cpu_text(c)} % ({c['switches']:.0f} wake-ups/s) | | {camera_met(c)} |")
    v = c["still"]
    w(f"| + one camera client on the stand, its subject still (boxes projected through the stand's pose; window once at rest, "
      f"{v['rate']:.1f}/s, {errors_text(v)}, {v['velocity']:.1f} VELOCITY frames/s) | | ≤ 1 % "
      f"| {stand_cpu_text(v)} % ({v['switches']:.0f} wake-ups/s) | | {camera_met(v)} |")
    x = r["subs"]
    per = x["per_second"] / max(1, x["clients"])
    w(f"| 64 subscribers to `motion` at 100 Hz ({per:.1f} notif/s each, {x['per_second']:,.0f}/s in all; loadgen reads) | | ≤ 5 % "
      f"| {x['target_cpu']:.1f} % ({1e4 * x['target_cpu'] / max(1, x['per_second']):.1f} µs per notification sent) | | "
      f"{'yes' if x['target_cpu'] <= 5 else '**no**'} |")
    rss = max(s["rss"], c["rss"] or 0)
    w(f"| RSS with one stand (the most sampled, before subscribers) | | ≤ 16 MiB | {rss:.1f} MiB ({r['subs']['rss']:.1f} with 64 subscribers; "
      f"{s['private']:.1f} MiB of it private to dockd, the rest shared libraries' pages) "
      f"| | {'yes' if rss <= 16 else '**no**'} |")
    i = r["idle"]
    w(f"| idle, no stand: context switches | | ≤ 1/s | {i['switches']:.2f}/s (CPU {db.cpu_text(i)} %, RSS {i['rss']:.1f} MiB, "
      f"{i['threads']} threads) | | {'yes' if i['switches'] <= 1 else '**no**'} |")
    o = r["observe"]
    w(f"| observation → the VELOCITY frame that answers it | | p50 ≤ 0.2 ms | p50 {db.fmt(o['p50'], 3)} ms, p90 {db.fmt(o['p90'], 3)}, "
      f"p99 {db.fmt(o['p99'], 3)} ({o['samples']} samples; {o['skipped']} with a FEEDBACK between left out, {o['missed']} without "
      f"a frame within 50 ms, {o['errors']} refused; reply p50 {db.fmt(o['reply_p50'], 3)} ms) | | "
      f"{'yes' if o['p50'] is not None and o['p50'] <= 0.2 else '**no**'} |")
    y = r["ready"]
    w(f"| time to READY (`--no-hotplug`, {y['ok']}/{y['runs']} runs) | | ≤ 50 ms | median {db.fmt(y['median'], 1)} ms "
      f"(min {db.fmt(y['min'], 1)}, max {db.fmt(y['max'], 1)}) | | {'yes' if y['median'] is not None and y['median'] <= 50 else '**no**'} |")
    if "package" in r:
        p = r["package"]
        w(f"| the Debian package (`make deb`; {Path(args.deb).name}) | | ≤ 10 MB | {p['deb']:.1f} MB | | {'yes' if p['deb'] <= 10 else '**no**'} |")
        w(f"| installed (its Installed-Size) | | ≤ 40 MB | {p['installed']:.1f} MB | | {'yes' if p['installed'] <= 40 else '**no**'} |")
    w("")
    w("Raw request runs (req/s, floor / dockd, per round): round trips "
      + ", ".join(f"{a['per_second']:,.0f} / {b['per_second']:,.0f}" for a, b in zip(q["rt"]["floor"], q["rt"]["dockd"]))
      + "; pipelined " + ", ".join(f"{a['per_second']:,.0f} / {b['per_second']:,.0f}" for a, b in zip(q["pipe"]["floor"], q["pipe"]["dockd"]))
      + f". The load generator's own CPU: {med(q['rt']['dockd'], 'loadgen_cpu'):.0f} % (round trips), "
      f"{med(q['pipe']['dockd'], 'loadgen_cpu'):.0f} % (pipelined), of the machine's {m['nproc'] * 100} %.")
    if "before_after" in r:
        out += ["", *before_after_table(r["before_after"], args)]
    return "\n".join(out)


def before_after_table(rows, args):
    """The --before build beside this one, round by round (each cell: every round's figure, in order)."""
    def cells(name, part, key, digits):
        return " / ".join(f"{x[part][key]:.{digits}f}" for x in rows[name])
    out = [f"Before (`{args.before}`) and after (`{args.bin}`), measured alternately in this run, "
           f"{args.before_rounds} rounds each (figures per round, in order):", "",
           "| figure | goal | before | after |", "|---|---|---|---|"]
    for label, goal, part, key, digits in (
            ("CPU %, one stand streaming FEEDBACK at 100 Hz, no client", "≤ 0.5", "stand", "cpu", 2),
            ("CPU %, + one camera client at 30 Hz", "≤ 1", "camera", "cpu", 2),
            ("CPU %, + the camera client on the stand, its subject still", "≤ 1", "still", "cpu", 2),
            ("the same three by schedstat (no clock-tick rounding): one stand, no client", "≤ 0.5", "stand", "run_cpu", 3),
            ("+ one camera client at 30 Hz", "≤ 1", "camera", "run_cpu", 3),
            ("+ the camera client, its subject still", "≤ 1", "still", "run_cpu", 3),
            ("wake-ups/s, one stand, no client", "", "stand", "switches", 0),
            ("wake-ups/s, + the camera client", "", "camera", "switches", 0),
            ("wake-ups/s, + the camera client, its subject still", "", "still", "switches", 0),
            ("observations refused in its windows, + the camera client", "0", "camera", "errors", 0),
            ("the same, its subject still", "0", "still", "errors", 0),
            ("RSS MiB, idle (no stand)", "", "idle", "rss", 1),
            ("RSS MiB, one stand", "≤ 16", "stand", "rss", 1),
            ("wake-ups/s, idle (no stand)", "≤ 1", "idle", "switches", 2)):
        out.append(f"| {label} | {goal} | {cells('before', part, key, digits)} | {cells('after', part, key, digits)} |")
    if args.deb and args.before_deb:
        before, after = package_figures(args.before_deb), package_figures(args.deb)
        out.append(f"| the Debian package, MB (`{args.before_deb}`, `{args.deb}`) | ≤ 10 | {before['deb']:.1f} | {after['deb']:.1f} |")
        out.append(f"| installed, MB (Installed-Size) | ≤ 40 | {before['installed']:.1f} | {after['installed']:.1f} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory with the release dockd")
    ap.add_argument("--tools", required=True, help="directory with loadgen and floor_server")
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--idle-seconds", type=float, default=20)
    ap.add_argument("--stand-seconds", type=float, default=15, help="each stand row's window, s")
    ap.add_argument("--stand-windows", type=int, default=3, help="windows a stand row is measured over (its median shown, with their range)")
    ap.add_argument("--observe-samples", type=int, default=400)
    ap.add_argument("--ready-runs", type=int, default=10)
    ap.add_argument("--before", metavar="DIR", help="another build's release directory to measure beside this one")
    ap.add_argument("--before-rounds", type=int, default=2)
    ap.add_argument("--before-only", action="store_true",
                    help="measure only the --before build beside this one (idle, one stand, the camera client) and print that table")
    ap.add_argument("--deb", metavar="FILE", help="the package make deb built, for its sizes")
    ap.add_argument("--before-deb", metavar="FILE", help="another build's package, beside --deb's in the before/after table")
    ap.add_argument("--write", metavar="FILE")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--reproduce", default="make bench", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stand_windows < 1:
        ap.error("--stand-windows: at least 1")
    if args.before_only and not args.before:
        ap.error("--before-only needs --before DIR")
    sys.setswitchinterval(0.0005)
    m = db.machine()
    bench = APIBench(args)
    if args.before_only:
        try:
            bench.before_and_after()
        finally:
            bench.cleanup()
        print("\n".join(before_after_table(bench.r["before_after"], args)))
        return
    try:
        bench.run()
    finally:
        bench.cleanup()
    m["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text = report(bench.r, m, args)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": m, "results": bench.r}, indent=1, default=str))
    if args.write:
        db.write_section(args.write, text, START_MARK, END_MARK, heading="## dockd beside the floor (`make bench`)")
        print(f"api bench: wrote the section of {args.write}", file=sys.stderr)


if __name__ == "__main__":
    main()
