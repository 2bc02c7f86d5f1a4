#!/usr/bin/env python3
"""The request rows of api_bench.py for several dockd builds, measured alternately in one run.

`api_bench.py --before` compares two builds on its stand rows only; this compares them on requests:
`dockd.version` round trips (1 client) and pipelined (4 clients × 32 in flight), bench/loadgen against
each build's dockd and against bench/floor_server, in turn, `--rounds` times. The builds take the
first place in turn from round to round, so none is always measured right after the floor. Medians
and every round's pipelined req/s go to stdout; the load average is taken at the start and the end.

    python3 bench/api_builds.py --tools DIR_WITH_loadgen_AND_floor_server NAME=RELEASE_DIR NAME=RELEASE_DIR ...
"""
import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_bench  # noqa: E402
import daemon_bench as db  # noqa: E402


def load():
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tools", required=True, help="directory with loadgen and floor_server")
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("builds", nargs="+", metavar="NAME=DIR", help="a name for a build and its release directory")
    args = ap.parse_args()
    builds = [tuple(b.split("=", 1)) for b in args.builds]
    # APIBench supplies the floor server; its --bin is not used, every dockd names its build's directory.
    bench = api_bench.APIBench(argparse.Namespace(tools=args.tools, bin=builds[0][1]))
    rows = {name: {"rt": [], "pipe": []} for name in ["floor"] + [n for n, _ in builds]}
    load_start = load()
    try:
        servers = [("floor", *bench.floor())]
        for name, bin_dir in builds:
            d = bench.base.dockd(name, bin_dir=Path(bin_dir))
            bench.base.wait_socket(d)
            servers.append((name, d, d.sock_path))
        for k in range(args.rounds):
            turn = servers[:1] + servers[1:][k % len(builds):] + servers[1:][:k % len(builds)]
            for name, p, sock in turn:
                for mode, clients, depth in (("rt", 1, 0), ("pipe", 4, 32)):
                    rows[name][mode].append(api_bench.loadgen(bench.tools, sock, mode, clients, depth, args.seconds, p.pid))
            print(f"round {k + 1}: " + ", ".join(f"{n} {rows[n]['pipe'][-1]['per_second'] / 1e6:.2f} M" for n in rows),
                  file=sys.stderr)
    finally:
        bench.cleanup()

    def med(name, mode, key):
        return statistics.median(r[key] for r in rows[name][mode])

    print(f"{args.rounds} rounds of {args.seconds:g} s, load average {load_start} at the start, {load()} at the end")
    print()
    print("| server | round trips: req/s | CPU per request, p50 | 4 × 32 in flight: req/s | CPU per request (server busy) |")
    print("|---|---|---|---|---|")
    for name in rows:
        rt_rate, pipe_rate = med(name, "rt", "per_second"), med(name, "pipe", "per_second")
        rt_cpu, pipe_cpu = med(name, "rt", "target_cpu"), med(name, "pipe", "target_cpu")
        print(f"| {name} | {rt_rate:,.0f} | {rt_cpu / 100 / rt_rate * 1e6:.1f} µs, {med(name, 'rt', 'p50_us'):.1f} µs "
              f"| {pipe_rate:,.0f} | {pipe_cpu / 100 / pipe_rate * 1e6:.2f} µs ({pipe_cpu:.0f} %) |")
    print()
    for name in rows:
        print(f"{name}, pipelined per round: " + ", ".join(f"{r['per_second'] / 1e6:.2f}" for r in rows[name]["pipe"]) + " M req/s")


if __name__ == "__main__":
    main()
