#!/usr/bin/env bash
# make mot: runs dock-mot (the same tracker dockd uses, in pixel mode) on TUD-Campus's public
# detections and scores it with py-motmetrics (its own venv: motmetrics needs numpy < 2).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
sequence=../shared/data/mot/TUD-Campus
[ -f "$sequence/det.txt" ] || { echo "mot: no $sequence (the shared MOT data sits beside the repository)" >&2; exit 1; }
if [ ! -x .venv-mot/bin/python ] || ! .venv-mot/bin/python -c "import motmetrics" 2>/dev/null; then
    python3 -m venv .venv-mot
    .venv-mot/bin/pip install -q --disable-pip-version-check motmetrics==1.4.0 'numpy<2'
fi
swift build -c release --product dock-mot
mkdir -p .build/mot
.build/release/dock-mot --sequence "$sequence" --output .build/mot/tud-campus.txt
.venv-mot/bin/python scripts/mot_score.py .build/mot/tud-campus.txt
