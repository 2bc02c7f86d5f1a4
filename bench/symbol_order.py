#!/usr/bin/env python3
"""make symbol-order: the functions dockd runs, in the order it first runs them, for lld's
--symbol-ordering-file (Package.swift links dockd with bench/profiles/dockd.order).

Packed together, the code dockd runs fills fewer pages; the kernel maps 64 KiB around each page
fault, so code spread over the binary kept most of it resident (issue 26, BENCHMARKS.md). The
profile is api_bench's RSS scenario run under valgrind's callgrind: dockd started idle, then with
one stand streaming FEEDBACK at 100 Hz and a camera client sending tracking.observe at 30 Hz.
Names no longer in the binary are harmless (the link ignores them), so the file only needs
regenerating when much of the code that runs has changed.

    python3 bench/symbol_order.py --bin .build/release [--out bench/profiles/dockd.order]
"""
import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_bench  # noqa: E402
import daemon_bench as db  # noqa: E402

# Under valgrind dockd runs tens of times slower: the harness's waits are stretched this much.
SLOWDOWN = 12


def profiled_dockd(bin_dir, work):
    """A directory whose `dockd` runs the release dockd (without its debug info, which valgrind's
    reader refuses) under callgrind, writing work/callgrind.PID."""
    binary = work / "dockd.symbols"
    subprocess.run(["strip", "--strip-debug", "-o", str(binary), str(bin_dir / "dockd")], check=True)
    wrapper = work / "bin" / "dockd"
    wrapper.parent.mkdir()
    wrapper.write_text("#!/bin/sh\nexec valgrind --tool=callgrind --demangle=no --dump-instr=no --compress-strings=no "
                       f"--compress-pos=no --callgrind-out-file={work}/callgrind.%p {binary} \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper.parent, binary


def run_scenario(bin_dir):
    wait_for = db.wait_for
    db.wait_for = lambda predicate, timeout, what: wait_for(predicate, timeout * SLOWDOWN, what)
    wait_socket = db.Bench.wait_socket
    db.Bench.wait_socket = lambda self, p, timeout=10: wait_socket(self, p, timeout * SLOWDOWN)
    stop = db.Processes.stop
    db.Processes.stop = staticmethod(lambda p, timeout=5: stop(p, timeout * SLOWDOWN))  # callgrind writes at exit
    bench = api_bench.APIBench(argparse.Namespace(bin=str(bin_dir), tools="", idle_seconds=5, stand_seconds=8))
    try:
        bench.idle()
        stand = api_bench.ObservingStand(hz=100)
        try:
            d = bench.connected_dockd(stand, "stand")
            bench.stand_and_camera(d, stand)
            db.Processes.stop(d)
        finally:
            stand.close()
    finally:
        bench.cleanup()


def functions_run(profiles):
    """Function names in callgrind's outputs, first seen first (`'N` marks a recursion depth)."""
    names = {}
    for profile in profiles:
        for line in profile.read_text(errors="replace").splitlines():
            if line.startswith("fn="):
                names.setdefault(line[3:].split("'")[0], None)
    return list(names)


def defined_functions(binary):
    out = subprocess.run(["nm", "--defined-only", str(binary)], capture_output=True, text=True, check=True).stdout
    return {fields[2] for fields in (line.split() for line in out.splitlines()) if len(fields) == 3 and fields[1] in "tTwW"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="directory with the release dockd, not stripped")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "profiles" / "dockd.order"))
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("symbol_order: valgrind is needed (apt-get install valgrind)")
    work = Path(tempfile.mkdtemp(prefix="dockd-order."))
    try:
        bin_dir, binary = profiled_dockd(Path(args.bin), work)
        run_scenario(bin_dir)
        profiles = sorted(work.glob("callgrind.*"))
        if not profiles:
            sys.exit("symbol_order: callgrind wrote no profile")
        ours = defined_functions(binary)
        order = [name for name in functions_run(profiles) if name in ours]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    Path(args.out).write_text("".join(f"{name}\n" for name in order))
    print(f"symbol_order: {len(order)} functions into {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
