#!/usr/bin/env bash
# make bench: measures the release binaries and writes the figures into BENCHMARKS.md, each part
# between its own markers (the daemon's: <!-- bench:daemon:start --> ... <!-- bench:daemon:end -->).
# Prints the same Markdown tables on stdout. Takes about ten minutes; nothing is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
bin=$(swift build -c release --show-bin-path)
if [ ! -x "$bin/dockd" ]; then
    echo "bench: no release dockd in $bin; build it first: swift build -c release (make bench does)" >&2
    exit 1
fi
# The daemon's figures are of dockd as the package installs it: the Swift runtime linked in (a plain
# `swift build -c release` links it to the toolchain's shared runtime, whose pages count in its RSS).
swift build -c release --static-swift-stdlib --product dockd
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
# The floor server and the load generator (C): what the API figures are compared with and driven by.
tools=.build/bench-tools
mkdir -p "$tools"
cc -O2 -Wall -o "$tools/floor_server" bench/floor_server.c
cc -O2 -Wall -pthread -o "$tools/loadgen" bench/loadgen.c

echo "== dockd beside the floor: requests, CPU per stand/client/subscriber, RSS, wake-ups, observation -> VELOCITY, the package" >&2
# BENCH_BEFORE=DIR (another build's release directory, e.g. main's) adds a before/after table;
# BENCH_BEFORE_DEB=FILE (that build's package) adds its sizes to it. The package's: make deb's.
version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/DockVersion/DockVersion.swift)
deb=out/dockd_${version}_$(dpkg --print-architecture).deb
[ -f "$deb" ] || deb=
# Each stand row is three windows of 15 s (api_bench's --stand-windows); the before/after rounds
# (idle, one stand, two camera clients, per build and round) take up to twelve minutes more.
api_seconds=480
[ -n "${BENCH_BEFORE:-}" ] && api_seconds=1200
timeout --kill-after=10 "$api_seconds" "$py" bench/api_bench.py --bin "$bin" --tools "$tools" --write BENCHMARKS.md \
    ${BENCH_BEFORE:+--before "$BENCH_BEFORE"} ${deb:+--deb "$deb"} ${BENCH_BEFORE_DEB:+--before-deb "$BENCH_BEFORE_DEB"} \
    --reproduce "${BENCH_BEFORE:+BENCH_BEFORE=$BENCH_BEFORE }${BENCH_BEFORE_DEB:+BENCH_BEFORE_DEB=$BENCH_BEFORE_DEB }make bench   # or: python3 bench/api_bench.py --bin .build/release --tools .build/bench-tools${BENCH_BEFORE:+ --before $BENCH_BEFORE}${deb:+ --deb $deb}${BENCH_BEFORE_DEB:+ --before-deb $BENCH_BEFORE_DEB}"

echo "== dockd: time to READY, CPU/RSS, command -> frame latency, requests/s, fan-out" >&2
timeout --kill-after=10 300 "$py" bench/daemon_bench.py --bin "$bin" --write BENCHMARKS.md \
    --reproduce "make bench   # or: swift build -c release && bash scripts/bench.sh"

echo "== dockd: control-loop timing while clients abuse the API" >&2
timeout --kill-after=10 400 "$py" bench/loop_jitter.py --bin "$bin" --tools "$tools" --write BENCHMARKS.md \
    --reproduce "make bench   # or: python3 bench/loop_jitter.py --bin .build/release --tools .build/bench-tools"

echo "== dock-bench: the wire codec and the controller on the simulated stand, in virtual time" >&2
core=$( {
    echo "Measured $(date -u +%F) at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), release build."
    echo "Commands: \`dock-bench codec\`, \`dock-bench closed-loop --seconds 600 --seed 1\`."
    echo
    "$bin/dock-bench" codec
    echo
    "$bin/dock-bench" closed-loop --seconds 600 --seed 1
} )
echo "$core"
"$py" scripts/replace_section.py BENCHMARKS.md core <<<"$core"

echo "== dock-bench scenario: auto-tracking in the scene simulator (ours, naive, oracle)" >&2
bash scripts/bench-tracking.sh
