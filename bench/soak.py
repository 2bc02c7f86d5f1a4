"""make soak: live tracking through the real dockd for a long time (an hour by default).

dock-sim plays the stand on a pty and one dockd owns it for the whole soak; `dock-bench live
--socket` runs the tracking scenarios against that dockd one after the other, in a loop, with a new
seed each round. Every few seconds dockd's and dock-sim's resident memory, open fds, threads and CPU
are read from /proc into a CSV. At the end: the figures (Markdown, on stdout and in OUT/summary.md),
whether dockd stayed up, what its log says beyond info, and the command that reproduces the run.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))
from conftest import Client, wait_for  # noqa: E402  (the integration tests' client and helper)

ROOT = Path(__file__).resolve().parents[1]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class Sampler(threading.Thread):
    """Reads /proc for each named pid every `interval` s; rows: seconds since start, name, RSS MiB,
    fds, threads, CPU % of one core since the previous sample."""

    def __init__(self, pids, interval, csv_path):
        super().__init__(daemon=True)
        self.pids, self.interval = pids, interval
        self.rows = []
        self.stopping = threading.Event()
        self.csv = open(csv_path, "w")
        self.csv.write("seconds,process,rss_mib,fds,threads,cpu_percent\n")
        self.start_time = time.monotonic()

    @staticmethod
    def read(pid):
        status = {line.split(":")[0]: line.split()[1:] for line in open(f"/proc/{pid}/status")}
        # utime and stime are fields 14 and 15 of /proc/PID/stat; the name (field 2) may hold spaces.
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        return int(status["VmRSS"][0]) / 1024, len(os.listdir(f"/proc/{pid}/fd")), int(status["Threads"][0]), cpu

    def run(self):
        previous = {}
        while True:
            now = time.monotonic()
            for name, pid in self.pids.items():
                try:
                    rss, fds, threads, cpu = self.read(pid)
                except (FileNotFoundError, ProcessLookupError):
                    continue  # exited: the main loop notices and says so
                last = previous.get(name)
                percent = 100 * (cpu - last[1]) / (now - last[0]) if last else float("nan")
                previous[name] = (now, cpu)
                row = (now - self.start_time, name, rss, fds, threads, percent)
                self.rows.append(row)
                self.csv.write("%.1f,%s,%.2f,%d,%d,%.2f\n" % row)
            self.csv.flush()
            if self.stopping.wait(self.interval):
                return

    def stop(self):
        self.stopping.set()
        self.join()
        self.csv.close()


def summary_of(rows, name, after):
    """Start, end, max, and the RSS trend after `after` seconds (past the warm-up: the first round of
    scenarios), for one process. The trend is a least-squares slope, in MiB/h, over at least 10 min."""
    mine = [r for r in rows if r[1] == name]
    warm = [r for r in mine if r[0] >= after] or mine
    cpu = [r[5] for r in mine if r[5] == r[5]]
    trend = None
    if warm[-1][0] - warm[0][0] >= 600:
        trend = statistics.linear_regression([r[0] for r in warm], [r[2] for r in warm]).slope * 3600
    return {
        "rss": (mine[0][2], mine[-1][2], max(r[2] for r in mine), warm[0][2]),
        "trend": trend,
        "fds": (mine[0][3], mine[-1][3], max(r[3] for r in mine)),
        "threads": (mine[0][4], mine[-1][4], max(r[4] for r in mine)),
        "cpu": (statistics.mean(cpu) if cpu else float("nan"), max(cpu) if cpu else float("nan")),
        "samples": len(mine),
    }


def load_average():
    return open("/proc/loadavg").read().split()[0]


def accepting(path):
    try:
        Client(path).close()
        return True
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / ".build" / "release"))
    parser.add_argument("--seconds", type=float, default=3600)
    parser.add_argument("--interval", type=float, default=5, help="seconds between /proc samples")
    parser.add_argument("--scenarios", default=str(ROOT / "Benchmarks" / "Scenarios"))
    parser.add_argument("--out", default=str(ROOT / "out" / "soak"))
    args = parser.parse_args()
    bin_dir, out = Path(args.bin), Path(args.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    # dock-sim's base is still for the whole soak, so the hand-held scenario (whose base sways) is left out.
    scenarios = [p for p in sorted(Path(args.scenarios).glob("*.json")) if not json.loads(p.read_text()).get("handheld")]
    tmp = Path(tempfile.mkdtemp(prefix="dockd-soak-"))
    link, sock = tmp / "stand", tmp / "dockd.sock"
    (tmp / "dockd.conf").write_text(f'[daemon]\nsocket = "{sock}"\nsocket_group = ""\n\n[hotplug]\nenabled = false\n\n'
                                    f'[[device]]\npath = "{link}"\n')
    sim = subprocess.Popen([str(bin_dir / "dock-sim"), "--pty", "--link", str(link), "--seed", "1"],
                           stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=open(out / "dock-sim.log", "wb"))
    wait_for(link.exists, 5, "dock-sim's link")
    dockd_log = out / "dockd.log"
    dockd = subprocess.Popen([str(bin_dir / "dockd"), "--config", str(tmp / "dockd.conf")], stderr=open(dockd_log, "wb"))
    wait_for(lambda: accepting(sock), 10, "dockd's socket")
    sampler = Sampler({"dockd": dockd.pid, "dock-sim": sim.pid}, args.interval, out / "samples.csv")
    sampler.start()
    load_at_start = load_average()
    began = time.monotonic()
    runs, failures, first_round_end = [], [], None
    try:
        round_number = 0
        while time.monotonic() - began < args.seconds and dockd.poll() is None:
            round_number += 1
            for scenario in scenarios:
                if time.monotonic() - began >= args.seconds or dockd.poll() is not None:
                    break
                report = out / "runs" / f"{round_number:03d}-{scenario.stem}.json"
                run = subprocess.run([str(bin_dir / "dock-bench"), "live", str(scenario), "--socket", str(sock),
                                      "--seed", str(round_number), "--json", str(report)],
                                     capture_output=True, text=True)
                if run.returncode != 0 or not report.exists():
                    failures.append((scenario.stem, round_number, run.returncode, (run.stderr or run.stdout).strip()[-300:]))
                else:
                    runs.append(json.loads(report.read_text()))
            if first_round_end is None:
                first_round_end = time.monotonic() - sampler.start_time
        elapsed = time.monotonic() - began
        stats = None
        if dockd.poll() is None:
            c = Client(sock)
            stats = c.result("dockd.stats")
            c.close()
    finally:
        sampler.stop()
        # dockd first, and waited for: it stops the motors and tells the stand before dock-sim goes.
        for p in (dockd, sim):
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()

    log_lines = dockd_log.read_text(errors="replace").splitlines()
    notable = [line for line in log_lines if any(f" {level} " in line for level in ("warning", "error", "critical"))]
    lines = report_lines(args, sampler.rows, first_round_end or 0, runs, failures, elapsed, stats,
                         dockd.returncode, len(log_lines), notable, len(scenarios), (load_at_start, load_average()))
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    print(text)
    return 0 if stats is not None and not failures else 1


def report_lines(args, rows, warm, runs, failures, elapsed, stats, exit_code, log_count, notable, scenario_count, load):
    """The Markdown summary; `stats` is dockd.stats at the end (None: dockd was gone)."""
    lines = []
    add = lines.append
    add(f"Soak: {elapsed / 60:.1f} min of live tracking through one release dockd on one dock-sim (pty), "
        f"{len(runs) + len(failures)} `dock-bench live` runs ({scenario_count} scenarios in a loop, a new seed each round; "
        f"the hand-held one is left out: dock-sim's base stays still). /proc sampled every {args.interval:g} s "
        f"(`{Path(args.out) / 'samples.csv'}`). {os.cpu_count()} cores; load average (1 min) {load[0]} at the start, "
        f"{load[1]} at the end: other work on the machine shows there.")
    add("")
    add("| process | RSS start → end (max) MiB | RSS after the first round → end MiB | fds start → end (max) | threads start → end (max) | CPU mean (max) % of a core |")
    add("|---|---|---|---|---|---|")
    for name in ("dockd", "dock-sim"):
        s = summary_of(rows, name, warm)
        rss, fds, threads, cpu = s["rss"], s["fds"], s["threads"], s["cpu"]
        trend = "too short for a trend" if s["trend"] is None else f"trend {s['trend']:+.2f} MiB/h"
        add(f"| {name} | {rss[0]:.1f} → {rss[1]:.1f} ({rss[2]:.1f}) | {rss[3]:.1f} → {rss[1]:.1f} ({trend}) | "
            f"{fds[0]} → {fds[1]} ({fds[2]}) | {threads[0]} → {threads[1]} ({threads[2]}) | {cpu[0]:.1f} ({cpu[1]:.1f}) |")
    add("")
    add(f"dockd {'stayed up and answered dockd.stats at the end' if stats else f'**did not stay up** (exit code {exit_code})'}"
        + (f" ({stats['clients']} client, {stats['dropped_subscribers']} dropped subscribers)" if stats else "") + ". "
        f"Its log: {log_count} lines, {len(notable)} at warning or above"
        + (": " + "; ".join(sorted({n.split('[dockd]')[-1].strip() for n in notable})[:5]) if notable else "") + ".")
    if failures:
        add(f"Failed runs ({len(failures)}): " + "; ".join(f"{s} round {r}: exit {c}: {e}" for s, r, c, e in failures[:5]))
    add("")
    add("Tracking, live, per scenario (mean over the rounds; errors in % of the field of view):")
    add("")
    add("| scenario | runs | in frame % live (virtual) | RMS err % live (virtual) | P95 err % live (virtual) | switches live | frames refused | frames skipped |")
    add("|---|---|---|---|---|---|---|---|")
    for name in sorted({r["scenario"] for r in runs}):
        mine = [r for r in runs if r["scenario"] == name]

        def both(key):
            return f"{100 * statistics.mean(r['live'][key] for r in mine):.1f} ({100 * statistics.mean(r['virtual'][key] for r in mine):.1f})"
        refused = {}
        for r in mine:
            for code, n in r["refused"].items():
                refused[code] = refused.get(code, 0) + n
        sent = sum(r["frames_sent"] for r in mine)
        refusals = ", ".join(f"{n} × {code}" for code, n in sorted(refused.items())) or "none"
        add(f"| {name} | {len(mine)} | {both('in_frame')} | {both('rms_error')} | {both('p95_error')} | "
            f"{sum(r['live']['primary_switches'] for r in mine)} | {refusals} of {sent} | {sum(r['frames_skipped'] for r in mine)} |")
    add("")
    add(f"Reproduce: `make soak SOAK_SECONDS={args.seconds:g}` (or `python bench/soak.py --bin .build/release --seconds {args.seconds:g}`).")
    return lines


if __name__ == "__main__":
    sys.exit(main())
