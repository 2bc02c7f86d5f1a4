#!/usr/bin/env bash
# make demo's camera part: dock-camera runs the real HOG people detector on a virtual pan/tilt camera
# inside Debian's vtest.avi (people walking), feeds the real dockd, and dockd turns the simulated
# stand, which turns the virtual camera. Ends with annotated frames in out/demo-camera.png.
# Usage: scripts/demo-camera.sh [DOCKD_SOCKET]   (without one, it starts dock-sim and dockd itself)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${DEMO_CAMERA_SECONDS:-25}
video=/usr/share/doc/opencv-doc/examples/data/vtest.avi
[ -f "$video" ] || { echo "demo-camera: $video is missing (make deps installs opencv-doc)" >&2; exit 1; }
pids=()
work=$(mktemp -d /tmp/dock-camera-demo.XXXXXX)
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
bin=$(swift build --show-bin-path)
socket=${1:-}
if [ -z "$socket" ]; then
    "$bin/dock-sim" --pty --link "$work/stand" --seed 1 > "$work/sim.out" 2> "$work/sim.err" &
    pids+=($!)
    for _ in $(seq 50); do [ -e "$work/stand" ] && break; sleep 0.1; done
    "$bin/dockd" --ignore-missing-config --config /nonexistent --device "$work/stand" \
        --socket "$work/dockd.sock" --socket-group "" 2> "$work/dockd.err" &
    pids+=($!)
    socket="$work/dockd.sock"
    for _ in $(seq 100); do DOCKD_SOCKET="$socket" "$bin/dockctl" status 2>/dev/null | grep -q connected && break; sleep 0.1; done
fi
export DOCKD_SOCKET="$socket"
echo "== dock-camera: HOG people detector on a virtual pan/tilt camera inside vtest.avi, ${seconds} s"
echo "   (the view is cut out of the video where the simulated stand points; dockd steers the stand)"
"$bin/dockctl" watch tracking motion --rate 1 --seconds "$seconds" &
pids+=($!)
mkdir -p out
/usr/bin/python3 camera/dock-camera --source "virtual:$video" --detector hog --fps 15 \
    --seconds "$seconds" --preview out/demo-camera.png
wait "${pids[-1]}" 2>/dev/null || true
echo "   annotated frames (detections, dockd's tracked subjects with the selected one in green, the aim):"
echo "   out/demo-camera.png"
