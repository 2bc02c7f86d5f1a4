#!/usr/bin/env bash
# make demo: the simulated stand, the real dockd on it over a pty, and dockctl steering it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)
work=$(mktemp -d /tmp/dockd-demo.XXXXXX)
pids=()
cleanup() {
    local status=$?
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    # A failed demo says what dockd and the stand logged before its files go.
    if [ "$status" -ne 0 ]; then
        echo "== the demo failed (exit $status); dockd's log:"; tail -n 40 "$work/dockd.err" 2>/dev/null || true
        echo "== dock-sim's log:"; tail -n 15 "$work/sim.err" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

echo "== dock-sim: a simulated stand on a pty"
"$bin/dock-sim" --pty --link "$work/stand" --seed 1 > "$work/sim.out" 2> "$work/sim.err" &
pids+=($!)
for _ in $(seq 50); do [ -e "$work/stand" ] && break; sleep 0.1; done
echo "   $(head -1 "$work/sim.out")  (linked at $work/stand)"

echo "== dockd: owns the stand, serves $work/dockd.sock"
"$bin/dockd" --ignore-missing-config --config /nonexistent --device "$work/stand" \
    --socket "$work/dockd.sock" --socket-group "" 2> "$work/dockd.err" &
pids+=($!)
export DOCKD_SOCKET="$work/dockd.sock"
for _ in $(seq 50); do "$bin/dockctl" status 2>/dev/null | grep -q connected && break; sleep 0.1; done

echo "== dockctl status / list"
"$bin/dockctl" status
"$bin/dockctl" list
"$bin/dockctl" battery

echo "== watching motion while the stand plays animations and moves"
"$bin/dockctl" watch motion events --rate 4 --seconds 9 &
pids+=($!)
sleep 0.3
echo "-- animate wakeup";  "$bin/dockctl" animate wakeup --wait
echo "-- animate yes";     "$bin/dockctl" animate yes --wait
echo "-- orient yaw 0.8 rad, pitch 0.3 rad in 1.5 s"; "$bin/dockctl" orient --yaw 0.8 --pitch 0.3 --duration 1.5 --wait
echo "-- move yaw at -0.5 rad/s for 1 s"; "$bin/dockctl" move --yaw-rate=-0.5 --seconds 1
echo "-- animate no";      "$bin/dockctl" animate no --wait
echo "-- animate kapow";   "$bin/dockctl" animate kapow --wait
wait "${pids[2]}" 2>/dev/null || true

echo "== tracking: a simulated scene plays the camera app, sending what its detector sees"
echo "   (two people crossing; dock-bench live renders their boxes from where the stand points)"
"$bin/dockctl" watch tracking motion --rate 2 --seconds 18 &
pids+=($!)
mkdir -p out
"$bin/dock-bench" live --socket "$work/dockd.sock" Benchmarks/Scenarios/two-crossing.json --plot out/demo-tracking.svg
wait "${pids[3]}" 2>/dev/null || true
echo "   plot of the subject and the camera's aim: out/demo-tracking.svg"
echo "== the lost-subject policy and a sweep: the subject leaves for good; the app's policy searches 4 s"
echo "   around where it was lost, then goes home; then the app sweeps the stand once (tracking.phase events)"
"$bin/dockctl" watch events --seconds 27 &
pids+=($!)
"$bin/dock-bench" live --socket "$work/dockd.sock" Benchmarks/Scenarios/lost-and-sweep.json --plot out/demo-lost-and-sweep.svg
wait "${pids[4]}" 2>/dev/null || true
echo "   plot with the policy's phases and the sweep: out/demo-lost-and-sweep.svg"
bash scripts/demo-camera.sh "$work/dockd.sock"
echo "== dockd's log"
tail -n 8 "$work/dockd.err"
