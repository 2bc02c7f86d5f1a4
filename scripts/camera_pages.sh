#!/usr/bin/env bash
# dock-camera(1) and dock-camera's bash, zsh and fish completions, from its argparse parser
# (camera/dock_camera/arguments.py, which needs no OpenCV): argparse-manpage and shtab, from PyPI
# (requirements-test.txt, in .venv). Called by scripts/man.sh:
#   scripts/camera_pages.sh OUT DATE   → OUT/dock-camera.1, OUT/completions/{dock-camera.bash,_dock-camera,dock-camera.fish}
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
venv=${VENV:-.venv}
export PYTHONPATH=camera SOURCE_DATE_EPOCH=$(date -u -d "$2" +%s)  # the page's date: the release's, not the build's
mkdir -p "$out/completions"
"$venv/bin/argparse-manpage" --module dock_camera.arguments --function parser --prog dock-camera \
    --manual-section 1 --manual-title "dockd manual" --project-name dockd --author "the dockd authors" \
    --description "$("$venv/bin/python" -c 'from dock_camera.arguments import DESCRIPTION; print(DESCRIPTION)')" \
    --output "$out/dock-camera.1"
"$venv/bin/shtab" --shell bash --error-unimportable dock_camera.arguments.parser > "$out/completions/dock-camera.bash"
"$venv/bin/shtab" --shell zsh --error-unimportable dock_camera.arguments.parser > "$out/completions/_dock-camera"
"$venv/bin/shtab" --shell fish --error-unimportable dock_camera.arguments.parser > "$out/completions/dock-camera.fish"
