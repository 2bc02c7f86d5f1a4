"""make faults: the real dockd against the real dock-sim, abused on purpose. Prints Markdown.

1. Unplug/replug N times mid-motion (dock-sim closes its pty and comes back on a new one): every
   time dockd must report the loss, the stand must have stopped (its first FEEDBACK after the
   replug is at rest) and dockd must reconnect; dockd's open fds and RSS are sampled throughout.
2. Corrupted bytes (1 % and 10 % of the stand's traffic), a stalled axis, and a stand that goes
   silent: dockd keeps serving, counts what it dropped, and reports what happened.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))
from conftest import Client, wait_for  # noqa: E402  (the integration tests' client and helper)


def proc_stats(pid):
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    rss = next(int(line.split()[1]) for line in open(f"/proc/{pid}/status") if line.startswith("VmRSS:"))
    return fds, rss / 1024


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round((len(values) - 1) * p)))] if values else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(Path(__file__).resolve().parents[1] / ".build" / "debug"))
    parser.add_argument("--cycles", type=int, default=1000)
    args = parser.parse_args()
    bin_dir = Path(args.bin)
    tmp = Path(tempfile.mkdtemp(prefix="dockd-faults-"))
    link, sock = tmp / "stand", tmp / "d.sock"
    sim = subprocess.Popen([str(bin_dir / "dock-sim"), "--pty", "--link", str(link), "--seed", "5"],
                           stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(link.exists, 5, "dock-sim")
    dockd = subprocess.Popen([str(bin_dir / "dockd"), "--ignore-missing-config", "--config", str(tmp / "none"),
                              "--device", str(link), "--socket", str(sock), "--socket-group", "", "--no-hotplug"],
                             stderr=subprocess.DEVNULL)

    def sim_command(line):
        sim.stdin.write(line.encode() + b"\n")
        sim.stdin.flush()

    try:
        wait_for(sock.exists, 10, "dockd's socket")
        c = Client(sock)
        wait_for(lambda: any(s["state"] == "connected" for s in c.result("stands.list")), 10, "the stand")
        c.result("subscribe", {"topics": ["stands", "motion"], "motion_rate": 100})
        start_fds, start_rss = proc_stats(dockd.pid)
        samples, reconnects, stopped, lost = [], [], 0, 0
        for i in range(args.cycles):
            c.result("motion.velocity", {"yaw": 0.8 if i % 2 else -0.8})
            time.sleep(0.05)
            unplugged = time.monotonic()
            sim_command("unplug 0.1")
            c.wait_notification(lambda m: m.get("method") == "stand.disconnected", timeout=5)
            c.notifications.clear()
            c.wait_notification(lambda m: m.get("method") == "stand.connected", timeout=15)
            reconnects.append(time.monotonic() - unplugged)
            first = c.wait_notification(lambda m: m.get("method") == "motion.state", timeout=5)["params"]
            if abs(first["velocities"]["yaw"]) < 0.05:
                stopped += 1
            c.notifications.clear()
            if i % 50 == 0 or i == args.cycles - 1:
                samples.append((i, *proc_stats(dockd.pid)))
        end_fds, end_rss = proc_stats(dockd.pid)
        print(f"### Unplug/replug mid-motion, {args.cycles} cycles\n")
        print("| cycles | loss reported | stand at rest after replug | reconnect p50 / p99 / max s | dockd fds start → end | RSS MiB start → end (max) |")
        print("|---|---|---|---|---|---|")
        print(f"| {args.cycles} | {len(reconnects)} | {stopped} | {pct(reconnects, .5):.2f} / {pct(reconnects, .99):.2f} / {max(reconnects):.2f} "
              f"| {start_fds} → {end_fds} | {start_rss:.1f} → {end_rss:.1f} ({max(s[2] for s in samples):.1f}) |\n")

        print("### Corrupted, stalled and silent stand\n")
        print("| fault | dockd still serving | stand state after | frames dropped as damaged | reported |")
        print("|---|---|---|---|---|")
        for fraction in (0.01, 0.10):
            before = c.result("stand.get")["counters"]
            sim_command(f"corrupt {fraction} 5")
            for _ in range(25):
                c.call("motion.velocity", {"yaw": 0.2})
                time.sleep(0.2)
            time.sleep(1.5)
            after = c.result("stand.get")
            dropped = sum(after["counters"]["errors"].values()) - sum(before["errors"].values())
            state = wait_for(lambda: c.result("stand.get")["state"] == "connected" and "connected", 15, "a connected stand")
            print(f"| {fraction:.0%} of bytes corrupted for 5 s | yes | {state} | {dropped} | decoder error counters |")
        c.notifications.clear()
        c.result("subscribe", {"topics": ["logs", "events"]})
        sim_command("stall pitch 1.5")
        fault = c.wait_notification(lambda m: m.get("method") == "stand.fault" and "stall" in m["params"]["text"], timeout=5)
        print(f"| pitch stalled 1.5 s | yes | connected | 0 | stand.fault \"{fault['params']['text']}\" |")
        c.notifications.clear()
        sim_command("silent 2")
        gone = c.wait_notification(lambda m: m.get("method") == "stand.disconnected", timeout=5)["params"]["reason"]
        c.wait_notification(lambda m: m.get("method") == "stand.connected", timeout=15)
        print(f"| stand silent 2 s | yes | reconnected | — | stand.disconnected \"{gone}\" |")
        c.close()
    finally:
        for p in (dockd, sim):
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
